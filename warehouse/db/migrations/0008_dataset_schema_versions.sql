-- Dataset schemas (seed 002 "Updatable Datasets"): the current schema is the SYSTEM property
-- `schema`; every compatible update adds a version here, so the history is kept.
create table lineage.dataset_schema_versions (
    entity_key      text not null,                  -- the dataset's MetadataEntity.render()
    namespace       text not null,
    version         integer not null check (version > 0),
    schema          jsonb not null,
    created_at      timestamptz not null default clock_timestamp(),
    created_by      text not null,
    primary key (entity_key, version)
);
create index dataset_schema_versions_by_namespace on lineage.dataset_schema_versions (namespace);

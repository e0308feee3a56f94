-- Entity keys and grant keys are computed once, in the core (lineage.metadata_entity,
-- lineage.authorization.grant_key), and stored with each row when it is written; SQL and dbt
-- read the stored values and never re-render them. Rows written before this migration (and
-- rows a bulk merge just inserted) are filled by warehouse.entity_keys in the same transaction.
alter table lineage.datasets
    add column entity_key text unique,      -- namespace=ns,dataset=name (or stream=name)
    add column entity jsonb;                -- the key=value pairs, in order
alter table lineage.programs
    add column entity_key text unique,      -- namespace=ns,application=app,type=t,program=p
    add column entity jsonb,
    add column application_key text,        -- namespace=ns,application=app
    add column application_entity jsonb;
alter table lineage.metadata
    add column grant_key text;              -- the dataset, stream or program a READ grant on which shows the row

-- What the fill step after each bulk insert looks for: few rows each time, found without a scan.
create index datasets_without_key on lineage.datasets (dataset_key) where entity_key is null;
create index programs_without_key on lineage.programs (program_key) where entity_key is null;
-- The search index refresh finds an application's programs by the application's key.
create index programs_by_application_key on lineage.programs (application_key);

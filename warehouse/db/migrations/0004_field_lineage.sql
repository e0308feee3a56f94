-- Field-level lineage (seed 004). Storage grows with what is distinct: an operation set that
-- the next run of the same pipeline records again is stored once (by fingerprint), its
-- per-field paths once, and each run adds one small row per destination.
create table lineage.field_operation_sets (
    fingerprint             text primary key,           -- sha256 of operations, inputs, outputs, sources
    destination_namespace   text not null,
    destination_type        text not null,
    destination             text not null,
    operations              jsonb not null,             -- the checked operations, in topological order
    descriptions            jsonb not null,             -- operation id -> latest description
    described_at            timestamptz not null,       -- event time of those descriptions
    first_seen_at           timestamptz not null default now()
);

create table lineage.field_paths (
    set_fingerprint     text not null references lineage.field_operation_sets (fingerprint),
    field               text not null,
    path_fingerprint    text not null,                  -- identical paths of different sets share it
    path                jsonb not null,                 -- FieldPath.to_dict(): operations, origin, sources
    primary key (set_fingerprint, field)
);

-- Which destination fields each source field feeds (impact, FLL-1).
create table lineage.field_path_sources (
    source_namespace    text not null,
    source_type         text not null,
    source              text not null,
    source_field        text not null,
    set_fingerprint     text not null,
    field               text not null,
    primary key (source_namespace, source_type, source, source_field, set_fingerprint, field)
);

-- One row per run and destination: which operation set it recorded.
create table lineage.field_lineage_runs (
    dataset_key         bigint not null references lineage.datasets (dataset_key),
    run_key             bigint not null references lineage.runs (run_key),
    set_fingerprint     text not null references lineage.field_operation_sets (fingerprint),
    recorded_at         timestamptz not null,
    primary key (dataset_key, set_fingerprint, run_key)
);
create index field_lineage_runs_by_run on lineage.field_lineage_runs (run_key);

alter table lineage.pending_events add column processed_at timestamptz;
create index pending_field_operations on lineage.pending_events (event_time)
    where kind = 'field_operations' and processed_at is null;

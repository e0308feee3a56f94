-- Foundation: namespaces, runs, dataset accesses, events kept for later stages, the
-- compaction ledger (batches, file manifest, event ids) and the quarantine.
-- Every entity key starts with the namespace (seed 003). Never edit an applied migration:
-- add a new numbered file instead (the migrator refuses a changed checksum).

create schema if not exists lineage;

create table lineage.namespaces (
    namespace      text primary key,
    created_at     timestamptz not null default now()
);
insert into lineage.namespaces (namespace) values ('default');

create table lineage.compaction_batches (
    batch_id            text primary key,
    dag_run_id          text,
    interval_end        timestamptz,
    started_at          timestamptz not null,
    finished_at         timestamptz not null default now(),
    files               integer not null,
    events_read         bigint not null,
    events_compacted    bigint not null,
    duplicates          bigint not null,
    quarantined         bigint not null,
    runs_touched        bigint not null,
    accesses_added      bigint not null
);

create table lineage.compacted_files (
    file_path       text primary key,
    batch_id        text not null references lineage.compaction_batches (batch_id),
    size_bytes      bigint not null,
    lines           bigint not null,
    compacted_at    timestamptz not null default now()
);

create table lineage.event_ids (
    namespace       text not null,
    event_id        text not null,
    event_time      timestamptz not null,
    batch_id        text not null,
    primary key (namespace, event_id)
);
create index event_ids_event_time on lineage.event_ids (event_time);

create table lineage.runs (
    namespace       text not null,
    application     text not null,
    program_type    text not null,
    program         text not null,
    run_id          text not null,
    started_at      timestamptz,
    stopped_at      timestamptz,
    status          text not null check (status in ('running', 'completed', 'failed', 'killed')),
    first_batch_id  text not null,
    last_batch_id   text not null,
    primary key (namespace, application, program_type, program, run_id)
);
create index runs_window on lineage.runs (namespace, started_at, stopped_at);

create table lineage.dataset_accesses (
    namespace           text not null,
    dataset_type        text not null check (dataset_type in ('dataset', 'stream')),
    dataset             text not null,
    application         text not null,
    program_type        text not null,
    program             text not null,
    run_id              text not null,
    access              text not null check (access in ('read', 'write', 'read_write', 'unknown')),
    component           text not null default '',
    accessed_at         timestamptz not null,
    run_namespace       text not null,
    batch_id            text not null,
    primary key (namespace, dataset_type, dataset, application, program_type, program, run_id, access, component)
);
create index dataset_accesses_run on lineage.dataset_accesses
    (run_namespace, application, program_type, program, run_id);
create index dataset_accesses_batch on lineage.dataset_accesses (batch_id);

-- Field operations and metadata changes, kept whole until their stages compact them.
create table lineage.pending_events (
    namespace       text not null,
    event_id        text not null,
    kind            text not null check (kind in ('field_operations', 'metadata_change')),
    event_time      timestamptz not null,
    application     text not null,
    program_type    text not null,
    program         text not null,
    run_id          text not null,
    payload         jsonb not null,
    batch_id        text not null,
    primary key (namespace, event_id)
);
create index pending_events_kind on lineage.pending_events (kind, event_time);

create table lineage.quarantine (
    quarantine_id   bigserial primary key,
    batch_id        text not null,
    source_file     text not null,
    line_number     integer not null,
    reason          text not null,
    raw_text        text not null,
    quarantined_at  timestamptz not null default now(),
    unique (source_file, line_number)
);
create index quarantine_batch on lineage.quarantine (batch_id);

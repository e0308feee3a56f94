-- The blast radius of a bad dataset (issue 33): a dataset marked bad over a time range (what its
-- writes in that range produced), by a person through the API (`POST .../incidents`). The blast
-- radius walks run-level lineage downstream from those writes.
create table lineage.dataset_incidents (
    incident_id     bigint generated always as identity primary key,
    namespace       text not null,
    dataset_type    text not null check (dataset_type in ('dataset', 'stream')),
    dataset         text not null,
    bad_from        timestamptz not null,
    bad_until       timestamptz not null check (bad_until > bad_from),
    reason          text not null,
    source          text not null default 'api',
    created_by      text not null,
    created_at      timestamptz not null default now()
);
create index dataset_incidents_by_dataset on lineage.dataset_incidents (namespace, dataset_type, dataset);

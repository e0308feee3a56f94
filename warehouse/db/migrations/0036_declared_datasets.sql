-- Datasets declared without a run (issue 30: an OpenLineage DatasetEvent creates or updates a
-- dataset, its schema and facets): its schema change waits for the metadata stage like every
-- other, with no run to name as the updater.
alter table lineage.pending_events
    alter column application drop not null,
    alter column program_type drop not null,
    alter column program drop not null,
    alter column run_id drop not null;

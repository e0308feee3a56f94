-- OpenLineage out (issue 34): each OpenLineage RunEvent the warehouse took, kept as it came, so
-- an export gives it back verbatim (every facet, custom ones included). Filled by the
-- compaction's merge from the staged envelopes (lineage.openlineage.mapping.kept_verbatim), once
-- per event content (the envelope's id); runs compacted before this migration have none and are
-- exported as the warehouse renders runs of its own client.
create table lineage.openlineage_events (
    event_id        text primary key,           -- the envelope's content id ('ol-' + sha256)
    run_key         bigint not null references lineage.runs (run_key),
    event_time      timestamptz not null,
    namespaces      text[] not null,            -- the warehouse namespaces the event touches
    event           jsonb not null,
    batch_id        text not null
);
-- The export reads a window in time order; a run's events by run.
create index openlineage_events_by_time on lineage.openlineage_events (event_time);
create index openlineage_events_by_run on lineage.openlineage_events (run_key);

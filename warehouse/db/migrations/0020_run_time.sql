-- A run's time (issue 28): its start, or else its earliest event. A run known only from its end
-- (OpenLineage COMPLETE or FAIL without START) has no start, and every windowed answer compared
-- the start only, so such a run was in no window. started_at keeps its meaning (the START
-- event's time); first_event_at is the earliest time of any event of the run, kept by the
-- compaction's merge; run_at is the one expression every window rule, order and mart reads.
alter table lineage.runs add column first_event_at timestamptz;

-- Runs compacted before now: the earliest time the warehouse kept of each (its events' own times
-- are not kept by run). Null only for a run none of whose times was kept, which stays, as before,
-- in no window.
update lineage.runs r set first_event_at = least(
    r.started_at, r.stopped_at,
    (select min(a.accessed_at) from lineage.dataset_accesses a where a.run_key = r.run_key),
    (select min(f.recorded_at) from lineage.field_lineage_runs f where f.run_key = r.run_key),
    (select min(l.event_time) from lineage.run_parents l where l.run_key = r.run_key),
    (select min(f.event_time) from lineage.run_facets f where f.run_key = r.run_key),
    (select min(w.first_seen_at) from lineage.run_warnings w where w.run_key = r.run_key));

alter table lineage.runs add column run_at timestamptz
    generated always as (coalesce(started_at, first_event_at)) stored;

-- A program's runs in a window, newest first (the runs endpoint).
create index runs_by_program_time on lineage.runs (program_key, run_at);

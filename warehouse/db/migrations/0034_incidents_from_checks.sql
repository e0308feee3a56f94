-- Incidents from failed data quality checks (issue 33): an OpenLineage dataQualityAssertions facet
-- with a failed assertion marks the version of the dataset its run saw as bad (source
-- 'openlineage', from the compaction's merge); a Great Expectations validation result does the
-- same through `lineage incidents from-gx` (source 'great_expectations'). The run that checked is
-- kept (its job is not named: it may be of a namespace the dataset's readers may not read), and one run's failures on one dataset are one incident, however many of its events
-- repeat them. A run deleted with its namespace leaves the incident on another namespace's
-- dataset standing.
alter table lineage.dataset_incidents add column run_key bigint references lineage.runs (run_key) on delete set null;
create unique index dataset_incidents_by_check on lineage.dataset_incidents (run_key, namespace, dataset_type, dataset)
    where run_key is not null;

-- The range of writes a check at `checked_at` found bad: from the latest write that happened at
-- or before it (a write happens at its run's end, or at its access while the run has not ended:
-- warehouse/db/run_lineage_store.py) to just after the check. A dataset with no write recorded
-- before the check gets the second around it (no bad write; an incident on record).
create function lineage.checked_version(dataset_key bigint, checked_at timestamptz,
                                        out bad_from timestamptz, out bad_until timestamptz)
language sql stable as $$
    select coalesce(max(coalesce(r.stopped_at, a.accessed_at)), checked_at - interval '1 second'),
           checked_at + interval '1 second'
    from lineage.dataset_accesses a join lineage.runs r on r.run_key = a.run_key
    where a.dataset_key = checked_version.dataset_key and a.access in ('write', 'read_write')
      and a.accessed_at <= checked_version.checked_at
      and coalesce(r.stopped_at, a.accessed_at) <= checked_version.checked_at
$$;

-- How far back the scheduled compaction has listed, so a pause never strands files: the next
-- run lists from the previous run's interval end minus the lookback, however long ago that was
-- (a week-long pause with catchup=False lists the whole week once). One row.
create table lineage.compaction_coverage (
    singleton boolean primary key default true check (singleton),
    listed_until timestamptz not null,
    updated_at timestamptz not null default now()
);

-- Files a batch compacted whose partition was older than its own lookback window: files that
-- arrived late, or that a pause would have stranded before this table existed.
alter table lineage.compaction_batches add column late_files integer not null default 0;

-- The quality gate: each batch's Great Expectations verdict. A batch stays 'unchecked' until the
-- DAG's check runs; 'failed' blocks the marts of every later run until the data is fixed (the
-- next check passes) or an operator acknowledges it (python -m warehouse.quality acknowledge).
alter table lineage.compaction_batches
    add column quality text not null default 'unchecked'
        check (quality in ('unchecked', 'passed', 'failed', 'acknowledged')),
    add column quality_detail text,
    add column quality_checked_at timestamptz;
-- batches compacted before the gate was recorded were checked (or not) by the old rule
update lineage.compaction_batches
   set quality = 'acknowledged', quality_detail = 'compacted before the quality gate was recorded (migration 0016)';
create index compaction_batches_to_check on lineage.compaction_batches (started_at)
    where quality in ('unchecked', 'failed');

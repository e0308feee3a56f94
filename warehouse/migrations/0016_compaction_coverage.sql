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

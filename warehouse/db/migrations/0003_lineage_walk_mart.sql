-- What the incremental dbt mart lineage_marts.lineage_walk reads on each build: the runs a
-- compaction touched (by their last batch), each program's runs of one start day, and the
-- few runs that are long or still running (they are bucketed apart; see the mart).
create index runs_by_last_batch on lineage.runs (last_batch_id);
create index runs_long_or_running on lineage.runs (program_key)
    where started_at is null or stopped_at is null or stopped_at - started_at > interval '1 day';

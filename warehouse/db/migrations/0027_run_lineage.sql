-- Run-level lineage (issue 32) finds the writes and reads of a dataset around a moment instead of
-- every write and read of it: accesses by time, and apart the few runs a moment cannot bound
-- (finished runs longer than a day or without a start, by their end; those and the running ones
-- by their time). See warehouse/db/run_lineage_store.py.
create index dataset_accesses_by_time on lineage.dataset_accesses (dataset_key, accessed_at) include (run_key, access);
create index runs_long_by_stop on lineage.runs (stopped_at)
    where stopped_at is not null and (started_at is null or stopped_at - started_at > interval '1 day');
create index runs_long_or_running_by_time on lineage.runs (run_at)
    where started_at is null or stopped_at is null or stopped_at - started_at > interval '1 day';

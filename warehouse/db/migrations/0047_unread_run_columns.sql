-- Two things stored that nothing reads (issue 30, item 8):
--
-- * `runs_by_program` (a program's runs by start time, migration 0002): every read of a program's
--   runs has ordered and windowed them by `run_at` since migration 0020, through
--   `runs_by_program_time`, which also serves a lookup by program alone (the dataset lineage
--   walk's mart finds a touched program's runs of a day by `run_at` too, since this migration).
-- * a run parent's `batch_id`: written by every compaction, read by nothing (the quality gate
--   checks a batch's runs and accesses, not their links).
--
-- Rows written before keep the dropped column's bytes until they are rewritten (`VACUUM FULL
-- lineage.run_parents` gives them back at once); rows written after do not have them.
select pg_advisory_xact_lock(7265402);  -- after a running compaction has committed (it writes run parents)
drop index lineage.runs_by_program;
alter table lineage.run_parents drop column batch_id;

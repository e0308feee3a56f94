-- The dataset lineage walk (seed 001): each level looks up the runs that accessed a frontier
-- of datasets, then everything those runs accessed. Both steps are index scans on the
-- narrow bigint keys; the run window is checked on the runs' own rows.
create index dataset_accesses_by_dataset on lineage.dataset_accesses (dataset_key, run_key);
create index dataset_accesses_by_run on lineage.dataset_accesses (run_key) include (dataset_key, access, component);
create index runs_by_program on lineage.runs (program_key, started_at);

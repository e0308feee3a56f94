-- What the warehouse stores grows with what is distinct (issue 30, item 8): three things stored
-- twice go.
--
-- A kept OpenLineage event's skeleton no longer repeats what its row holds: its run's `runId`
-- when it is the id of the run the row belongs to, and its `eventTime` when it is the row's time
-- as Python writes it (lineage.openlineage.kept_parts.slimmed; the export puts both back). The
-- events kept before are slimmed by this migration's backfill
-- (warehouse.db.openlineage_export_store.slim_skeletons), after a running compaction has committed.
-- Their batch id, which nothing read, goes.
select pg_advisory_xact_lock(7265402);
alter table lineage.openlineage_events drop column batch_id;

-- A dataset's accesses were indexed twice by (dataset, run): by the primary key, which led with
-- the namespace (a function of the access's dataset and run), and by dataset_accesses_by_dataset.
-- The key now leads with the dataset and the run, and serves both.
alter table lineage.dataset_accesses drop constraint dataset_accesses_pkey;
alter table lineage.dataset_accesses add primary key (dataset_key, run_key, access, component, namespace);
drop index lineage.dataset_accesses_by_dataset;

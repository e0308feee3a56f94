-- Processed pending records expire (issue 30): a compaction deletes the field operation and
-- metadata change records processed more than LINEAGE_PENDING_RETENTION_DAYS ago (the raw log
-- keeps every event). This index finds them without reading the unprocessed ones.
create index pending_events_processed on lineage.pending_events (processed_at) where processed_at is not null;

-- The namespace race guard covers writes (issue 17): a write to an entity of a re-created
-- namespace first drops that entity's rows of the namespace's old incarnation
-- (warehouse.namespace_guard), which needs to know when each row was written. Watermarks kept
-- only their event time (a producer's clock); `written_at` is the warehouse's clock. Rows from
-- before this migration count as written long ago.
alter table lineage.metadata_event_times add column written_at timestamptz not null default '-infinity';
alter table lineage.metadata_event_times alter column written_at set default clock_timestamp();

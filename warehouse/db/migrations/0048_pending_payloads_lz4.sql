-- The payloads of pending field-operation and metadata records compressed with LZ4 instead of
-- PostgreSQL's default, pglz (issue 30, item 7): the compaction writes one for every OpenLineage
-- event with column lineage or a schema facet, the field lineage job and the metadata stage read
-- each once, and the next compaction removes it once processed (LINEAGE_PENDING_RETENTION_DAYS,
-- 0 by default). Writing 5,000 of them (5 KB each) cost the server 0.4 s with pglz. The kept
-- tables keep pglz: it stores them 7% smaller.
--
-- A server built without LZ4 keeps pglz (the setting lists the methods it has). Rows written
-- before keep their compression until they are rewritten; the column's new rows use LZ4. The
-- change itself rewrites nothing, but takes the table's lock for a moment: it waits for a field
-- lineage or metadata stage reading the table to finish.
select pg_advisory_xact_lock(7265402);  -- after a running compaction has committed (it writes pending records)
do $$
begin
    if exists (select from pg_settings where name = 'default_toast_compression' and 'lz4' = any(enumvals)) then
        alter table lineage.pending_events alter column payload set compression lz4;
    end if;
end $$;

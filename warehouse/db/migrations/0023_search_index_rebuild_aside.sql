-- A rebuild of the search index no longer makes the API's writes wait for it (warehouse.db.metadata_search.rebuild):
-- it marks itself started (a short transaction under the index's lock), builds a new table aside from the terms view
-- without the lock, then, under the lock again for a moment, re-derives in the new table what the writes made since
-- it started touched, and swaps the tables. Meanwhile the writes go on refreshing the live table and, while a rebuild
-- is started, note what they touched here, in their own transaction.

-- The rebuild in progress (no row: none, or the last one ended). Written only by the rebuild, under the index's lock:
-- a write that takes the lock after the rebuild started notes what it touched.
create table lineage.search_index_rebuild (
    only_row        boolean primary key default true check (only_row),
    rebuild_id      bigint not null,                -- the transaction that started it (txid_current())
    started_at      timestamptz not null
);

-- What the writes touched since the rebuild in progress started: an entity whose rows a write re-derived, or a
-- namespace whose rows it dropped (a deletion) or re-derived (the end of its cleanup). Repeats allowed: the rebuild
-- reads each once, and empties the table when it swaps (or starts).
create table lineage.search_index_pending (
    entity_key      text,
    namespace       text,
    check ((entity_key is null) <> (namespace is null))
);

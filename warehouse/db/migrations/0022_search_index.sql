-- The metadata search index has one owner, its store (warehouse.db.metadata_search): it was the
-- dbt mart lineage_marts.metadata_search, which dbt rebuilt and the API refreshed entity by
-- entity (a post-hook re-applied the API's writes made during a rebuild). dbt keeps only the view
-- lineage_marts.metadata_search_terms, what a search row is; the store rebuilds this table from
-- it after each marts build and refreshes an entity's rows on each API write, both under one
-- advisory lock, so a write made during a rebuild is never lost.
-- Same columns and indexes as the mart: `term` and `key_term` in the "C" collation, so one plain
-- btree serves prefix LIKE, ORDER BY and the `>` steps of suggest's skip scan.
create table lineage.search_index (
    entity_key      text not null,                  -- as stored with the entity's rows (lineage.entity_keys)
    namespace       text,                           -- null for external resources
    entity_type     text,
    entity_details  jsonb,                          -- the entity's key=value parts, in order
    scope           text,
    kind            text,                           -- name, tag, property, field or alias
    key             text,
    value           text,
    key_term        text collate "C",               -- lower(key)
    term            text collate "C" not null,      -- lower(value), its first 200 characters
    grant_key       text                            -- what a READ grant on shows the row
);
create index search_index_by_term on lineage.search_index (term);
create index search_index_by_key_term on lineage.search_index (key_term, term);
create index search_index_by_entity on lineage.search_index (entity_key);
create index search_index_by_namespace on lineage.search_index (namespace);

-- The last rebuild (one row from the first on). Before it the index is not built: a search
-- answers 503 and the API's writes leave the index alone (the first rebuild indexes everything).
create table lineage.search_index_build (
    only_row        boolean primary key default true check (only_row),
    built_at        timestamptz not null,
    row_count       bigint not null
);

-- The retired mart: a user's query of it fails instead of reading rows no one updates. On a
-- warehouse whose marts were built, the index is rebuilt in this migration's transaction
-- (warehouse.db.migrate), so search answers on across the upgrade.
drop table if exists lineage_marts.metadata_search;

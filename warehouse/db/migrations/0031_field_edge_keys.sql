-- Search over operations (issue 33): each field edge carries its destination field's metadata
-- entity key and parts, and its dataset's key, as the core renders them, so the search view reads
-- them instead of rebuilding them (`op:sha2`, `transform:MASKED` find the fields they made). The
-- edges stored before are derived again from their sets' stored operations (derivation 2 -> 3:
-- warehouse.db.field_lineage_staging.backfill_edges, run by the field lineage stage).
delete from lineage.field_edges;
update lineage.field_operation_sets set derived_with = 2 where derived_with = 3;
alter table lineage.field_edges
    add column field_key text not null,         -- the destination field's entity key
    add column field_details jsonb not null,    -- its key=value parts, in order
    add column dataset_key text not null;       -- its dataset's entity key (what a READ grant on shows it)
-- The search index refreshes an entity's rows through its view (metadata_search_terms) on each
-- API write, filtered by entity key: these keep that a lookup, not a scan of every edge.
create index field_edges_by_field_key on lineage.field_edges (field_key);
create index propagated_tags_by_field_key on lineage.propagated_tags (field_key);

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

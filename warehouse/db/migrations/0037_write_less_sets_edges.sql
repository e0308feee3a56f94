-- Field edges for the operation sets of records without writes (CDAP's shape: the record lists
-- its destination fields instead). Migration 0031 derived every set's edges again from its stored
-- operations, which hold no destination fields, so such a set got none: tags did not follow
-- its fields and the blast radius did not see them. The backfill now takes the destination
-- fields from the set's paths (warehouse.db.field_lineage_staging.backfill_edges, run by the
-- field lineage stage); the write-less sets left without edges are derived again.
update lineage.field_operation_sets s
set derived_with = 2
where not jsonb_path_exists(s.operations, '$[*] ? (@.type == "write")')
  and not exists (select from lineage.field_edges e where e.set_fingerprint = s.fingerprint)
  and exists (select from lineage.field_paths p where p.set_fingerprint = s.fingerprint);

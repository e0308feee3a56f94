-- Column lineage round trip (issue 34): a step declared IDENTITY that carries a description (what
-- an OpenLineage producer, or this warehouse's own export, said the step was) is now named by it
-- in the field edges (lineage.model.column_lineage.described_record; DERIVATION 3 -> 4). The sets
-- holding such a step, which their stored operations can rebuild (they have a write), are derived
-- again from them (warehouse.db.field_lineage_staging.backfill_edges, run by the field lineage
-- stage); the other sets' edges are what derivation 4 gives them already.
update lineage.field_operation_sets
set derived_with = 2
where derived_with = 3
  and jsonb_path_exists(operations, '$[*] ? (@.type == "write")')
  and jsonb_path_exists(operations, '$[*].inputs[*].transformation ? (@.subtype == "IDENTITY" && exists(@.description))');
delete from lineage.field_edges e
using lineage.field_operation_sets s
where s.fingerprint = e.set_fingerprint and s.derived_with = 2;
update lineage.field_operation_sets set derived_with = 4 where derived_with = 3;

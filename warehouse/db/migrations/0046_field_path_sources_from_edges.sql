-- Source field -> destination field pairs read from the column lineage edges (issue 30 item 8).
-- lineage.field_path_sources held, per operation set, each (source field, destination field)
-- of its paths: exactly the distinct pairs of lineage.field_edges, which the field lineage job
-- writes from the same paths (a property check of 3,000 generated records and the benchmarks'
-- warehouses found no difference), 19 MiB of the storage benchmark's 425. The pairs are now read
-- from the edges. Sets stored before the edges existed (migration 0029) and not derived again
-- since have no edges: their pairs stay in lineage.field_path_sources_legacy, and leave it when
-- the set is derived again (warehouse.db.field_lineage_staging) or its namespace is cleaned up.

create table lineage.field_path_sources_legacy as
select x.* from lineage.field_path_sources x
where not exists (select from lineage.field_edges e where e.set_fingerprint = x.set_fingerprint);
alter table lineage.field_path_sources_legacy
    add primary key (source_namespace, source_type, source, source_field, set_fingerprint, field);
create index field_path_sources_legacy_by_field on lineage.field_path_sources_legacy (set_fingerprint, field);

-- dbt's staging view of it goes too; the next marts build creates it again over the view below.
drop table lineage.field_path_sources cascade;

-- What the queries join: a pair once per edge kind (an edge may be DIRECT and INDIRECT), so they
-- select distinct. A union of plain selects: the planner takes a query's conditions into each
-- side and uses the edges' indexes (by source field, by set and destination field).
create view lineage.field_path_source_rows as
select source_namespace, source_type, source, source_field, set_fingerprint, field from lineage.field_edges
union all
select source_namespace, source_type, source, source_field, set_fingerprint, field
from lineage.field_path_sources_legacy;

-- What readers read, as before: each pair once.
create view lineage.field_path_sources as
select distinct source_namespace, source_type, source, source_field, set_fingerprint, field
from lineage.field_path_source_rows;

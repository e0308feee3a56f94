-- Each distinct field path and source flow stored once (issue 30 item 8). A path (a destination
-- field, the operations that made it, its source fields) and a flow (where a source field goes)
-- repeat across operation sets: every set of a pipeline that writes the same field from the same
-- source the same way holds the same path, and the platform of the storage benchmark has 40,000
-- paths of 10,000 distinct documents (the same for flows), each about a kilobyte. The documents
-- now live once in lineage.field_path_documents and lineage.field_flow_documents, keyed by the
-- SHA-256 of their text (jsonb's text is canonical: equal documents, equal keys); the rows name
-- them. lineage.field_paths and lineage.field_source_flows stay what readers read, as views with
-- the same columns; writers write the rows and the documents
-- (warehouse.db.field_lineage_staging), and the namespace cleanup removes the documents no row
-- names any more.

create table lineage.field_path_documents (
    document_key        bytea primary key,              -- sha256 of the path's jsonb text
    path                jsonb not null                  -- FieldPath.to_dict()
);
insert into lineage.field_path_documents (document_key, path)
select distinct on (document_key) document_key, path
from (select sha256(convert_to(path::text, 'UTF8')) as document_key, path from lineage.field_paths) p
order by document_key;

create table lineage.field_path_rows (
    set_fingerprint     text not null references lineage.field_operation_sets (fingerprint),
    field               text not null,
    path_fingerprint    text not null,                  -- identical paths of different sets share it
    document_key        bytea not null references lineage.field_path_documents (document_key),
    primary key (set_fingerprint, field)
);
insert into lineage.field_path_rows (set_fingerprint, field, path_fingerprint, document_key)
select set_fingerprint, field, path_fingerprint, sha256(convert_to(path::text, 'UTF8')) from lineage.field_paths;
create index field_path_rows_by_document on lineage.field_path_rows (document_key);

create table lineage.field_flow_documents (
    document_key        bytea primary key,              -- sha256 of the flow's jsonb text
    flow                jsonb not null                  -- SourceFieldFlow.to_dict()
);
insert into lineage.field_flow_documents (document_key, flow)
select distinct on (document_key) document_key, flow
from (select sha256(convert_to(flow::text, 'UTF8')) as document_key, flow from lineage.field_source_flows) f
order by document_key;

create table lineage.field_source_flow_rows (
    source_namespace    text not null,
    source_type         text not null,
    source              text not null,
    source_field        text not null,
    set_fingerprint     text not null references lineage.field_operation_sets (fingerprint),
    flow_fingerprint    text not null,                  -- identical flows of different sets share it
    document_key        bytea not null references lineage.field_flow_documents (document_key),
    primary key (source_namespace, source, source_field, source_type, set_fingerprint)
);
insert into lineage.field_source_flow_rows (source_namespace, source_type, source, source_field, set_fingerprint,
                                            flow_fingerprint, document_key)
select source_namespace, source_type, source, source_field, set_fingerprint, flow_fingerprint,
       sha256(convert_to(flow::text, 'UTF8'))
from lineage.field_source_flows;
create index field_source_flow_rows_by_set on lineage.field_source_flow_rows (set_fingerprint);
create index field_source_flow_rows_by_document on lineage.field_source_flow_rows (document_key);

-- Views that read the old tables (dbt's staging views of a built warehouse, an analyst's view or
-- materialized view) go with them; the next marts build (the compaction DAG's build_marts,
-- `make marts`) creates dbt's again over the views below.
drop table lineage.field_paths, lineage.field_source_flows cascade;

-- What readers read, as before. Left joins (each row names exactly one document) let the planner
-- leave the documents out of a query that reads no path or flow.
create view lineage.field_paths as
select r.set_fingerprint, r.field, r.path_fingerprint, d.path
from lineage.field_path_rows r left join lineage.field_path_documents d on d.document_key = r.document_key;

create view lineage.field_source_flows as
select r.source_namespace, r.source_type, r.source, r.source_field, r.set_fingerprint, r.flow_fingerprint, d.flow
from lineage.field_source_flow_rows r left join lineage.field_flow_documents d on d.document_key = r.document_key;

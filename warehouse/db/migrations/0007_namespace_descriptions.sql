-- Namespaces (seed 003) get a description, set by PUT /v3/namespaces/{ns}.
alter table lineage.namespaces add column description text not null default '';

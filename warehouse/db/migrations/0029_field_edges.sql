-- Tags that follow the data (issue 33): each operation set's composed column lineage, one row per
-- (source field, destination field, kind), with the transform operations on the way. Tag
-- propagation walks these: a value flows along DIRECT kinds, masking and aggregation stop it as a
-- policy says, INDIRECT never carries it. Filled by the field lineage job with each set's paths
-- and flows (lineage.model.column_lineage.field_edges); sets stored before are derived again
-- (DERIVATION 3).
create table lineage.field_edges (
    set_fingerprint     text not null references lineage.field_operation_sets (fingerprint),
    source_namespace    text not null,
    source_type         text not null,
    source              text not null,
    source_field        text not null,
    field               text not null,                  -- the destination field (of the set's destination)
    kind                text not null,                  -- DIRECT or INDIRECT
    subtype             text not null,                  -- IDENTITY, TRANSFORMATION, AGGREGATION, FILTER, ...
    masking             boolean not null,
    operations          text[] not null,                -- the transform operations on the way (names)
    primary key (set_fingerprint, source_namespace, source_type, source, source_field, field, kind, subtype, masking)
);
-- Downstream from a field (propagation), and upstream to one (why and why not).
create index field_edges_from_source on lineage.field_edges (source_namespace, source, source_field);
create index field_edges_to_field on lineage.field_edges (set_fingerprint, field);

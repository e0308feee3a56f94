-- Field lineage as CDAP users know it (issue 18): nothing recorded is lost, impact says where a
-- field ends.
--
-- * warnings: what a record was accepted with but should not have had (CDAP's leniency: an
--   input its origin does not list among its outputs), kept with its operation set.
-- * derived_with: the version of the derivation (lineage.field_paths.DERIVATION) that computed
--   a set's paths and flows; the field lineage job derives older sets again.
-- * field_source_flows: per source field and operation set, where the field goes: the
--   destination fields it reaches, the drops that end it, the operations in between.
alter table lineage.field_operation_sets
    add column warnings jsonb not null default '[]',
    add column derived_with integer not null default 1;

create table lineage.field_source_flows (
    source_namespace    text not null,
    source_type         text not null,
    source              text not null,
    source_field        text not null,
    set_fingerprint     text not null references lineage.field_operation_sets (fingerprint),
    flow_fingerprint    text not null,                  -- identical flows of different sets share it
    flow                jsonb not null,                 -- SourceFieldFlow.to_dict()
    primary key (source_namespace, source, source_field, source_type, set_fingerprint)
);
create index field_source_flows_by_set on lineage.field_source_flows (set_fingerprint);

-- Incoming summaries and the dataset summary read the source index by destination field.
create index field_path_sources_by_field on lineage.field_path_sources (set_fingerprint, field);

-- Derive every recorded field operation record again under the new rules: records refused
-- for an input its origin does not output are accepted now, several writes of one field are
-- unioned, and flows are computed. Runs already recorded are not recorded twice.
update lineage.pending_events set processed_at = null
where kind = 'field_operations' and processed_at is not null;

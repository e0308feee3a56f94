-- Namespace deletion (seed 003 "Namespace Deletion", "Scheduling Logic"): DELETE removes the
-- namespace and records a deletion; the cleanup DAG, scheduled on the asset event the delete
-- emits, removes the namespace's records older than the deletion and marks it cleaned.
-- Until then, reads of a namespace re-created at once hide what was created before its new
-- creation time (seed 003's race guard): `namespace_guards` says from when each is visible.
alter table lineage.programs add column created_at timestamptz not null default now();
alter table lineage.datasets add column created_at timestamptz not null default now();

create table lineage.namespace_deletions (
    deletion_id             bigint generated always as identity primary key,
    namespace               text not null,
    namespace_created_at    timestamptz not null,
    deleted_at              timestamptz not null default clock_timestamp(),
    deleted_by              text not null,
    cleaned_at              timestamptz,
    removed                 jsonb                   -- rows removed per table, once cleaned
);
create index namespace_deletions_pending on lineage.namespace_deletions (namespace) where cleaned_at is null;

create view lineage.namespace_guards as
select d.namespace, coalesce(n.created_at, 'infinity'::timestamptz) as visible_since
from (select distinct namespace from lineage.namespace_deletions where cleaned_at is null) as d
left join lineage.namespaces as n using (namespace);

-- The cleanup finds a namespace's change records and watermarks by entity key prefix.
create index metadata_changes_by_key_prefix on lineage.metadata_changes (entity_key text_pattern_ops);
create index metadata_event_times_by_key_prefix on lineage.metadata_event_times (entity_key text_pattern_ops);

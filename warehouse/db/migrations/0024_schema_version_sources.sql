-- Observed schemas are facts (issue 30): each schema version says where it came from, when the
-- schema it holds was true, and what it changed from the version before it.
--   source      'declared': a program's record_schema or PUT .../properties (the compatibility
--               rule checked it); 'observed': what a producer saw (an OpenLineage schema facet),
--               kept whatever it changes. Every version before this migration was declared.
--   event_time  the time of the event that reported the schema (the request's time for the
--               API); an observation older than the current version's is no new version.
--               Before this migration: the time the version was stored.
--   changes     {"added", "removed", "retyped", "nullability", "reordered"} from the previous
--               version (lineage.model.dataset_schema.SchemaChanges); null for a first version.
--               The migrator fills it for the versions kept before (schema_store.backfill_changes).
alter table lineage.dataset_schema_versions
    add column source     text not null default 'declared' check (source in ('declared', 'observed')),
    add column event_time timestamptz,
    add column changes    jsonb;
update lineage.dataset_schema_versions set event_time = created_at;
alter table lineage.dataset_schema_versions
    alter column source drop default,
    alter column event_time set not null;

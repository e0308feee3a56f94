-- Metadata (seeds 000, 001): tags and properties on any well-formed entity, per scope, with a
-- change record for every change.
create table lineage.metadata (
    entity_key      text not null,                  -- MetadataEntity.render(), the canonical form
    entity_type     text not null,
    namespace       text,                           -- null for external resources
    entity          jsonb not null,                 -- the key=value pairs, in order
    scope           text not null check (scope in ('USER', 'SYSTEM')),
    kind            text not null check (kind in ('tag', 'property')),
    key             text not null,                  -- the tag itself, or the property key
    value           text not null default '',       -- '' for tags
    updated_at      timestamptz not null default now(),
    updated_by      text not null,
    primary key (entity_key, scope, kind, key)
);
create index metadata_by_namespace on lineage.metadata (namespace, entity_type);

create table lineage.metadata_changes (
    change_id       bigint generated always as identity primary key,
    entity_key      text not null,
    entity          jsonb not null,
    scope           text not null,
    previous        jsonb not null,                 -- {"tags": [...], "properties": {...}} before
    updated         jsonb not null,                 -- and after
    additions       jsonb not null,                 -- {"tags": [...], "properties": {...}}
    deletions       jsonb not null,
    changed_at      timestamptz not null default clock_timestamp(),
    updater         text not null
);
create index metadata_changes_by_entity on lineage.metadata_changes (entity_key, changed_at);

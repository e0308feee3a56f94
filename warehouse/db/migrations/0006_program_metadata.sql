-- Program-recorded SYSTEM metadata (issue 5): the later event wins by event time. One
-- watermark per (entity, scope, kind, key) an applied event touched; key '*' is "remove all".
create table lineage.metadata_event_times (
    entity_key      text not null,
    scope           text not null,
    kind            text not null check (kind in ('tag', 'property')),
    key             text not null,
    event_time      timestamptz not null,
    primary key (entity_key, scope, kind, key)
);

create index pending_metadata_changes on lineage.pending_events (event_time)
    where kind = 'metadata_change' and processed_at is null;

-- Change ids in order, for the asset events that carry them.
create index metadata_changes_by_time on lineage.metadata_changes (changed_at);

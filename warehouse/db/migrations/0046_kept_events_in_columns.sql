-- A kept OpenLineage event in columns (issue 30, item 8). Its row held its id as the text
-- "ol-" + 32 hex digits (36 bytes, and again in its primary key), the namespaces it touches as an
-- array repeated on every row (a platform's events touch the same few sets), and its skeleton
-- (lineage.openlineage.kept_parts) as JSON whose keys and part ids as text were most of its bytes:
-- 109 MiB of a two-day platform's 425 MiB warehouse (docs/benchmarks.md).
--
-- * `event_key`: the MD5 of the event's id, as a UUID (the id itself is read by nothing but the
--   compaction's check for an event already kept, which hashes the staged id the same way);
-- * `namespace_list`: the set of namespaces, each distinct set once in lineage.namespace_lists;
-- * the skeleton in columns: its `eventType` (a string), its `_body` part id (a UUID), its run's
--   facets (part ids by facet name) and whatever else it holds (`rest`, null when nothing:
--   another text of its run's id or its time, keys of the producer's own). lineage.kept_columns
--   splits a skeleton, lineage.kept_skeleton puts it back exactly (a test holds it for every
--   recorded fixture and odd events).
select pg_advisory_xact_lock(7265402);  -- after a running compaction has committed (warehouse.db.compaction_store)


-- (a set-returning function of one row, so that PostgreSQL inlines it in a query: 4x faster
-- than calling a function per row). A skeleton is an object; anything else is kept whole in rest.
create function lineage.kept_columns(skeleton jsonb)
returns table (event_type text, body uuid, run_facets jsonb, rest jsonb)
language sql immutable parallel safe as $$
    select t, b, f,
           case when not o then skeleton
                else nullif(skeleton - array_remove(array[case when t is not null then 'eventType' end,
                                                          case when b is not null then '_body' end,
                                                          case when f is not null then 'run' end], null)
                            || case when f is not null and (skeleton -> 'run') - 'facets' <> '{}'
                                    then jsonb_build_object('run', (skeleton -> 'run') - 'facets') else '{}' end,
                            '{}') end
    from (select o,
                 case when o and jsonb_typeof(skeleton -> 'eventType') = 'string'
                      then skeleton ->> 'eventType' end as t,
                 case when o and jsonb_typeof(skeleton -> '_body') = 'string'
                       and skeleton ->> '_body' ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
                      then (skeleton ->> '_body')::uuid end as b,
                 case when o and jsonb_typeof(skeleton -> 'run') = 'object'
                       and jsonb_typeof(skeleton -> 'run' -> 'facets') = 'object'
                      then skeleton -> 'run' -> 'facets' end as f
          from (select jsonb_typeof(skeleton) = 'object' as o) as kind) as split
$$;

create function lineage.kept_skeleton(event_type text, body uuid, run_facets jsonb, rest jsonb) returns jsonb
language sql immutable parallel safe as $$
    select case when jsonb_typeof(rest) in ('object') or rest is null then
        coalesce(rest, '{}')
        || case when event_type is null then '{}' else jsonb_build_object('eventType', event_type) end
        || case when body is null then '{}' else jsonb_build_object('_body', body::text) end
        || case when run_facets is null then '{}'
                else jsonb_build_object('run', coalesce(rest -> 'run', '{}') || jsonb_build_object('facets', run_facets))
           end
        else rest end  -- a skeleton that is no object, kept whole
$$;

-- A set is found by the MD5 of its text (a btree entry holds at most 2,704 bytes: an index on
-- the array itself would refuse an event touching a few dozen long namespace names).
create table lineage.namespace_lists (
    list_key   integer generated always as identity primary key,
    list_id    uuid not null unique,     -- md5(namespaces::text)::uuid
    namespaces text[] not null
);

insert into lineage.namespace_lists (list_id, namespaces)
select md5(namespaces::text)::uuid, namespaces
from (select distinct namespaces from lineage.openlineage_events) as sets
order by namespaces;

-- a new table, filled in time order, so that the old one's space is given back at once
create table lineage.openlineage_events_0046 (
    event_key      uuid not null,       -- md5(event_id)::uuid
    run_key        bigint not null,
    event_time     timestamptz not null,
    namespace_list integer not null,    -- the namespaces it touches (lineage.namespace_lists)
    body           uuid,                -- the skeleton's `_body`: the part holding all but its own keys
    event_type     text,                -- the skeleton's `eventType`, when a string
    run_facets     jsonb,               -- its run's facets' part ids by name, when an object
    rest           jsonb                -- the rest of its skeleton, null when nothing
);
insert into lineage.openlineage_events_0046
select md5(o.event_id)::uuid, o.run_key, o.event_time, l.list_key, c.body, c.event_type, c.run_facets, c.rest
from lineage.openlineage_events o
join lineage.namespace_lists l on l.list_id = md5(o.namespaces::text)::uuid
cross join lateral lineage.kept_columns(o.event) c
order by o.event_time, o.event_id;

drop table lineage.openlineage_events;
alter table lineage.openlineage_events_0046 rename to openlineage_events;
-- No foreign key to namespace_lists: its check would scan this table for each set a namespace's
-- cleanup removes (an index on namespace_list would cost a tenth of the table). The compaction
-- adds sets and the cleanup removes unused ones under the kept parts' lock
-- (warehouse.db.compaction_store.lock_kept_event_parts), so neither sees the other half done.
alter table lineage.openlineage_events
    add constraint openlineage_events_pkey primary key (event_key),
    add constraint openlineage_events_run_key_fkey foreign key (run_key) references lineage.runs (run_key);
create index openlineage_events_by_run on lineage.openlineage_events (run_key);
create index openlineage_events_by_time on lineage.openlineage_events (event_time);

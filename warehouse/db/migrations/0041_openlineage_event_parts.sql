-- Kept OpenLineage events store each distinct part once (issue 30, item 8). A platform's producers
-- send the same job, datasets and facets in every event of every run (a task's START, RUNNING and
-- COMPLETE, then again each hour); kept whole, they were most of the warehouse's growth (1.3 KB
-- per event, compressed). A kept event now holds only what is its own, its `eventType`,
-- `eventTime` and `run` with each of the run's facets replaced by a part id, and `_body`: the id of
-- the part holding everything else (producer, schemaURL, job, inputs, outputs, any other key),
-- whose job and each input and output (a dataset with its facets) are parts again, named by id.
-- A part id is md5 of the run's namespace and the part's jsonb text (jsonb's text is canonical:
-- keys sorted, duplicates gone), so the same part of the same namespace is one row; an hourly
-- task's three events a run share one body, and every run of it the job and datasets. A part is
-- scoped by its run's namespace so that a namespace's cleanup removes the parts only its runs'
-- events used. The export puts each event back together
-- (warehouse.db.openlineage_export_store.kept_events).
create table lineage.openlineage_parts (
    part_id    uuid primary key,
    namespace  text not null,    -- the namespace of the runs whose events use it
    part       jsonb not null
);

create function lineage.openlineage_part_id(namespace text, part jsonb) returns uuid
language sql immutable parallel safe
return md5(namespace || '|' || part::text)::uuid;

-- An event's body: all but its own keys (eventType, eventTime, run), with the job and each input
-- and output replaced by their part ids.
create function lineage.openlineage_body(namespace text, event jsonb) returns jsonb
language sql immutable parallel safe as $$
    select (event - 'eventType' - 'eventTime' - 'run')
        || case when event ? 'job'
                then jsonb_build_object('job', lineage.openlineage_part_id(namespace, event -> 'job'))
                else '{}'::jsonb end
        || case when jsonb_typeof(event -> 'inputs') = 'array'
                then jsonb_build_object('inputs',
                         (select coalesce(jsonb_agg(lineage.openlineage_part_id(namespace, d.value) order by d.n),
                                          '[]'::jsonb)
                          from jsonb_array_elements(event -> 'inputs') with ordinality as d(value, n)))
                else '{}'::jsonb end
        || case when jsonb_typeof(event -> 'outputs') = 'array'
                then jsonb_build_object('outputs',
                         (select coalesce(jsonb_agg(lineage.openlineage_part_id(namespace, d.value) order by d.n),
                                          '[]'::jsonb)
                          from jsonb_array_elements(event -> 'outputs') with ordinality as d(value, n)))
                else '{}'::jsonb end
$$;

-- The parts of a whole event (with repeats: the merge keeps each once): each run facet, the
-- job, each input and output, and the body naming them.
create function lineage.openlineage_parts_of(namespace text, event jsonb)
returns table (part_id uuid, part jsonb)
language sql immutable parallel safe as $$
    select lineage.openlineage_part_id(namespace, p.part), p.part
    from (select f.value as part
          from jsonb_each(case when jsonb_typeof(event -> 'run' -> 'facets') = 'object'
                               then event -> 'run' -> 'facets' else '{}' end) as f
          union all
          select event -> 'job' where event ? 'job'
          union all
          select d from jsonb_array_elements(case when jsonb_typeof(event -> 'inputs') = 'array'
                                                  then event -> 'inputs' else '[]' end) as d
          union all
          select d from jsonb_array_elements(case when jsonb_typeof(event -> 'outputs') = 'array'
                                                  then event -> 'outputs' else '[]' end) as d
          union all
          select lineage.openlineage_body(namespace, event)) as p
$$;

-- A whole event as lineage.openlineage_events keeps it: its own keys, each run facet replaced by
-- its part id, and `_body` (every other key of the event is in the body).
create function lineage.openlineage_skeleton(namespace text, event jsonb) returns jsonb
language sql immutable parallel safe as $$
    select case when event ? 'eventType' then jsonb_build_object('eventType', event -> 'eventType')
                else '{}'::jsonb end
        || case when event ? 'eventTime' then jsonb_build_object('eventTime', event -> 'eventTime')
                else '{}'::jsonb end
        || case when jsonb_typeof(event -> 'run' -> 'facets') = 'object'
                then jsonb_build_object('run', (event -> 'run') || jsonb_build_object('facets',
                         (select coalesce(jsonb_object_agg(f.key, lineage.openlineage_part_id(namespace, f.value)),
                                          '{}'::jsonb)
                          from jsonb_each(event -> 'run' -> 'facets') as f)))
                when event ? 'run' then jsonb_build_object('run', event -> 'run')
                else '{}'::jsonb end
        || jsonb_build_object('_body', lineage.openlineage_part_id(namespace, lineage.openlineage_body(namespace, event)))
$$;

-- The part ids a body names: its job's, each input's and output's.
create function lineage.openlineage_body_part_ids(body jsonb) returns setof uuid
language sql immutable parallel safe as $$
    select (body ->> 'job')::uuid where body ? 'job'
    union all
    select d::uuid from jsonb_array_elements_text(case when jsonb_typeof(body -> 'inputs') = 'array'
                                                       then body -> 'inputs' else '[]' end) as d
    union all
    select d::uuid from jsonb_array_elements_text(case when jsonb_typeof(body -> 'outputs') = 'array'
                                                       then body -> 'outputs' else '[]' end) as d
$$;

-- The part ids a kept event uses: its run facets', its body's, and those its body names.
create function lineage.openlineage_part_ids(skeleton jsonb) returns setof uuid
language sql stable parallel safe as $$
    select f.value::uuid
    from jsonb_each_text(case when jsonb_typeof(skeleton -> 'run' -> 'facets') = 'object'
                              then skeleton -> 'run' -> 'facets' else '{}' end) as f
    union all
    select (skeleton ->> '_body')::uuid
    union all
    select named.part_id
    from lineage.openlineage_parts b
    cross join lateral lineage.openlineage_body_part_ids(b.part) as named(part_id)
    where b.part_id = (skeleton ->> '_body')::uuid
$$;

-- The events kept before this migration, split the same way, once a running compaction has
-- committed (its lock, warehouse.db.compaction_store): none adds a whole event after the split.
select pg_advisory_xact_lock(7265402);

insert into lineage.openlineage_parts (part_id, namespace, part)
select p.part_id, r.namespace, p.part
from lineage.openlineage_events o
join lineage.runs r on r.run_key = o.run_key
cross join lateral lineage.openlineage_parts_of(r.namespace, o.event) as p
on conflict (part_id) do nothing;

update lineage.openlineage_events o
set event = lineage.openlineage_skeleton(r.namespace, o.event)
from lineage.runs r
where r.run_key = o.run_key;

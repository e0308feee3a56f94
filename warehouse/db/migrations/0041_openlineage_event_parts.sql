-- Kept OpenLineage events store each distinct part once (issue 30, item 8). A platform's producers
-- send the same job, datasets and facets in every event of every run (a task's START, RUNNING and
-- COMPLETE, then again each hour); kept whole, they were most of the warehouse's growth (1.3 KB
-- per event, compressed). A kept event now holds its skeleton: its own `eventType`, `eventTime`
-- and `run` with each run facet replaced by a part id, and `_body`, the id of the part holding
-- everything else, whose job and each input and output are parts again, named by id
-- (lineage.openlineage.kept_parts splits an event and puts it back together; the compaction
-- stages the split). A part's id is the MD5 of its run's namespace and its canonical JSON, so
-- the same part of the same namespace is one row, and a namespace's cleanup removes the parts
-- only its runs' events used.
create table lineage.openlineage_parts (
    part_id    uuid primary key,
    namespace  text not null,    -- the namespace of the runs whose events use it
    part       jsonb not null
);

-- The part ids a body names: its job's, each input's and each output's (kept_parts.body_part_ids).
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
    where skeleton ? '_body'
    union all
    select (skeleton ->> '_body')::uuid where skeleton ? '_body'
    union all
    select named.part_id
    from lineage.openlineage_parts b
    cross join lateral lineage.openlineage_body_part_ids(b.part) as named(part_id)
    where skeleton ? '_body' and b.part_id = (skeleton ->> '_body')::uuid
$$;

-- The events kept before this migration are split by its backfill
-- (warehouse.db.openlineage_export_store.backfill_parts), once a running compaction has
-- committed (its lock, warehouse.db.compaction_store): none adds a whole event after the split.
select pg_advisory_xact_lock(7265402);

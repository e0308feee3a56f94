-- The dataset lineage walk's table (the Metadata and Data Discovery design): one row per (program, data, access, component,
-- bucket) with the runs that made that access, their times and stops as parallel arrays. A
-- run's time is lineage.runs.run_at: its start, or else its earliest event (a run known only
-- from its end), the time every other windowed answer uses (warehouse.db.lineage_store.run_in_window).
--
-- A bucket is the UTC day a run started. A run that is still running, ran for more than a day
-- or has no recorded start is also listed under the '-infinity' bucket, so a window only ever
-- reads the buckets of its own days (and the day before) plus that small one, and the exact
-- window rule is checked on the runs' own times. A start-less run is under '-infinity' only, not
-- under the day of its time: that bucket is rebuilt whole on every build, so when its START
-- arrives later the run leaves it (a day bucket it left would keep it).
--
-- An 'unknown' access is dropped when the same run has a known access to the same data.
--
-- Incremental: each build recomputes the (program, day) buckets of runs touched by compaction
-- batches finished since the last build, and the whole '-infinity' bucket. That is a few
-- thousand runs, but the planner cannot know it (the touched days are computed), so runs and
-- their accesses are looked up in "lateral ... offset 0" subqueries: the offset keeps them
-- from being flattened into a hash join over every run and access, so each is an index scan
-- (and JIT compilation, which the inflated estimates would trigger, is turned off).
{{
  config(
    materialized='incremental',
    incremental_strategy='delete+insert',
    unique_key=['program_key', 'bucket'],
    pre_hook=[
      "{% if is_incremental() %}delete from {{ this }} where bucket = '-infinity'::date{% endif %}",
      "{% if is_incremental() %}set local jit = off{% endif %}",
    ],
    indexes=[
      {'columns': ['dataset_key', 'bucket']},
      {'columns': ['program_key', 'bucket']},
    ],
  )
}}

-- Import CTEs are "not materialized" so that the planner pushes the touched runs' keys into
-- the index scans instead of scanning every run and access.
with runs as not materialized (

    select * from {{ ref('stg_lineage__runs') }}

),

accesses as not materialized (

    select * from {{ ref('stg_lineage__dataset_accesses') }}

),

batches as (

    select * from {{ ref('stg_lineage__compaction_batches') }}

),

{% if is_incremental() %}

-- The batches since the last build are looked up first and inlined as literals: the planner
-- then sees a handful of runs and walks the indexes instead of hashing every run.
touched_days as (

    select distinct
        runs.program_key,
        (runs.started_at at time zone 'UTC')::date as start_day
    from runs
    where runs.last_compaction_batch_id in ({{ new_batch_literals() }})
        and runs.started_at is not null

),

candidate_runs as (

    select touched_runs.*
    from touched_days
    cross join lateral (
        select runs.*
        from runs
        where runs.program_key = touched_days.program_key
            and runs.started_at >= touched_days.start_day::timestamp at time zone 'UTC'
            and runs.started_at < (touched_days.start_day + 1)::timestamp at time zone 'UTC'
            -- the same day by run_at (run_at is started_at when it is set): the index on
            -- (program_key, run_at) finds the day's runs, not all of the program's
            and runs.run_at >= touched_days.start_day::timestamp at time zone 'UTC'
            and runs.run_at < (touched_days.start_day + 1)::timestamp at time zone 'UTC'
        offset 0
    ) as touched_runs

    union all

    select runs.*
    from runs
    where {{ long_or_running('runs') }}
        and not exists (
            select 1 from touched_days
            where touched_days.program_key = runs.program_key
                and touched_days.start_day = (runs.started_at at time zone 'UTC')::date
        )

),

{% else %}

candidate_runs as (

    select * from runs

),

{% endif %}

spans as (

    select
        run_key,
        program_key,
        run_id,
        started_at,
        run_at,
        stopped_at,
        {{ long_or_running('candidate_runs') }} as long_or_running
    from candidate_runs

),

bucketed as (

    select spans.*, (spans.started_at at time zone 'UTC')::date as bucket
    from spans
    where spans.started_at is not null

    union all

    select spans.*, '-infinity'::date as bucket
    from spans
    where spans.long_or_running

),

-- Each run's accesses, by the run's key (an index scan per run on incremental builds), minus
-- an unknown access shadowed by a known one of the same run and data.
run_accesses as (

    select bucketed.*, known_accesses.dataset_key, known_accesses.access, known_accesses.component
    from bucketed
    cross join lateral (
        select accesses.*
        from accesses
        where accesses.run_key = bucketed.run_key
            and (
                accesses.access <> 'unknown'
                or not exists (
                    select 1
                    from accesses as known
                    where known.run_key = accesses.run_key
                        and known.dataset_key = accesses.dataset_key
                        and known.access <> 'unknown'
                )
            )
        {% if is_incremental() %}offset 0{% endif %}
    ) as known_accesses

),

final as (

    select
        program_key,
        dataset_key,
        access,
        coalesce(component, '') as component,
        bucket,
        array_agg(run_id order by run_at, run_id) as run_ids,
        array_agg(run_at order by run_at, run_id) as run_starts,
        array_agg(stopped_at order by run_at, run_id) as run_stops,
        min(run_at) as earliest_start,
        max(run_at) as latest_start,
        min(coalesce(stopped_at, 'infinity'::timestamptz)) as earliest_stop,
        max(coalesce(stopped_at, 'infinity'::timestamptz)) as latest_stop,
        (select max(batches.finished_at) from batches) as refreshed_through
    from run_accesses
    group by program_key, dataset_key, access, coalesce(component, ''), bucket

)

select * from final

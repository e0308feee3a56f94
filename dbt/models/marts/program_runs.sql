-- One row per program run with what it read and wrote: the run page and the
-- "runs of a program in a window" query read this.
with runs as (

    select * from {{ ref('stg_lineage__runs') }}

),

programs as (

    select * from {{ ref('stg_lineage__programs') }}

),

accesses as (

    select * from {{ ref('stg_lineage__dataset_accesses') }}

),

access_counts as (

    select
        run_key,
        count(*) filter (where access in ('read', 'read_write')) as datasets_read,
        count(*) filter (where access in ('write', 'read_write')) as datasets_written,
        count(*) filter (where access = 'unknown') as datasets_unknown_access
    from accesses
    group by run_key

),

final as (

    select
        -- the program's stored prefix ends where the run id starts (lineage.ids: the last part is kept as is)
        programs.run_id_prefix || runs.run_id as program_run_id,
        programs.program_id,
        runs.namespace,
        programs.application,
        programs.program_type,
        programs.program,
        runs.run_id,
        runs.started_at,
        runs.run_at,
        runs.stopped_at,
        runs.status,
        runs.is_running,
        extract(epoch from runs.stopped_at - runs.started_at) as duration_seconds,
        coalesce(access_counts.datasets_read, 0) as datasets_read,
        coalesce(access_counts.datasets_written, 0) as datasets_written,
        coalesce(access_counts.datasets_unknown_access, 0) as datasets_unknown_access
    from runs
    inner join programs on programs.program_key = runs.program_key
    left join access_counts on access_counts.run_key = runs.run_key

)

select * from final

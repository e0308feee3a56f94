-- Field provenance (the Field Level Lineage design, FLL-2): one row per (destination dataset, field, distinct path)
-- with the path's operations, the source fields it starts from and the runs that produced it.
-- Identical paths recorded by different operation sets (a pipeline that changed elsewhere)
-- share one row.
with paths as (

    select * from {{ ref('stg_lineage__field_paths') }}

),

sets as (

    select * from {{ ref('stg_lineage__field_operation_sets') }}

),

field_runs as (

    select * from {{ ref('stg_lineage__field_lineage_runs') }}

),

runs as (

    select * from {{ ref('stg_lineage__runs') }}

),

final as (

    select
        {{ md5_key(['sets.destination_namespace', 'sets.destination', 'paths.field',
                    'paths.path_fingerprint']) }} as field_path_id,
        sets.destination_namespace as namespace,
        sets.destination as dataset,
        paths.field,
        paths.path_fingerprint,
        (array_agg(paths.path -> 'operations'))[1] as operations,
        (array_agg(paths.path -> 'sources'))[1] as sources,
        count(distinct field_runs.run_key) as run_count,
        min(runs.started_at) as first_run_started_at,
        max(runs.started_at) as last_run_started_at
    from paths
    inner join sets on sets.fingerprint = paths.set_fingerprint
    left join field_runs on field_runs.set_fingerprint = paths.set_fingerprint
    left join runs on runs.run_key = field_runs.run_key
    group by sets.destination_namespace, sets.destination, paths.field, paths.path_fingerprint

)

select * from final

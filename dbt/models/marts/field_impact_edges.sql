-- Field impact (the Field Level Lineage design, FLL-1): one row per (source field -> destination field) with how many
-- runs generated the destination field from the source field, and when first and last.
-- Chain rows (a destination field is itself a source field elsewhere) to follow impact across
-- datasets.
with path_sources as (

    select * from {{ ref('stg_lineage__field_path_sources') }}

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
        {{ md5_key(['path_sources.source_namespace', 'path_sources.source', 'path_sources.source_field',
                    'sets.destination_namespace', 'sets.destination', 'path_sources.field']) }} as field_edge_id,
        path_sources.source_namespace,
        path_sources.source as source_dataset,
        path_sources.source_field,
        sets.destination_namespace,
        sets.destination as destination_dataset,
        path_sources.field as destination_field,
        count(distinct field_runs.run_key) as run_count,
        min(runs.started_at) as first_run_started_at,
        max(runs.started_at) as last_run_started_at
    from path_sources
    inner join sets on sets.fingerprint = path_sources.set_fingerprint
    left join field_runs on field_runs.set_fingerprint = path_sources.set_fingerprint
    left join runs on runs.run_key = field_runs.run_key
    group by path_sources.source_namespace, path_sources.source, path_sources.source_field,
             sets.destination_namespace, sets.destination, path_sources.field

)

select * from final

-- The Metadata and Data Discovery design's lineage relations, grouped: one row per (data, program, access) with how many
-- runs made that access and when first and last.
with accesses as (

    select * from {{ ref('stg_lineage__dataset_accesses') }}

),

datasets as (

    select * from {{ ref('stg_lineage__datasets') }}

),

runs as (

    select * from {{ ref('stg_lineage__runs') }}

),

programs as (

    select * from {{ ref('stg_lineage__programs') }}

),

final as (

    select
        {{ md5_key(['datasets.data_id', 'programs.program_id', 'accesses.access']) }} as lineage_edge_id,
        datasets.data_id,
        programs.program_id,
        datasets.namespace,
        datasets.dataset_type,
        datasets.dataset,
        programs.namespace as program_namespace,
        programs.application,
        programs.program_type,
        programs.program,
        accesses.access,
        count(distinct runs.run_key) as run_count,
        min(accesses.accessed_at) as first_accessed_at,
        max(accesses.accessed_at) as last_accessed_at
    from accesses
    inner join datasets on datasets.dataset_key = accesses.dataset_key
    inner join runs on runs.run_key = accesses.run_key
    inner join programs on programs.program_key = runs.program_key
    group by datasets.data_id, programs.program_id, datasets.namespace, datasets.dataset_type, datasets.dataset,
             programs.namespace, programs.application, programs.program_type, programs.program, accesses.access

)

select * from final

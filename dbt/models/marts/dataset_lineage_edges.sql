-- Seed 001's lineage relations, grouped: one row per (data, program, access) with how many
-- runs made that access and when first and last.
with accesses as (

    select * from {{ ref('stg_lineage__dataset_accesses') }}

),

final as (

    select
        md5(concat_ws('|', data_id, program_id, access)) as lineage_edge_id,
        data_id,
        program_id,
        namespace,
        dataset_type,
        dataset,
        run_namespace,
        application,
        program_type,
        program,
        access,
        count(distinct run_id) as run_count,
        min(accessed_at) as first_accessed_at,
        max(accessed_at) as last_accessed_at
    from accesses
    group by data_id, program_id, namespace, dataset_type, dataset, run_namespace, application,
             program_type, program, access

)

select * from final

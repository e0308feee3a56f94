with source as (

    select * from {{ source('lineage', 'dataset_accesses') }}

),

renamed as (

    select
        concat_ws('.', dataset_type, namespace, dataset) as data_id,
        concat_ws('.', program_type, run_namespace, application, program) as program_id,
        concat_ws('.', run_namespace, application, program_type, program, run_id) as program_run_id,
        namespace,
        dataset_type,
        dataset,
        run_namespace,
        application,
        program_type,
        program,
        run_id,
        access,
        nullif(component, '') as component,
        accessed_at
    from source

)

select * from renamed

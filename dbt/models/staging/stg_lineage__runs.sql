with source as (

    select * from {{ source('lineage', 'runs') }}

),

renamed as (

    select
        concat_ws('.', namespace, application, program_type, program, run_id) as program_run_id,
        concat_ws('.', program_type, namespace, application, program) as program_id,
        namespace,
        application,
        program_type,
        program,
        run_id,
        started_at,
        stopped_at,
        status,
        status = 'running' as is_running
    from source

)

select * from renamed

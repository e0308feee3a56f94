with source as (

    select * from {{ source('lineage', 'runs') }}

),

renamed as (

    select
        run_key,
        program_key,
        namespace,
        run_id,
        started_at,
        stopped_at,
        status,
        status = 'running' as is_running
    from source

)

select * from renamed

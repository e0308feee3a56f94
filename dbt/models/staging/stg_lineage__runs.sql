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
        first_event_at,
        run_at,
        status,
        status = 'running' as is_running,
        first_batch_id as first_compaction_batch_id,
        last_batch_id as last_compaction_batch_id
    from source

)

select * from renamed

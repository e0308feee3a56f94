with source as (

    select * from {{ source('lineage', 'compaction_batches') }}

),

renamed as (

    select
        batch_id as compaction_batch_id,
        dag_run_id,
        interval_end as interval_end_at,
        started_at,
        finished_at,
        files,
        events_read,
        events_compacted,
        duplicates,
        quarantined,
        runs_touched,
        accesses_added
    from source

)

select * from renamed

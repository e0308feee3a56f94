with source as (

    select * from {{ source('lineage', 'programs') }}

),

renamed as (

    select
        program_key,
        -- ids as the core rendered them when the row was written (lineage.ids): never re-joined here
        program_id,
        run_id_prefix,
        namespace,
        application,
        program_type,
        program,
        -- an OpenLineage job's jobType facet as one word (airflow_task, dbt_model, ...; migration 0040)
        job_type,
        entity_key,
        entity as entity_details,
        application_key,
        application_entity as application_details,
        created_at
    from source

)

select * from renamed

with source as (

    select * from {{ source('lineage', 'programs') }}

),

renamed as (

    select
        program_key,
        concat_ws('.', program_type, namespace, application, program) as program_id,
        namespace,
        application,
        program_type,
        program,
        entity_key,
        entity as entity_details,
        application_key,
        application_entity as application_details,
        created_at
    from source

)

select * from renamed

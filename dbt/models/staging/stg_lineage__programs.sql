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
        created_at
    from source

)

select * from renamed

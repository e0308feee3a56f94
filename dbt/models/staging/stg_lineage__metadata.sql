with source as (

    select * from {{ source('lineage', 'metadata') }}

),

renamed as (

    select
        entity_key,
        entity_type,
        namespace,
        entity as entity_details,
        grant_key,
        scope,
        kind,
        key,
        value,
        updated_at,
        updated_by
    from source

)

select * from renamed

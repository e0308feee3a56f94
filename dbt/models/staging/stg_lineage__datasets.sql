with source as (

    select * from {{ source('lineage', 'datasets') }}

),

renamed as (

    select
        dataset_key,
        data_id,  -- as the core rendered it when the row was written (lineage.ids)
        namespace,
        dataset_type,
        dataset,
        entity_key,
        entity as entity_details,
        created_at
    from source

)

select * from renamed

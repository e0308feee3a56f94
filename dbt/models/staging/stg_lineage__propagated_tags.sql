with source as (

    select * from {{ source('lineage', 'propagated_tags') }}

),

renamed as (

    select
        namespace,
        dataset_type,
        dataset,
        field,
        tag,
        origin_namespace,
        origin_type,
        origin_dataset,
        origin_field,
        levels,
        field_key,  -- keys as the core rendered them (lineage.model.metadata_entity)
        field_details,
        dataset_key,
        first_seen,
        last_seen
    from source

)

select * from renamed

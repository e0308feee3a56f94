with source as (

    select * from {{ source('lineage', 'field_edges') }}

),

renamed as (

    select
        set_fingerprint,
        field,
        kind,
        subtype,
        masking,
        operations,
        field_key,  -- keys as the core rendered them (lineage.model.metadata_entity)
        field_details,
        dataset_key
    from source

)

select * from renamed

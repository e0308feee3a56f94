with source as (

    select * from {{ source('lineage', 'datasets') }}

),

renamed as (

    select
        dataset_key,
        concat_ws('.', dataset_type, namespace, dataset) as data_id,
        namespace,
        dataset_type,
        dataset,
        entity_key,
        entity as entity_details,
        created_at
    from source

)

select * from renamed

with source as (

    select * from {{ source('lineage', 'dataset_aliases') }}

),

renamed as (

    select
        namespace,
        alias,
        alias_type,
        dataset_key,
        event_time as recorded_at
    from source

)

select * from renamed

with source as (

    select * from {{ source('lineage', 'dataset_accesses') }}

),

renamed as (

    select
        dataset_key,
        run_key,
        namespace,
        access,
        nullif(component, '') as component,
        accessed_at
    from source

)

select * from renamed

with source as (

    select * from {{ source('lineage', 'field_paths') }}

)

select * from source

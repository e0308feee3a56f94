with source as (

    select * from {{ source('lineage', 'field_path_sources') }}

)

select * from source

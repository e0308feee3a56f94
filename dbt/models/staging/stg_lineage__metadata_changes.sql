with source as (

    select * from {{ source('lineage', 'metadata_changes') }}

)

select * from source

with source as (

    select * from {{ source('lineage', 'field_lineage_runs') }}

)

select * from source

with source as (

    select * from {{ source('lineage', 'field_operation_sets') }}

)

select * from source

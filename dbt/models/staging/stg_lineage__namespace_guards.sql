with source as (

    select * from {{ source('lineage', 'namespace_guards') }}

)

select * from source

{#- Re-derive the search rows of entities whose metadata changed since this dbt invocation
    started (with a margin for transactions that committed late): a write made during the
    rebuild went to the table being replaced. -#}
{% macro refresh_changed_search_entities(relation) -%}
with changed as (
    select distinct entity_key from {{ source('lineage', 'metadata_changes') }}
    where changed_at >= '{{ run_started_at.isoformat() }}'::timestamptz - interval '10 minutes'
),
removed as (
    delete from {{ relation }} where entity_key in (select entity_key from changed)
)
insert into {{ relation }}
select * from {{ ref('metadata_search_terms') }} where entity_key in (select entity_key from changed)
{%- endmacro %}

{#- One key=value part of a metadata entity key, as lineage.metadata_entity renders it: the
    value escaped with a backslash before '\', ',' and '='. Both arguments are SQL expressions
    (keys are [a-z0-9_] and need no escaping). Join parts with ','. -#}
{% macro entity_key_part(key_sql, value_sql) -%}
{{ key_sql }} || '=' || replace(replace(replace({{ value_sql }}, '\', '\\'), ',', '\,'), '=', '\=')
{%- endmacro %}

{#- The entity's parts as stored in lineage.metadata.entity: [{"key": ..., "value": ...}, ...]. -#}
{% macro entity_details(pairs) -%}
jsonb_build_array(
    {%- for key_sql, value_sql in pairs %}
    jsonb_build_object('key', {{ key_sql }}, 'value', {{ value_sql }}){% if not loop.last %},{% endif %}
    {%- endfor %}
)
{%- endmacro %}

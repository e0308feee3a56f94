{#- The md5 key of a mart row from its identifying columns (``parts``: SQL expressions), the
    one way the marts build one. The parts are joined by '|' with, in each, '\' written '\\' and
    '|' written '\|' (a NULL part as '\N'), so a name holding '|' cannot pass for two parts and
    two distinct rows never share a key's text; parts holding neither give the key plain
    md5(concat_ws('|', ...)) gave before names could hold any text (issue 28, item 9). -#}
{% macro md5_key(parts) -%}
md5(concat_ws('|'
{%- for part in parts %}, coalesce(replace(replace({{ part }}, '\', '\\'), '|', '\|'), '\N'){% endfor -%}
))
{%- endmacro %}

{#- A run the lineage walk cannot place by its start day alone: no recorded start, still
    running, or longer than a day. Same predicate as the partial index runs_long_or_running
    (migration 0003), so the incremental build finds these runs by that index. -#}
{% macro long_or_running(runs) -%}
({{ runs }}.started_at is null or {{ runs }}.stopped_at is null
 or {{ runs }}.stopped_at - {{ runs }}.started_at > interval '1 day')
{%- endmacro %}

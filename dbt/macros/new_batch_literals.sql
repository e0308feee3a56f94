{#- The ids of the compaction batches finished since this incremental model's last build (its
    newest refreshed_through), as a SQL list of quoted literals; 'null' matches nothing. -#}
{% macro new_batch_literals() -%}
{%- if execute -%}
{%- set found = run_query(
    "select batch_id from " ~ source('lineage', 'compaction_batches') ~ " where finished_at > "
    ~ "(select coalesce(max(refreshed_through), '-infinity'::timestamptz) from " ~ this ~ ") order by batch_id"
) -%}
{%- set ids = found.columns[0].values() -%}
{%- if ids | length == 0 -%}null{%- else -%}
{%- for batch_id in ids -%}'{{ batch_id | replace("'", "''") }}'{{ ", " if not loop.last }}{%- endfor -%}
{%- endif -%}
{%- else -%}null{%- endif -%}
{%- endmacro %}

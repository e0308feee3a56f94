{#- What appeared and disappeared, day by day, in ``days`` (a relation with the ``keys`` columns
    and ``day``): a key 'appeared' on a day it is there and was not the day before, 'disappeared'
    on the day after one it was there and is not; days after the first and up to the last of
    ``bounds`` (first_day, last_day) only, so the edges of the data are no change. -#}
{% macro day_changes(days, keys, bounds) -%}
    select {% for key in keys %}today.{{ key }}, {% endfor %}today.day, 'appeared' as change
    from {{ days }} as today
    cross join {{ bounds }} as bounds
    where today.day > bounds.first_day
        and not exists (
            select 1 from {{ days }} as before
            where {% for key in keys %}before.{{ key }} = today.{{ key }} and {% endfor %}before.day = today.day - 1
        )

    union all

    select {% for key in keys %}before.{{ key }}, {% endfor %}before.day + 1 as day, 'disappeared' as change
    from {{ days }} as before
    cross join {{ bounds }} as bounds
    where before.day < bounds.last_day
        and not exists (
            select 1 from {{ days }} as today
            where {% for key in keys %}today.{{ key }} = before.{{ key }} and {% endfor %}today.day = before.day + 1
        )
{%- endmacro %}

-- What changed, day by day: the lineage edges (a program's read or write of a data) and the field
-- sources (a destination field computed from a source field) that appeared or disappeared on a
-- UTC day, against the day before. Alert on it with SQL, e.g. the new consumers of a dataset:
--   select * from lineage_marts.lineage_changes
--   where day = current_date and kind = 'edge' and change = 'appeared' and access = 'read'
--
-- A day is a run's day (its time: the start, or else the earliest event). An edge or field
-- source 'appeared' on a day when runs used it that day and none the day before; it
-- 'disappeared' on a day when runs used it the day before and none that day. The first day the
-- warehouse holds has nothing to compare with (no rows), and a day after the last day it holds
-- is not judged yet. A job that runs less often than daily appears and disappears with its runs:
-- compare longer windows with the API's /lineage/diff or `lineage diff`.
--
-- Built from the walk's mart (one row per program, data, access and day bucket) and the field
-- lineage runs grouped by operation set and day before their sources are joined, so a build
-- reads tens of thousands of rows, not every access.
with walk as (

    select * from {{ ref('lineage_walk') }}

),

field_runs as (

    select * from {{ ref('stg_lineage__field_lineage_runs') }}

),

runs as (

    select * from {{ ref('stg_lineage__runs') }}

),

path_sources as (

    select * from {{ ref('stg_lineage__field_path_sources') }}

),

datasets as (

    select * from {{ ref('stg_lineage__datasets') }}

),

programs as (

    select * from {{ ref('stg_lineage__programs') }}

),

edge_days as (

    select distinct program_key, dataset_key, access, bucket as day
    from walk
    where bucket <> '-infinity'::date

),

set_days as (

    select distinct field_runs.dataset_key, field_runs.set_fingerprint,
        (runs.run_at at time zone 'UTC')::date as day
    from field_runs
    inner join runs on runs.run_key = field_runs.run_key
    where runs.run_at is not null

),

source_days as (

    select distinct set_days.dataset_key, path_sources.field, path_sources.source_namespace,
        path_sources.source_type, path_sources.source, path_sources.source_field, set_days.day
    from set_days
    inner join path_sources on path_sources.set_fingerprint = set_days.set_fingerprint

),

bounds as (

    select least(
            (select min(day) from edge_days), (select min(day) from source_days)) as first_day,
        greatest(
            (select max(day) from edge_days), (select max(day) from source_days)) as last_day

),

edge_changes as (

    {{ day_changes('edge_days', ['program_key', 'dataset_key', 'access'], 'bounds') }}

),

source_changes as (

    {{ day_changes('source_days', ['dataset_key', 'field', 'source_namespace', 'source_type', 'source',
                                   'source_field'], 'bounds') }}

),

final as (

    select
        {{ md5_key(["'edge'", 'edge_changes.day::text', 'edge_changes.change', 'datasets.data_id',
                    'programs.program_id', 'edge_changes.access']) }} as lineage_change_id,
        edge_changes.day,
        edge_changes.change,
        'edge' as kind,
        datasets.data_id,
        datasets.namespace,
        datasets.dataset_type,
        datasets.dataset,
        programs.program_id,
        programs.namespace as program_namespace,
        programs.application,
        programs.program_type,
        programs.program,
        edge_changes.access,
        cast(null as text) as field,
        cast(null as text) as source_namespace,
        cast(null as text) as source_type,
        cast(null as text) as source,
        cast(null as text) as source_field
    from edge_changes
    inner join datasets on datasets.dataset_key = edge_changes.dataset_key
    inner join programs on programs.program_key = edge_changes.program_key

    union all

    select
        {{ md5_key(["'field_source'", 'source_changes.day::text', 'source_changes.change', 'datasets.data_id',
                    'source_changes.field', 'source_changes.source_namespace', 'source_changes.source_type',
                    'source_changes.source', 'source_changes.source_field']) }} as lineage_change_id,
        source_changes.day,
        source_changes.change,
        'field_source' as kind,
        datasets.data_id,
        datasets.namespace,
        datasets.dataset_type,
        datasets.dataset,
        cast(null as text) as program_id,
        cast(null as text) as program_namespace,
        cast(null as text) as application,
        cast(null as text) as program_type,
        cast(null as text) as program,
        cast(null as text) as access,
        source_changes.field,
        source_changes.source_namespace,
        source_changes.source_type,
        source_changes.source,
        source_changes.source_field
    from source_changes
    inner join datasets on datasets.dataset_key = source_changes.dataset_key

)

select * from final

{{ config(materialized='view') }}
-- Every searchable term of every entity known to search (the Metadata and Data Discovery design, R6, R7, R12, R13): an entity
-- is known once it has metadata or lineage. One row per (entity, scope, kind, key, value):
--   name      the entity's own name (its last part), SYSTEM scope; a dataset named by its
--             identity (`s3://lake/sales/2026`, lineage.naming.identity) also has a name row per part of
--             it (`s3`, `lake`, `sales`, `2026`), so any part finds it, and one for its OpenLineage
--             name and each of its trailing segments (`sales/2026`, `2026`)
--   tag       a tag (key 'tags')
--   property  a property value under its key (the SYSTEM schema property shows as its fields; an
--             OpenLineage job's type, from its jobType facet, is a SYSTEM property of its program
--             under key 'jobType': `airflow_dag`, `airflow_task`, `dbt_model`, ...; migration 0040)
--   field     a field of the dataset's SYSTEM schema (key 'field')
--   alias     another name of a dataset (OpenLineage's symlinks; key 'alias'), SYSTEM scope
--   propagated_tag  a tag that reached a field along field lineage (key 'tags', SYSTEM scope;
--             warehouse.pipeline.tag_propagation), on the field and on its dataset
--   operation a transform step a field was made by (key 'op': `sha2`, `concat`), SYSTEM scope
--   transform how a field was made from a source field (key 'transform': its subtype,
--             `AGGREGATION`, `TRANSFORMATION`, ..., and `MASKED` for a masking step), SYSTEM scope
-- `term` is the lower-cased value (its first 200 characters, what a btree can index) and
-- `key_term` the lower-cased key, both in the "C" collation: byte order lets one plain btree
-- index serve prefix LIKE, ORDER BY and the `>` steps of suggest's skip scan. The search index (`lineage.search_index`, no
-- dbt model: warehouse.db.metadata_search is its one writer) holds this view's rows, rebuilt from it after each build of
-- it; each API write refreshes one entity's rows from it: the import CTEs are NOT MATERIALIZED
-- so that its `entity_key = any(...)` reaches the tables' indexes (a materialized CTE read the
-- whole metadata table per write: 1 s at 1M rows), and every CTE is read once (PostgreSQL
-- materializes one read twice: names and their parts read apart took 4 s per write at 1M rows).
-- The System Applications (CDAP 6.0) design's race guard: while a deleted namespace awaits its cleanup, rows of it created
-- before its re-creation (`namespace_guards.visible_since`) are left out.
with metadata as not materialized (

    select * from {{ ref('stg_lineage__metadata') }}

),

datasets as not materialized (

    select * from {{ ref('stg_lineage__datasets') }}

),

programs as not materialized (

    select * from {{ ref('stg_lineage__programs') }}

),

dataset_aliases as not materialized (

    select * from {{ ref('stg_lineage__dataset_aliases') }}

),

tags as (

    select entity_key, namespace, entity_type, entity_details, grant_key, scope, 'tag' as kind, 'tags' as key, key as value,
           updated_at as created_at
    from metadata
    where kind = 'tag'

),

properties as (

    select entity_key, namespace, entity_type, entity_details, grant_key, scope, 'property' as kind, key, value,
           updated_at as created_at
    from metadata
    where kind = 'property' and not (scope = 'SYSTEM' and key = 'schema')

),

schema_fields as (

    select m.entity_key, m.namespace, m.entity_type, m.entity_details, m.grant_key, m.scope, 'field' as kind, 'field' as key,
           f.field ->> 'name' as value, m.updated_at as created_at
    from metadata as m
    cross join lateral jsonb_array_elements(m.value::jsonb -> 'fields') as f (field)
    where m.scope = 'SYSTEM' and m.kind = 'property' and m.key = 'schema'

),

aliases as (

    select datasets.entity_key, datasets.namespace, datasets.dataset_type as entity_type, datasets.entity_details,
           datasets.entity_key as grant_key, 'SYSTEM' as scope, 'alias' as kind, 'alias' as key,
           dataset_aliases.alias as value, dataset_aliases.recorded_at as created_at
    from dataset_aliases
    inner join datasets on datasets.dataset_key = dataset_aliases.dataset_key

),

propagated as not materialized (

    select * from {{ ref('stg_lineage__propagated_tags') }}

),

propagated_tags as (

    -- on the field, and on its dataset (which holds a field carrying the tag); the dataset's
    -- READ grant shows both
    select field_key as entity_key, namespace, 'field' as entity_type, field_details as entity_details,
           dataset_key as grant_key, 'SYSTEM' as scope, 'propagated_tag' as kind, 'tags' as key, tag as value,
           min(first_seen) as created_at
    from propagated
    group by field_key, namespace, field_details, dataset_key, tag

    union all

    select datasets.entity_key, datasets.namespace, datasets.dataset_type, datasets.entity_details, datasets.entity_key,
           'SYSTEM', 'propagated_tag', 'tags', propagated.tag, min(propagated.first_seen)
    from propagated
    inner join datasets
        on datasets.namespace = propagated.namespace and datasets.dataset_type = propagated.dataset_type
        and datasets.dataset = propagated.dataset
    group by datasets.entity_key, datasets.namespace, datasets.dataset_type, datasets.entity_details, propagated.tag

),

field_edges as not materialized (

    select * from {{ ref('stg_lineage__field_edges') }}

),

field_operations as (

    -- what made each written field, from the field lineage (any time): its steps and its kinds
    select distinct field_edges.field_key as entity_key, datasets.namespace, 'field' as entity_type,
           field_edges.field_details as entity_details, field_edges.dataset_key as grant_key, 'SYSTEM' as scope,
           made.kind, made.key, made.value, datasets.created_at
    from field_edges
    inner join datasets on datasets.entity_key = field_edges.dataset_key
    cross join lateral (

        select 'operation' as kind, 'op' as key, step as value
        from unnest(field_edges.operations) as step

        union all

        select 'transform', 'transform', field_edges.subtype
        where field_edges.subtype <> ''

        union all

        select 'transform', 'transform', 'MASKED'
        where field_edges.masking

    ) as made

),

lineage_entities as (

    -- keys and parts as the core rendered them when the rows were written (warehouse.db.entity_keys)
    select entity_key, namespace, dataset_type as entity_type, entity_details, entity_key as grant_key, created_at
    from datasets

    union all

    select entity_key, namespace, 'program', entity_details, entity_key, created_at
    from programs

    union all

    select application_key, namespace, 'application', min(application_details::text)::jsonb, null, max(created_at)
    from programs
    group by namespace, application_key

),

named_entities as (

    select entity_key, namespace, entity_type, entity_details, grant_key, updated_at as created_at from metadata
    union all
    select entity_key, namespace, entity_type, entity_details, grant_key, created_at from lineage_entities

),

entity_names as (

    select distinct on (entity_key)
        entity_key, namespace, entity_type, entity_details, grant_key, entity_details -> -1 ->> 'value' as name,
        created_at
    from named_entities
    order by entity_key, created_at desc

),

names as (

    -- the entity's name, and each part of a dataset's identity that is not the whole name (once),
    -- in one pass over entity_names (see above)
    select
        entity_names.entity_key, entity_names.namespace, entity_names.entity_type, entity_names.entity_details,
        entity_names.grant_key, 'SYSTEM' as scope, 'name' as kind, '' as key, name_terms.value,
        entity_names.created_at
    from entity_names
    cross join lateral (

        select entity_names.name as value

        union

        select part
        from regexp_split_to_table(entity_names.name, '[/.:@]+') as part
        where entity_names.entity_type in ('dataset', 'stream') and strpos(entity_names.name, '/') > 0 and part <> ''

        union

        -- the OpenLineage name (the identity without its namespace: `shop.public.orders` of
        -- `postgres://db:5432/shop.public.orders`) and each of its trailing segments
        -- (`public.orders`, `sales/2026`), the names people know a table or a path by
        select substr(ol.name, position)
        from (
            select regexp_replace(entity_names.name, '^([A-Za-z][A-Za-z0-9+.-]*://)?[^/]*/', '') as name
        ) as ol
        cross join generate_series(1, length(ol.name)) as position
        where entity_names.entity_type in ('dataset', 'stream') and strpos(entity_names.name, '/') > 0
            and (position = 1 or substr(ol.name, position - 1, 1) in ('.', '/'))

    ) as name_terms

),

job_types as (

    select entity_key, namespace, 'program' as entity_type, entity_details, entity_key as grant_key,
           'SYSTEM' as scope, 'property' as kind, 'jobType' as key, job_type as value, created_at
    from programs
    where job_type is not null

),

terms as (

    select * from names
    union all
    select * from job_types
    union all
    select * from tags
    union all
    select * from properties
    union all
    select * from schema_fields
    union all
    select * from aliases
    union all
    select * from propagated_tags
    union all
    select * from field_operations

),

final as (

    select
        entity_key,
        namespace,
        entity_type,
        entity_details,
        scope,
        kind,
        key,
        value,
        lower(key) collate "C" as key_term,
        left(lower(value), 200) collate "C" as term,
        -- the dataset, stream or program a READ grant on which shows this row, as the core
        -- decided when the row was written (warehouse.service.authorization.grant_key)
        grant_key
    from terms
    where not exists (
        select from {{ ref('stg_lineage__namespace_guards') }} as guard
        where guard.namespace = terms.namespace and terms.created_at < guard.visible_since
    )

)

select * from final

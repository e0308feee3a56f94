{{ config(
    materialized='table',
    indexes=[
        {'columns': ['term']},
        {'columns': ['key_term', 'term']},
        {'columns': ['entity_key']},
        {'columns': ['namespace']},
    ],
    post_hook=[
        "analyze {{ this }}",
        "{{ refresh_changed_search_entities(this) }}",
    ],
) }}
-- The search index (the Metadata and Data Discovery design, "Search"): metadata_search_terms materialized with the indexes
-- prefix search needs. Rebuilt by the compaction DAG; the API keeps it current between builds
-- by refreshing the rows of each entity it changes (warehouse.db.metadata_search.refresh). The
-- post-hook re-applies the changes made while this table was being rebuilt.
-- depends_on: {{ ref('stg_lineage__metadata_changes') }}
select * from {{ ref("metadata_search_terms") }}

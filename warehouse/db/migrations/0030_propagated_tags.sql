-- Tags that follow the data (issue 33): the fields each tag with a propagation policy reached
-- from the fields people assigned it to, over the field lineage of the propagation window, with
-- the path it took (edges: operations, transformation, program, runs). Rewritten whole by the
-- propagation stage of the compaction DAG (warehouse.pipeline.tag_propagation); assigned tags
-- stay in lineage.metadata, distinct from these.
create table lineage.propagated_tags (
    namespace           text not null,
    dataset_type        text not null,
    dataset             text not null,
    field               text not null,
    tag                 text not null,
    origin_namespace    text not null,          -- the field the tag is assigned to
    origin_type         text not null,
    origin_dataset      text not null,
    origin_field        text not null,
    levels              integer not null,       -- edges from the origin
    path                jsonb not null,         -- the edges, origin first
    runs                text[] not null,        -- the runs of its edges
    first_seen          timestamptz not null,
    last_seen           timestamptz not null,
    window_start        timestamptz not null,   -- the window it was computed over
    window_end          timestamptz not null,
    -- keys as the core renders them (lineage.model.metadata_entity), for search to read, not rebuild
    field_key           text not null,          -- the field's metadata entity key
    field_details       jsonb not null,         -- its key=value parts, in order
    dataset_key         text not null,          -- its dataset's entity key (what a READ grant on shows it)
    primary key (namespace, dataset_type, dataset, field, tag, origin_namespace, origin_type, origin_dataset,
                 origin_field)
);
create index propagated_tags_by_tag on lineage.propagated_tags (tag, namespace);

-- What OpenLineage events carry beside runs and accesses (issue 16): the run hierarchy, facets
-- kept as they are (for export later), warnings about a run's events, and dataset aliases.
-- Each table is filled by the compaction's merge from the raw kinds run_parent, run_facets and
-- dataset_facets; every row keeps the event time that decides which event wins, so a run's rows
-- come out the same whatever order its events are compacted in.

-- A run's parent run and the root run of its hierarchy (an Airflow DAG run of a task run, a
-- Spark application of its queries, a dbt command of its models). The linked run is named as
-- the warehouse names runs, by its program's identity and run id (runs are unique per program
-- and run id), not by run_key: it may arrive after the child, or never, and the link holds.
create table lineage.run_parents (
    run_key         bigint not null references lineage.runs (run_key),
    relation        text not null check (relation in ('parent', 'root')),
    namespace       text not null,
    application     text not null,
    program_type    text not null,
    program         text not null,
    run_id          text not null,
    event_time      timestamptz not null,   -- of the event that said so: the latest wins
    batch_id        text not null,
    primary key (run_key, relation)
);
-- A run's children (and the runs under a root): by the linked run's identity.
create index run_parents_by_linked_run on lineage.run_parents (namespace, application, program_type, program,
                                                                run_id, relation);

-- Run and job facets of a run's events, one row per facet name: the latest event's facet wins.
create table lineage.run_facets (
    run_key         bigint not null references lineage.runs (run_key),
    facet_of        text not null check (facet_of in ('run', 'job')),
    name            text not null,
    facet           jsonb not null,
    event_time      timestamptz not null,
    batch_id        text not null,
    primary key (run_key, facet_of, name)
);

-- What a run's events were accepted with but should not have had, e.g. an eventTime without
-- offset (read as UTC) or a facet dropped for its size. Each warning once per run.
create table lineage.run_warnings (
    run_key         bigint not null references lineage.runs (run_key),
    warning         text not null,
    first_seen_at   timestamptz not null,   -- the earliest event time that carried it
    primary key (run_key, warning)
);

-- Dataset facets, one row per facet name: the latest event's facet wins.
create table lineage.dataset_facets (
    dataset_key     bigint not null references lineage.datasets (dataset_key),
    name            text not null,
    facet           jsonb not null,
    event_time      timestamptz not null,
    batch_id        text not null,
    primary key (dataset_key, name)
);

-- Other names of a dataset (OpenLineage's symlinks: a Hive table naming a storage location):
-- an alias is no dataset of its own; a lookup by the alias finds dataset_key. One dataset per
-- alias: the latest event wins.
create table lineage.dataset_aliases (
    namespace       text not null,          -- the alias's warehouse namespace
    alias           text not null,          -- named as datasets are (a rendered OpenLineage identity)
    alias_type      text not null,          -- the symlink's type: TABLE, LOCATION, ...
    dataset_key     bigint not null references lineage.datasets (dataset_key),
    event_time      timestamptz not null,
    batch_id        text not null,
    primary key (namespace, alias)
);
create index dataset_aliases_by_dataset on lineage.dataset_aliases (dataset_key);

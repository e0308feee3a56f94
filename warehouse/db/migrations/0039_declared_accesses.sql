-- Declared lineage (issue 30, item 2): the datasets a program declares it reads and writes
-- without a run (an OpenLineage JobEvent: a dbt manifest, a view's definition, a design-time
-- pipeline). A program's declaration is its latest one (by event time): the compaction keeps the
-- accesses declared at that time (declared_at, the latest declaration holding each) and drops the
-- others, so arrival order does not matter; first_declared_at is the earliest declaration
-- holding the access, from which the walk's windows show it. Declared lineage is never a run: the
-- walk returns it beside runtime relations, marked declared.
create table lineage.declared_accesses (
    program_key         bigint not null references lineage.programs (program_key),
    dataset_key         bigint not null references lineage.datasets (dataset_key),
    access              text not null check (access in ('read', 'write', 'read_write', 'unknown')),
    first_declared_at   timestamptz not null,
    declared_at         timestamptz not null,
    batch_id            text not null,
    primary key (program_key, dataset_key, access)
);
-- The walk's half-steps: data -> programs (the primary key serves programs -> data); a batch's
-- programs, whose older declarations the compaction drops.
create index declared_accesses_dataset on lineage.declared_accesses (dataset_key, program_key);
create index declared_accesses_batch on lineage.declared_accesses (batch_id);

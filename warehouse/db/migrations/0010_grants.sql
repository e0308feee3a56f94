-- Authorization (seed 000): privileges granted to Airflow users on enforceable entities (the
-- instance, a namespace, a dataset or stream, a program). One row per (principal, entity):
-- the privilege held there, which includes the lesser ones (ADMIN > WRITE > READ).
create table lineage.grants (
    principal       text not null,
    entity_key      text not null,                  -- lineage.authorization: 'instance' or an entity key
    namespace       text,                           -- null for the instance
    privilege       text not null check (privilege in ('READ', 'WRITE', 'ADMIN')),
    granted_by      text not null,
    granted_at      timestamptz not null default now(),
    primary key (principal, entity_key)
);
create index grants_by_namespace on lineage.grants (namespace);

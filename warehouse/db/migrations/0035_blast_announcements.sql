-- The blast radius announced (issue 33): the compaction DAG emits one Airflow asset event per
-- dataset an incident's bad writes reached (warehouse.pipeline.blast_announcements); each
-- (incident, dataset) once, however many runs later reach it again. An incident's rows leave with it.
create table lineage.blast_announcements (
    incident_id     bigint not null references lineage.dataset_incidents (incident_id) on delete cascade,
    namespace       text not null,
    dataset_type    text not null,
    dataset         text not null,
    level           integer not null,       -- runs away from the bad writes (0: the bad dataset itself)
    announced_at    timestamptz not null default now(),
    primary key (incident_id, namespace, dataset_type, dataset)
);

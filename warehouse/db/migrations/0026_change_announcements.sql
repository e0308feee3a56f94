-- What changed, announced (issue 32): the rows of lineage_marts.lineage_changes the compaction
-- DAG has emitted as Airflow asset events, so each change is announced once.
create table lineage.change_announcements (
    lineage_change_id   text primary key,
    day                 date not null,
    announced_at        timestamptz not null default now()
);

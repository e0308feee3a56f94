-- The job type of an OpenLineage job (issue 30, item 3): its `jobType` job facet (integration,
-- jobType) as one word, `airflow_dag`, `airflow_task`, `spark_application`, `spark_sql_job`,
-- `dbt_model`, `dbt_job`, `flink_job`, ... (lineage.job_type), kept with the program: the latest
-- event's (job_type_at). The program's identity keeps its type (`openlineage`): a parent facet
-- and an event without the facet name the job by namespace and name only, as in OpenLineage.
alter table lineage.programs
    add column job_type text,
    add column job_type_at timestamptz;

create function lineage.job_type(facet jsonb) returns text
language sql immutable as $$
    select case when word ~ '^[a-z][a-z0-9_]{0,31}$' then word end
    from (select rtrim(left(trim(both '_' from regexp_replace(
                     lower(coalesce(facet ->> 'integration', '') || '_' || coalesce(facet ->> 'jobType', '')),
                     '[^a-z0-9]+', '_', 'g')), 32), '_') as word) as named
$$;

-- Programs whose runs carried the facet before this migration.
update lineage.programs p
set job_type = latest.job_type, job_type_at = latest.event_time
from (
    select distinct on (r.program_key) r.program_key, lineage.job_type(f.facet) as job_type, f.event_time
    from lineage.run_facets f
    join lineage.runs r using (run_key)
    where f.facet_of = 'job' and f.name = 'jobType' and lineage.job_type(f.facet) is not null
    order by r.program_key, f.event_time desc, lineage.job_type(f.facet) desc
) as latest
where p.program_key = latest.program_key;

-- Answers name their programs by id: their job types are found by it.
create index programs_program_id on lineage.programs (program_id);

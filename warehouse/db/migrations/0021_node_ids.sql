-- Node ids (lineage.ids) are rendered once, by the core, and stored with each row, as entity keys
-- are (migration 0011): dbt reads them instead of joining the parts again, so the marts key
-- programs, data and program runs by the ids the API answers with. Parts joined by '.' gave
-- application a.b with program c and application a with program b.c one program id, which failed
-- dbt's unique test and with it every compaction DAG run (issue 28, item 9). Rows written before
-- this migration (and rows a bulk merge just inserted) are filled by warehouse.entity_keys in the
-- same transaction. No unique constraint: dbt's tests check the ids, a compaction never fails on one.
alter table lineage.programs
    add column program_id text,             -- type.namespace.application.program, parts escaped
    add column run_id_prefix text;          -- namespace.application.type.program. : its run ids are this || run_id
alter table lineage.datasets
    add column data_id text;                -- type.namespace.name

-- What the fill step after each bulk insert looks for: few rows each time, found without a scan.
create index programs_without_id on lineage.programs (program_key) where program_id is null;
create index datasets_without_id on lineage.datasets (dataset_key) where data_id is null;

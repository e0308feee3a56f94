-- A program's declared lineage is its latest declaration (issue 30 item 2), and a declaration is
-- the whole of it: an OpenLineage JobEvent listing no dataset ends what the job declared before,
-- and a declaration older than the latest, compacted after it, adds nothing. The accesses alone
-- could not say either (the latest declaration was the latest access kept), so each program's
-- latest declaration time is kept here; the compaction drops the accesses declared before it.
create table lineage.program_declarations (
    program_key         bigint primary key references lineage.programs (program_key),
    declared_at         timestamptz not null
);
insert into lineage.program_declarations (program_key, declared_at)
select program_key, max(declared_at) from lineage.declared_accesses group by program_key;

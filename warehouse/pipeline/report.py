"""The summary ``make demo`` ends with: ``python -m warehouse.pipeline.report --since TIME``."""

from __future__ import annotations

import argparse
import sys
from datetime import datetime

from psycopg import sql

from lineage.naming.identity import PROGRAM_TYPE
from lineage.settings import Settings, libpq_url, redact_url
from warehouse.db.connection import connect

TABLE_SCHEMAS = ("lineage", "lineage_marts")

# Per OpenLineage job namespace (an application of programs of type openlineage): its runs, jobs,
# the datasets they wrote, and the destination fields with column lineage.
_OPENLINEAGE = """
with runs as (
    select p.application, r.run_key, r.program_key
    from lineage.runs r join lineage.programs p using (program_key)
    where p.program_type = %(program_type)s
),
written as (
    select runs.application, count(distinct a.dataset_key) as datasets
    from runs join lineage.dataset_accesses a using (run_key)
    where a.access in ('write', 'read_write')
    group by runs.application
),
fields as (
    select runs.application, count(distinct (l.dataset_key, f.field)) as fields
    from runs
    join lineage.field_lineage_runs l using (run_key)
    join lineage.field_paths f on f.set_fingerprint = l.set_fingerprint
    group by runs.application
)
select runs.application, count(distinct runs.run_key), count(distinct runs.program_key),
       coalesce(max(written.datasets), 0), coalesce(max(fields.fields), 0)
from runs
left join written using (application)
left join fields using (application)
group by runs.application
order by runs.application
"""


def render_report(database_url: str, since: datetime | None) -> str:
    """Batches compacted since ``since``, the OpenLineage producers' runs, and every warehouse
    table and mart with its row count."""
    lines: list[str] = []
    with connect(database_url, autocommit=True) as conn:
        batches = conn.execute(
            """select count(*), coalesce(sum(files), 0), coalesce(sum(events_read), 0),
                      coalesce(sum(events_compacted), 0), coalesce(sum(duplicates), 0),
                      coalesce(sum(quarantined), 0)
               from lineage.compaction_batches where %(since)s::timestamptz is null or finished_at >= %(since)s""",
            {"since": since},
        ).fetchone()
        assert batches is not None
        count, files, read, compacted, duplicates, quarantined = batches
        if count:
            lines.append(
                f"Compacted: {files} raw files, {read} events read, {compacted} events compacted, "
                f"{duplicates} duplicates ignored, {quarantined} events quarantined"
            )
        else:
            lines.append("Compacted: nothing new (every raw file was already compacted)")
        producers = conn.execute(_OPENLINEAGE, {"program_type": PROGRAM_TYPE}).fetchall()
        if producers:
            lines.append("OpenLineage runs (programs of type openlineage), by job namespace:")
        for application, runs, jobs, datasets, fields in producers:
            lines.append(f"  {application:<10} {runs:>5} runs of {jobs} jobs, {datasets} datasets written, "
                         f"{fields} fields with column lineage")
        tables = conn.execute(
            """select table_schema, table_name, table_type from information_schema.tables
               where table_schema = any(%s) and table_name <> 'schema_migrations'
               order by table_schema, table_name""",
            (list(TABLE_SCHEMAS),),
        ).fetchall()
        for schema, table, kind in tables:
            rows = conn.execute(sql.SQL("select count(*) from {}").format(sql.Identifier(schema, table))).fetchone()
            label = "mart " if schema == "lineage_marts" else "table"
            view = " (view)" if kind == "VIEW" else ""
            lines.append(f"  {label} {schema + '.' + table:<40} {rows[0] if rows else 0:>8} rows{view}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Summarise what the warehouse holds.")
    parser.add_argument("--since", help="only count compactions finished at or after this time (ISO 8601)")
    args = parser.parse_args(argv)
    settings = Settings.from_env()
    since = datetime.fromisoformat(args.since) if args.since else None
    print(render_report(settings.database_url, since))
    print(f"Warehouse: psql {redact_url(libpq_url(settings.database_url))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

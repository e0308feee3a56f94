"""Benchmark: what the warehouse stores for a platform's OpenLineage events (issue 30 item 8).

A platform of Airflow tasks (``bench.openlineage_ingest.task_events``: START, RUNNING and COMPLETE
of each task run, two inputs and an output with its 20-field schema and column lineage) runs
hourly, up to the current hour (so the event-id ledger keeps what its 7-day retention keeps).
Each hour is compacted, its field lineage derived and its metadata applied, as the DAG does;
then the warehouse's size is reported by table, with the processed records kept 7 days
(``LINEAGE_PENDING_RETENTION_DAYS=7``) and once a compaction with the default (0) has removed
them (the raw log keeps every event).

    make bench-storage                               # 2,000 tasks hourly for two days (288,000 events)
    .venv/bin/python -m bench.storage --tasks 200 --hours 12

The issue's reference: Data.Rentgen stored the same two days in 186 MiB.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg

from bench.compaction import scratch_database
from bench.openlineage_ingest import write_platform_hour
from lineage.settings import Settings, libpq_url
from spark_jobs.compaction.job import run_compaction
from spark_jobs.field_lineage.job import run_field_lineage
from warehouse.db.migrate import apply_migrations
from warehouse.db.program_metadata_store import apply_program_metadata

DATA_RENTGEN_MIB = 186  # the figure for the same two days


def _sizes(url: str) -> tuple[int, list[tuple[str, int, int]]]:
    with psycopg.connect(libpq_url(url), autocommit=True) as conn:
        conn.execute("vacuum full")  # the live data's size: what deleted rows and updates left is not counted
        total = conn.execute("select pg_database_size(current_database())").fetchone()[0]  # type: ignore[index]
        tables = conn.execute(
            """select n.nspname || '.' || c.relname, pg_total_relation_size(c.oid), pg_indexes_size(c.oid)
               from pg_class c join pg_namespace n on n.oid = c.relnamespace
               where c.relkind in ('r', 'm') and n.nspname in ('lineage', 'lineage_marts')
               order by 2 desc limit 12""").fetchall()
    return int(total), [(name, int(size), int(indexes)) for name, size, indexes in tables]


def _report(label: str, url: str) -> int:
    total, tables = _sizes(url)
    mib = total / 2**20
    print(f"{label}: {mib:,.0f} MiB ({mib / DATA_RENTGEN_MIB:.1f}x Data.Rentgen's {DATA_RENTGEN_MIB} MiB for the "
          "issue's two days)")
    for name, size, indexes in tables:
        print(f"  {name:45s} {size / 2**20:9,.1f} MiB (indexes {indexes / 2**20:,.1f})")
    return total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="What the warehouse stores for a platform's OpenLineage events.")
    parser.add_argument("--tasks", type=int, default=2000, help="task runs per hour (3 events each)")
    parser.add_argument("--hours", type=int, default=48)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    base = Settings.from_env()
    url = scratch_database(base.database_url, "lineage_bench_storage")
    apply_migrations(url)
    began = time.perf_counter()
    start = datetime.now(UTC).replace(minute=0, second=0, microsecond=0) - timedelta(hours=args.hours)
    with tempfile.TemporaryDirectory() as folder:
        log_root = Path(folder)
        env = {**os.environ, "LINEAGE_DATABASE_URL": url, "LINEAGE_LOG_ROOT": str(log_root),
               "LINEAGE_AUTO_CREATE_NAMESPACES": "true", "LINEAGE_PENDING_RETENTION_DAYS": "7"}
        settings = Settings.from_env(env)
        raw = 0
        for hour in range(args.hours):
            at = start + timedelta(hours=hour)
            raw += write_platform_hour(log_root, at, args.tasks).stat().st_size
            run_compaction(None, interval_end=at + timedelta(hours=1), settings=settings)
            run_field_lineage(None, settings)
            with psycopg.connect(libpq_url(url)) as conn:
                apply_program_metadata(conn, auto_create_namespaces=True)
            if (hour + 1) % 12 == 0 or hour + 1 == args.hours:
                print(f"  {hour + 1} hours compacted, field lineage derived, metadata applied "
                      f"({time.perf_counter() - began:.0f}s)", flush=True)
        print(f"{args.tasks} tasks x {args.hours} hours: {args.tasks * args.hours * 3:,} OpenLineage events, "
              f"{raw / 2**20:,.0f} MiB of raw log, in {time.perf_counter() - began:.0f}s")
        kept = _report("the warehouse, processed records kept 7 days", url)
        # the next hour's compaction (one task's run), with the default retention (0), removes them
        settings = Settings.from_env({**env, "LINEAGE_PENDING_RETENTION_DAYS": "0"})
        at = start + timedelta(hours=args.hours)
        write_platform_hour(log_root, at, 1)
        run_compaction(None, interval_end=at + timedelta(hours=1), settings=settings)
        removed = _report("the warehouse, processed records removed (LINEAGE_PENDING_RETENTION_DAYS=0, the default)",
                          url)
    print(f"processed records: {(kept - removed) / 2**20:,.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: the DAG's metadata stage (``apply_metadata``) on what OpenLineage producers send.

A platform of Airflow tasks (``bench.openlineage_ingest.task_events``: START, RUNNING and COMPLETE
of each task run, the output's 20-field schema facet on each) runs hourly; the compaction keeps
one observed schema per event. The stage then applies them: each change on its own (the code
before issue 30 item 7) and with a chunk's unchanged observations applied together
(``program_metadata_store._Unchanged``), on two clones of the same compacted warehouse,
alternating, each pair of runs on fresh clones; the tables both leave are compared.

    make bench-metadata                        # 200 tasks hourly for a day (14,400 events), 2 rounds
    .venv/bin/python -m bench.program_metadata --tasks 400 --hours 6 --rounds 1

The speed-up grows with how often a dataset is observed unchanged: each dataset's first
observation (a new schema version) costs what it did.
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

from bench.compaction import drop_database, scratch_database
from bench.openlineage_ingest import write_platform_hour
from lineage.settings import Settings, libpq_url
from spark_jobs.compaction.job import run_compaction
from warehouse.db.migrate import apply_migrations
from warehouse.db.program_metadata_store import apply_program_metadata

START = datetime(2026, 11, 20, tzinfo=UTC)
_COMPARED = ("select entity_key, scope, kind, key, value from lineage.metadata order by 1, 2, 3, 4",
             "select entity_key, version, schema, source, event_time from lineage.dataset_schema_versions "
             "order by 1, 2",
             "select entity_key, kind, key, event_time from lineage.metadata_event_times order by 1, 2, 3",
             "select count(*) from lineage.metadata_changes",
             "select count(*) filter (where processed_at is null) from lineage.pending_events")


def _apply(url: str, fast: bool) -> tuple[float, int, list[list[tuple[object, ...]]]]:
    with psycopg.connect(libpq_url(url)) as conn:
        summary = apply_program_metadata(conn, auto_create_namespaces=True, fast=fast)
        state = [conn.execute(query).fetchall() for query in _COMPARED]
    return summary.seconds, summary.events, state


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Benchmark the metadata stage on OpenLineage schema facets.")
    parser.add_argument("--tasks", type=int, default=200, help="task runs per hour (3 events each)")
    parser.add_argument("--hours", type=int, default=24)
    parser.add_argument("--rounds", type=int, default=2, help="pairs of runs, each on fresh clones")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    base = Settings.from_env()
    url = scratch_database(base.database_url, "lineage_bench_metadata")
    apply_migrations(url)
    with tempfile.TemporaryDirectory() as folder:
        log_root = Path(folder)
        for hour in range(args.hours):
            write_platform_hour(log_root, START + timedelta(hours=hour), args.tasks)
        settings = Settings.from_env({**os.environ, "LINEAGE_DATABASE_URL": url, "LINEAGE_LOG_ROOT": str(log_root),
                                      "LINEAGE_AUTO_CREATE_NAMESPACES": "true"})
        began = time.perf_counter()
        run_compaction(None, interval_end=START + timedelta(hours=args.hours + 1), settings=settings)
    with psycopg.connect(libpq_url(url)) as conn:
        pending = conn.execute("select count(*) from lineage.pending_events where kind = 'metadata_change'"
                               ).fetchone()[0]  # type: ignore[index]
    print(f"{args.tasks} tasks x {args.hours} hours: {args.tasks * args.hours * 3:,} OpenLineage events compacted "
          f"in {time.perf_counter() - began:.0f}s, {pending:,} observed schemas to apply")
    ratios = []
    for round_ in range(1, args.rounds + 1):
        alone_url = scratch_database(url, "lineage_bench_metadata_alone", template="lineage_bench_metadata")
        fast_url = scratch_database(url, "lineage_bench_metadata_fast", template="lineage_bench_metadata")
        first, second = ((False, alone_url), (True, fast_url)) if round_ % 2 else ((True, fast_url), (False, alone_url))
        results = {fast: _apply(target, fast) for fast, target in (first, second)}
        (alone_s, events, alone_state), (fast_s, _, fast_state) = results[False], results[True]
        same = "identical" if alone_state == fast_state else "DIFFERENT"
        ratios.append(alone_s / fast_s)
        print(f"round {round_}: each change alone {alone_s:.1f}s ({events / alone_s:,.0f} events/s), "
              f"unchanged observations together {fast_s:.1f}s ({events / fast_s:,.0f} events/s): "
              f"{alone_s / fast_s:.1f}x; tables {same}")
        if alone_state != fast_state:
            return 1
    for name in ("lineage_bench_metadata_alone", "lineage_bench_metadata_fast"):
        drop_database(url, name)
    print(f"metadata stage speed-up: {min(ratios):.1f}x to {max(ratios):.1f}x (target >= 10x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

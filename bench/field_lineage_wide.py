"""Benchmark: field lineage of one wide record (issue 18; ``python -m bench.field_lineage_wide``,
part of ``make bench-fields``).

Workload: a record of 500 operations writing 100 fields (one read of 100 fields, 498 renames and
merges in long chains, as wide ETL pipelines produce, one write), recorded by 1,000 hourly runs
of two programs, through the real path: raw log files -> compaction -> the Spark field lineage
job. Then, for 40 sampled fields each, p50/p95 of what the API computes (same core and queries,
without HTTP):

- incoming lineage of a destination field (the seed 004 answer);        target p95 <= 25 ms
- outgoing lineage (impact, levels=1, with flows) of a source field;    target p95 <= 100 ms
  and the same in the detailed view (every intermediate field a node;  target p95 <= 100 ms),
  drawn per path and once for the whole answer (``graph=answer``)
- CDAP's field summary (direction=both) and operations (direction=both);  operations p95 <= 50 ms
- CDAP's allfieldlineage of the destination and of the source dataset;  target p95 <= 250 ms
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
import psycopg

from bench.compaction import scratch_database
from bench.generate import raw_event, write_logs
from bench.lineage_walk import percentiles
from bench.lineage_workload import run_id
from lineage.settings import Settings, libpq_url
from warehouse.db import field_lineage_summaries as summaries
from warehouse.db.field_lineage_store import FieldLineageQueries
from warehouse.db.migrate import apply_migrations
from warehouse.service.field_lineage_response import FieldKey, field_lineage

NAMESPACE = "bench"
SOURCE, DESTINATION = "wide_source", "wide_table"


def wide_record(operations: int = 500, fields: int = 100) -> dict[str, Any]:
    """A wide ETL record of ``operations`` operations writing ``fields`` fields, with long chains:
    one read of ``fields`` fields; a spine of the operations left (300 of 500) renaming a running
    value four times in five and merging the next source field into it the fifth; per field
    ``i``, a merge of the spine as it was after ``3 * i`` steps with source field ``i``, then a
    rename of that; one write. A field's path holds up to 300 operations (median about 150), and
    a source field merged early into the spine reaches most destination fields."""
    spine_steps = operations - 2 * (fields - 1) - 2
    if spine_steps < 3 * (fields - 1):
        raise ValueError(f"{operations} operations are too few for {fields} fields")
    names = [f"f{i}" for i in range(fields)]
    ops: list[dict[str, Any]] = [{"name": "read", "inputs": [{"source": {"name": SOURCE}}], "outputs": names}]

    def add(name: str, inputs: list[str], output: str) -> str:
        ops.append({"name": name, "inputs": [{"field": field} for field in inputs], "outputs": [output]})
        return output

    spine, checkpoints, merged = names[0], [names[0]], 1
    for step in range(spine_steps):
        if step % 5 == 4:
            spine = add(f"merge{step}", [spine, names[merged % fields]], f"s{step}")
            merged += 1
        else:
            spine = add(f"rename{step}", [spine], f"s{step}")
        if step % 3 == 2:
            checkpoints.append(spine)
    written = [add(f"finish{i}", [add(f"derive{i}", [checkpoints[i], names[i]], f"d{i}")], f"e{i}")
               for i in range(fields - 1)]
    ops.append({"type": "write", "name": "write", "inputs": [{"field": field} for field in [*written, spine]],
                "outputs": [f"out{i}" for i in range(fields)]})
    return {"destination": {"name": DESTINATION}, "operations": ops}


def raw_events(runs: int, end: datetime) -> Iterator[dict[str, Any]]:
    rng = random.Random(11)
    record = wide_record()
    start = end - timedelta(hours=runs)
    for hour in range(runs):
        program = f"WideEtl{hour % 2}"
        run = {"application": "wide", "program_type": "spark", "program": program, "run_id": run_id(hour % 2, hour)}
        began = start + timedelta(hours=hour)
        yield raw_event(rng, "run_start", NAMESPACE, run, began, {})
        yield raw_event(rng, "field_operations", NAMESPACE, run, began + timedelta(minutes=1), record)
        yield raw_event(rng, "run_end", NAMESPACE, run, began + timedelta(minutes=10), {"status": "completed"})


def load(base: Settings, url: str, runs: int, end: datetime) -> None:
    from spark_jobs.compaction.job import run_compaction
    from spark_jobs.field_lineage.job import run_field_lineage
    from spark_jobs.session import build_session

    scratch_database(base.database_url, url.rsplit("/", 1)[1])
    apply_migrations(url)
    log_root = base.home / "bench" / "field-wide-raw-events"
    shutil.rmtree(log_root, ignore_errors=True)
    settings = Settings.from_env({**os.environ, "LINEAGE_AUTO_CREATE_NAMESPACES": "true",
                                  "LINEAGE_LOG_ROOT": str(log_root), "LINEAGE_DATABASE_URL": url,
                                  "LINEAGE_LOOKBACK_HOURS": str(runs + 48)})
    files, total = write_logs(log_root, raw_events(runs, end), 1_000, end)
    print(f"generated {total:,} events ({runs} runs of one 500-operation record writing 100 fields) in {files} files")
    spark = build_session("lineage-bench-fields-wide", settings)
    spark.sparkContext.setLogLevel("ERROR")
    began = time.perf_counter()
    compacted = run_compaction(spark, interval_end=end, settings=settings)
    print(f"compaction: {compacted.events_read:,} events in {time.perf_counter() - began:.1f}s")
    began = time.perf_counter()
    print(f"field lineage job: {run_field_lineage(spark, settings).render()} ({time.perf_counter() - began:.1f}s)")
    spark.stop()


def timed(samples: list[Any], call: Callable[[Any], Any]) -> tuple[str, Any]:
    timings, last = [], None
    for sample in samples:
        began = time.perf_counter()
        last = orjson.dumps(call(sample))
        timings.append(time.perf_counter() - began)
    return percentiles(timings), orjson.loads(last) if last else None


def measure(url: str, end: datetime, runs: int, samples_wanted: int) -> None:
    start = end - timedelta(hours=runs + 1)
    seconds = (int(start.timestamp()), int(end.timestamp()))
    rng = random.Random(5)
    destination_fields = [FieldKey(NAMESPACE, DESTINATION, f"out{rng.randrange(100)}") for _ in range(samples_wanted)]
    source_fields = [FieldKey(NAMESPACE, SOURCE, f"f{rng.randrange(100)}") for _ in range(samples_wanted)]
    with psycopg.connect(libpq_url(url), autocommit=True) as conn:
        conn.execute("vacuum analyze")
        queries = FieldLineageQueries(conn, start, end)
        cases: list[tuple[str, list[Any], Callable[[Any], Any], str]] = [
            ("incoming lineage of a destination field", destination_fields,
             lambda key: field_lineage(queries, key, *seconds), "<= 25 ms"),
            ("outgoing lineage (impact, levels=1) of a source field", source_fields,
             lambda key: field_lineage(queries, key, *seconds, direction="outgoing"), "<= 100 ms"),
            ("outgoing lineage, detailed view, of a source field", source_fields,
             lambda key: field_lineage(queries, key, *seconds, direction="outgoing", view="detailed"), "<= 100 ms"),
            ("outgoing, detailed view drawn once (graph=answer)", source_fields,
             lambda key: field_lineage(queries, key, *seconds, direction="outgoing", view="detailed",
                                       graph="answer"), "<= 100 ms"),
            ("incoming lineage, detailed view, of a destination field", destination_fields,
             lambda key: field_lineage(queries, key, *seconds, view="detailed"), ""),
            ("CDAP summary, both, of a destination field", destination_fields,
             lambda key: summaries.summary(conn, key, start, end, "both"), ""),
            ("CDAP summary, both, of a source field", source_fields,
             lambda key: summaries.summary(conn, key, start, end, "both"), ""),
            ("CDAP operations, both, of a destination field", destination_fields,
             lambda key: summaries.operation_details(conn, key, start, end, "both"), "<= 50 ms"),
            ("CDAP operations, both, of a source field", source_fields,
             lambda key: summaries.operation_details(conn, key, start, end, "both"), "<= 50 ms"),
            ("CDAP allfieldlineage, both, of the destination", [DESTINATION] * samples_wanted,
             lambda name: summaries.dataset_field_lineage(conn, NAMESPACE, name, start, end, "both", set()),
             "<= 250 ms"),
            ("CDAP allfieldlineage, both, of the source", [SOURCE] * samples_wanted,
             lambda name: summaries.dataset_field_lineage(conn, NAMESPACE, name, start, end, "both", set()),
             "<= 250 ms"),
        ]
        for label, samples, call, target in cases:
            figures, answer = timed(samples, call)
            print(f"{label:<55} {figures}   {('target p95 ' + target) if target else ''}{describe(answer)}")


def describe(answer: Any) -> str:
    """A few counts of the last answer, so a fast empty answer does not pass unnoticed."""
    if not isinstance(answer, dict):
        return ""
    if "paths" in answer:
        return f"   ({len(answer['paths'])} path(s), {sum(len(p['operations']) for p in answer['paths'])} operations)"
    if "flows" in answer:
        drawn = f", one drawing of {len(answer['graph']['nodes'])} nodes" if "graph" in answer else ""
        return f"   ({len(answer['flows'])} flow(s), {len(answer['impacts'])} impacted fields{drawn})"
    if "entityId" in answer:
        return f"   ({sum(len(g['relations']) for g in answer['incoming'] + answer['outgoing'])} relations)"
    sides = [f"{side} {len(answer[side])}" for side in ("incoming", "outgoing") if side in answer]
    return "   (" + ", ".join(sides) + ")"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Benchmark field lineage of one 500-operation record.")
    parser.add_argument("--runs", type=int, default=1_000)
    parser.add_argument("--samples", type=int, default=40)
    parser.add_argument("--reuse", action="store_true", help="query the database a previous run loaded")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    end = datetime(2026, 11, 1, tzinfo=UTC)
    base = Settings.from_env()
    url = base.database_url.rsplit("/", 1)[0] + "/lineage_bench_fields_wide"
    if not args.reuse:
        load(base, url, args.runs, end)
    measure(url, end, args.runs, args.samples)
    return 0


if __name__ == "__main__":
    sys.exit(main())

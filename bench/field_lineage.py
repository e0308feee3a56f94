"""Benchmark: field lineage (``python -m bench.field_lineage``, ``make bench-fields``).

Workload (issue 4): 200 pipelines x 20 output fields, hourly runs for 30 days (144k runs);
10% of the pipelines change their operations once a week. Pipelines form chains of 5 (each
reads the previous one's output), so impact has somewhere to go. The events go through the
real path: raw log files -> compaction -> the Spark field lineage job. Then it prints:

- the time of each step;
- field lineage p50/p95 for a 1-day and a 30-day window (incoming, the answer the API gives);
- outgoing impact with levels=5;
- the field diff of each window against the window just before (two answers compared);
- CDAP's allfieldlineage (incoming) of the sampled datasets (target p95 <= 40 ms);
- the rows stored for field lineage next to what a one-row-per-run-per-field-edge model (as
  Marquez stores column lineage) would need for the same runs.
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import shutil
import statistics
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
import psycopg
from psycopg import sql

from bench.compaction import scratch_database
from bench.generate import raw_event, write_logs
from bench.lineage_walk import percentiles
from bench.lineage_workload import run_id
from lineage.model.field_paths import field_paths, normalize
from lineage.settings import Settings, libpq_url
from warehouse.db import field_lineage_summaries as summaries
from warehouse.db.field_lineage_store import FieldLineageQueries
from warehouse.db.migrate import apply_migrations
from warehouse.service.field_lineage_diff import field_diff
from warehouse.service.field_lineage_response import FieldKey, field_lineage

NAMESPACE = "bench"
CHAIN = 5


def operations(pipeline: int, fields: int, week: int | None) -> dict[str, Any]:
    """Pipeline ``pipeline``'s record: read its input, derive each output field from one or two
    input fields, write. ``week`` (for the pipelines that change) renames one transform."""
    rng = random.Random(pipeline)
    source = f"raw_{pipeline}" if pipeline % CHAIN == 0 else f"table_{pipeline - 1}"
    names = [f"f{index}" for index in range(fields)]
    ops: list[dict[str, Any]] = [
        {"name": "read", "inputs": [{"source": {"name": source}}], "outputs": names,
         "description": f"read {source}"}]
    for index, name in enumerate(names):
        inputs = sorted(set(rng.sample(names, rng.randint(1, 2))))
        op_name = f"derive_{index}" + (f"_v{week}" if week is not None and index == 0 else "")
        ops.append({"id": f"derive_{index}", "name": op_name, "inputs": [{"field": f} for f in inputs],
                    "outputs": [f"out_{name}"], "description": f"derive out_{name}"})
    ops.append({"type": "write", "name": "write", "inputs": [{"field": f"out_{name}"} for name in names],
                "outputs": names})
    return {"destination": {"name": f"table_{pipeline}"}, "operations": ops}


def raw_events(pipelines: int, fields: int, hours: int, end: datetime, changing: set[int]
               ) -> Iterator[dict[str, Any]]:
    rng = random.Random(7)
    start = end - timedelta(hours=hours)
    records = {(p, w): operations(p, fields, w if p in changing else None)
               for p in range(pipelines) for w in range(hours // 168 + 1)}
    for hour in range(hours):
        for pipeline in range(pipelines):
            run = {"application": f"chain_{pipeline // CHAIN}", "program_type": "spark",
                   "program": f"pipeline_{pipeline}", "run_id": run_id(pipeline, hour)}
            began = start + timedelta(hours=hour, minutes=pipeline % 50)
            yield raw_event(rng, "run_start", NAMESPACE, run, began, {})
            yield raw_event(rng, "field_operations", NAMESPACE, run, began + timedelta(minutes=1),
                            records[(pipeline, hour // 168)])
            yield raw_event(rng, "run_end", NAMESPACE, run, began + timedelta(minutes=10), {"status": "completed"})


def per_run_edges(pipeline: int, fields: int) -> int:
    """Column-lineage rows one run would add in a per-run model: one per (source field -> output field)."""
    record = normalize(operations(pipeline, fields, None), NAMESPACE)
    return sum(len(path.source_fields) for path in field_paths(record))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Benchmark field lineage.")
    parser.add_argument("--pipelines", type=int, default=200)
    parser.add_argument("--fields", type=int, default=20)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--samples", type=int, default=40)
    parser.add_argument("--reuse", action="store_true", help="query the database a previous run loaded")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    end = datetime(2026, 11, 1, tzinfo=UTC)
    hours = args.days * 24
    base = Settings.from_env()
    url = base.database_url.rsplit("/", 1)[0] + "/lineage_bench_fields"
    if not args.reuse:
        load(base, args.pipelines, args.fields, hours, end)
    measure(url, args.pipelines, args.fields, args.days, args.samples, end)
    return 0


def load(base: Settings, pipelines: int, fields_per_pipeline: int, hours: int, end: datetime) -> None:
    """Raw events -> compaction -> field lineage job, timed."""
    from spark_jobs.compaction.job import run_compaction
    from spark_jobs.field_lineage.job import run_field_lineage
    from spark_jobs.session import build_session

    url = scratch_database(base.database_url, "lineage_bench_fields")
    apply_migrations(url)
    log_root = base.home / "bench" / "field-raw-events"
    shutil.rmtree(log_root, ignore_errors=True)
    settings = Settings.from_env({  # the synthetic pipelines write into ns0..ns9, created on first use
        **os.environ, "LINEAGE_AUTO_CREATE_NAMESPACES": "true", "LINEAGE_LOG_ROOT": str(log_root),
        "LINEAGE_DATABASE_URL": url,
        "LINEAGE_LOOKBACK_HOURS": str(hours + 48)})
    changing = set(random.Random(3).sample(range(pipelines), max(1, pipelines // 10)))
    began = time.perf_counter()
    files, total = write_logs(log_root, raw_events(pipelines, fields_per_pipeline, hours, end, changing), 10_000, end)
    print(f"generated {total:,} events ({pipelines} pipelines x {hours} hourly runs, {fields_per_pipeline} fields, "
          f"{len(changing)} changing weekly) in {files} files in {time.perf_counter() - began:.0f}s")
    spark = build_session("lineage-bench-fields", settings)
    spark.sparkContext.setLogLevel("ERROR")
    began = time.perf_counter()
    summary = run_compaction(spark, interval_end=end, settings=settings)
    print(f"compaction: {summary.events_read:,} events in {time.perf_counter() - began:.1f}s")
    began = time.perf_counter()
    fields = run_field_lineage(spark, settings)
    print(f"field lineage job: {fields.render()} ({fields.records / (time.perf_counter() - began):,.0f} records/s)")
    spark.stop()


def row_count(conn: psycopg.Connection, table: str) -> int:
    """The rows of ``lineage.{table}``."""
    row = conn.execute(sql.SQL("select count(*) from {}").format(sql.Identifier("lineage", table))).fetchone()
    if row is None:
        raise RuntimeError(f"count(*) of lineage.{table} answered no row")
    count: int = row[0]
    return count


def measure(url: str, pipelines: int, fields_per_pipeline: int, days: int, samples_wanted: int, end: datetime
            ) -> None:
    """Rows stored vs a per-run model; field lineage and impact timings."""
    with psycopg.connect(libpq_url(url), autocommit=True) as conn:
        conn.execute("vacuum analyze")
        counts = {table: row_count(conn, table)
                  for table in ("field_operation_sets", "field_paths", "field_path_sources", "field_source_flows",
                                "field_lineage_runs")}
        runs = counts["field_lineage_runs"]
        ours = sum(counts.values())
        per_run = sum(per_run_edges(p, fields_per_pipeline) for p in range(pipelines)) / pipelines
        theirs = round(runs * per_run)
        print("rows stored: " + ", ".join(f"{table} {count:,}" for table, count in counts.items()))
        print(f"field lineage rows: {ours:,} here vs {theirs:,} in a per-run column-lineage model "
              f"({per_run:.1f} field edges per run x {runs:,} runs): {theirs / ours:.0f}x fewer")
        rng = random.Random(5)
        samples = [(f"table_{rng.randrange(pipelines)}", f"f{rng.randrange(fields_per_pipeline)}")
                   for _ in range(samples_wanted)]
        for label, window_days in (("1-day window", 1), (f"{days}-day window", days)):
            start = end - timedelta(days=window_days)
            queries, seconds = FieldLineageQueries(conn, start, end), (int(start.timestamp()), int(end.timestamp()))
            timings, paths, run_ids = [], [], []
            for dataset, field in samples:
                began = time.perf_counter()
                body = orjson.dumps(field_lineage(queries, FieldKey(NAMESPACE, dataset, field), *seconds))
                timings.append(time.perf_counter() - began)
                parsed = orjson.loads(body)
                paths.append(len(parsed["paths"]))
                run_ids.append(sum(p["runCount"] for p in parsed["paths"]))
            print(f"field lineage, {label:<14} {percentiles(timings)}   median {statistics.median(paths):.0f} "
                  f"path(s), {statistics.median(run_ids):,.0f} run ids")
            timings, reached = [], []
            for dataset, field in samples:
                source = f"raw_{int(dataset.split('_')[1]) // CHAIN * CHAIN}"
                began = time.perf_counter()
                body = orjson.dumps(field_lineage(queries, FieldKey(NAMESPACE, source, field), *seconds,
                                                  direction="outgoing", levels=5))
                timings.append(time.perf_counter() - began)
                reached.append(len(orjson.loads(body)["impacts"]))
            print(f"  outgoing impact levels=5, {label:<14} {percentiles(timings)}   "
                  f"median {statistics.median(reached):.0f} downstream fields")
            measure_diff(conn, samples, start, end, label)
            timings, relations = [], []
            for dataset, _ in samples:
                began = time.perf_counter()
                body = orjson.dumps(summaries.dataset_field_lineage(conn, NAMESPACE, dataset, start, end, "incoming",
                                                                    set()))
                timings.append(time.perf_counter() - began)
                relations.append(sum(len(item["relations"]) for item in orjson.loads(body)["incoming"]))
            print(f"  CDAP allfieldlineage, incoming, {label:<14} {percentiles(timings)}   "
                  f"median {statistics.median(relations):.0f} relations   target p95 <= 40 ms")


def measure_diff(conn: psycopg.Connection, samples: list[tuple[str, str]], start: datetime, end: datetime,
                 label: str) -> None:
    """The field diff (incoming) of the window against the window just before, as the endpoint
    computes it (two field lineage answers compared), interleaved with one field lineage answer."""
    base = (start - (end - start), start)
    windows = {"start": int(start.timestamp()), "end": int(end.timestamp()),
               "baseStart": int(base[0].timestamp()), "baseEnd": int(base[1].timestamp())}
    one, both, changed = [], [], []
    for dataset, field in samples:
        key = FieldKey(NAMESPACE, dataset, field)
        began = time.perf_counter()
        orjson.dumps(field_lineage(FieldLineageQueries(conn, start, end), key, windows["start"], windows["end"]))
        one.append(time.perf_counter() - began)
        began = time.perf_counter()
        current = field_lineage(FieldLineageQueries(conn, start, end), key, windows["start"], windows["end"])
        before = field_lineage(FieldLineageQueries(conn, *base), key, windows["baseStart"], windows["baseEnd"])
        answer = field_diff(windows, current, before)
        orjson.dumps(answer)
        both.append(time.perf_counter() - began)
        changed.append(answer["summary"]["paths"]["new"] + answer["summary"]["paths"]["gone"])
    print(f"  field diff vs the window before, {label:<14} {percentiles(both)}   "
          f"{sum(1 for n in changed if n)} of {len(changed)} fields changed; ratio to one answer "
          f"{sum(both) / max(sum(one), 1e-9):.2f}x (target p95 <= 50 ms)")


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: dataset lineage at scale (``python -m bench.lineage_walk``, ``make bench-lineage``).

1. Loads the workload of ``bench.lineage_workload`` straight into a scratch warehouse: 2,000
   programs running hourly for 30 days (1.44M runs) over 10,000 datasets.
2. Builds the walk's dbt mart (full build), then adds one more hour of runs as a new batch and
   times the incremental build the hourly DAG would do.
3. Times the lineage endpoint's work (walk, relations, JSON) at levels=10 for a 1-day and a
   30-day window from sampled datasets, and a naive walk issuing one query per visited node on
   the base tables (CDAP's scan-per-node BFS) on the same datasets; prints p50/p95, the ratio
   and how much of the graph the walks reached; interleaved on the same datasets, the answer
   with runs counted (``runs=count``) and the diff against the window just before, each as a
   p95 ratio to the answer with every run id.
4. Times run-level lineage (levels=3, upstream and downstream) from sampled runs.
5. Compacts a slice of the same workload written as raw events (one day by default) with the
   real compaction job and prints its throughput.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta

import orjson
import psycopg

from bench.compaction import scratch_database
from bench.generate import write_logs
from bench.lineage_workload import NAMESPACE, Topology, load, raw_events
from lineage.settings import Settings, libpq_url
from warehouse.db.lineage_store import LineageQueries, run_in_window
from warehouse.db.migrate import apply_migrations
from warehouse.db.run_lineage_store import RunLineageQueries
from warehouse.pipeline.dbt_build import build_marts
from warehouse.service.lineage_diff import compare, diff_response
from warehouse.service.lineage_graph import DataRef, lineage_response, walk_lineage
from warehouse.service.run_lineage import run_lineage_response, walk_runs

_NAIVE_PROGRAMS = f"""select distinct r.program_key from lineage.dataset_accesses a
    join lineage.runs r using (run_key) where a.dataset_key = %(node)s
    and {run_in_window("r")}"""
_NAIVE_DATASETS = f"""select distinct a.dataset_key from lineage.runs r
    join lineage.dataset_accesses a using (run_key) where r.program_key = %(node)s
    and {run_in_window("r")}"""
_NAIVE_RELATIONS = f"""select a.dataset_key, a.access, r.run_id from lineage.runs r
    join lineage.dataset_accesses a using (run_key) where r.program_key = %(node)s
    and {run_in_window("r")}"""


def naive_walk(conn: psycopg.Connection, data: DataRef, start: datetime, end: datetime, levels: int) -> int:
    """CDAP's walk with one query per visited node (data -> programs, program -> data), then one
    per program for its relations' runs; returns the number of run rows fetched."""
    first = conn.execute("select dataset_key from lineage.datasets where namespace = %s and dataset = %s",
                         (data.namespace, data.name)).fetchone()
    if first is None:
        return 0
    window = {"start": start, "end": end}
    frontier, seen_data, seen_programs = {first[0]}, {first[0]}, set[int]()
    for _ in range(levels):
        programs = {p for node in frontier for (p,) in conn.execute(_NAIVE_PROGRAMS, {**window, "node": node})}
        programs -= seen_programs
        if not programs:
            break
        seen_programs |= programs
        frontier = {d for node in programs for (d,) in conn.execute(_NAIVE_DATASETS, {**window, "node": node})}
        frontier -= seen_data
        seen_data |= frontier
        if not frontier:
            break
    return sum(len(conn.execute(_NAIVE_RELATIONS, {**window, "node": p}).fetchall()) for p in seen_programs)


def p95(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def percentiles(samples: list[float]) -> str:
    return f"p50 {statistics.median(samples) * 1000:7.1f} ms   p95 {p95(samples) * 1000:7.1f} ms"


def timed_build(url: str, settings: Settings, label: str, select: str | None = "+lineage_walk") -> None:
    began = time.perf_counter()
    build_marts(url, settings, command="run" if select else "build", select=select)
    print(f"{label}: {time.perf_counter() - began:.1f}s")


def measure_walks(url: str, topology: Topology, end: datetime, days: int, samples: int, naive_samples: int) -> None:
    with psycopg.connect(libpq_url(url), autocommit=True) as conn:
        counts = conn.execute("select (select count(*) from lineage.runs), (select count(*) "
                              "from lineage.dataset_accesses), (select count(*) from lineage_marts.lineage_walk)"
                              ).fetchone()
        assert counts is not None
        print(f"warehouse: {counts[0]:,} runs, {counts[1]:,} accesses; walk mart: {counts[2]:,} rows")
        accessed = sorted({dataset for _, dataset, _ in topology.edges()})  # datasets some program touches
        step = max(1, len(accessed) // samples)
        names = [topology.dataset_name(index) for index in accessed[step // 2::step]][:samples]
        for label, window_days in (("1-day window", 1), (f"{days}-day window", days)):
            start = end - timedelta(days=window_days)
            timings, sizes, reached = [], [], []
            for name in names:
                began = time.perf_counter()
                origin = DataRef(NAMESPACE, "dataset", name)
                relations = walk_lineage(LineageQueries(conn, start, end), origin, 10).relations
                body = orjson.dumps(lineage_response(int(start.timestamp()), int(end.timestamp()), relations))
                timings.append(time.perf_counter() - began)
                sizes.append(len(body))
                reached.append((len({r.program for r in relations}), len({r.data for r in relations}),
                                sum(len(r.runs) for r in relations)))
            median = sorted(reached)[len(reached) // 2]
            print(f"lineage levels=10, {label:<14} {percentiles(timings)}   median walk: {median[0]} programs, "
                  f"{median[1]} datasets, {median[2]:,} run ids, {statistics.median(sizes) / 1024:,.0f} KiB JSON")
            measure_shapes_and_diff(conn, names, start, end, label)
            naive, ours = [], []
            for name in names[:naive_samples]:
                began = time.perf_counter()
                naive_walk(conn, DataRef(NAMESPACE, "dataset", name), start, end, 10)
                naive.append(time.perf_counter() - began)
                began = time.perf_counter()
                walk_lineage(LineageQueries(conn, start, end), DataRef(NAMESPACE, "dataset", name), 10)
                ours.append(time.perf_counter() - began)
            print(f"  naive per-node walk, {label:<14} {percentiles(naive)}   "
                  f"ratio {sum(naive) / max(sum(ours), 1e-9):.0f}x slower than the mart walk")


def measure_shapes_and_diff(conn: psycopg.Connection, names: list[str], start: datetime, end: datetime,
                            label: str) -> None:
    """Interleaved on the same datasets: the answer with every run id (``runs=ids``), with runs
    counted (``runs=count``), and the diff of the window against the window just before it
    (both walks, counted, compared), as the endpoints build them."""
    base = (start - (end - start), start)
    timings: dict[str, list[float]] = {"ids": [], "count": [], "diff": []}
    sizes: dict[str, list[int]] = {"ids": [], "count": [], "diff": []}
    window = {"start": int(start.timestamp()), "end": int(end.timestamp()),
              "baseStart": int(base[0].timestamp()), "baseEnd": int(base[1].timestamp()), "levels": 10}
    for name in names:
        origin = DataRef(NAMESPACE, "dataset", name)
        for shape in ("ids", "count"):
            began = time.perf_counter()
            relations = walk_lineage(LineageQueries(conn, start, end, run_ids=shape == "ids"), origin, 10).relations
            body = orjson.dumps(lineage_response(window["start"], window["end"], relations, runs=shape))
            timings[shape].append(time.perf_counter() - began)
            sizes[shape].append(len(body))
        began = time.perf_counter()
        current = walk_lineage(LineageQueries(conn, start, end, run_ids=False), origin, 10).relations
        before = walk_lineage(LineageQueries(conn, *base, run_ids=False), origin, 10).relations
        body = orjson.dumps(diff_response(window, compare(current, before)))
        timings["diff"].append(time.perf_counter() - began)
        sizes["diff"].append(len(body))
    for shape, text in (("count", "runs=count"), ("diff", "diff vs the window before")):
        print(f"  {text + ',':<26} {label:<14} {percentiles(timings[shape])}   "
              f"{statistics.median(sizes[shape]) / 1024:,.0f} KiB JSON; p95 ratio to runs=ids "
              f"{p95(timings[shape]) / p95(timings['ids']):.2f}x")


def measure_run_lineage(url: str, end: datetime, samples: int) -> None:
    """Run-level lineage at levels=3, upstream and downstream, from runs sampled in the middle of
    the month (what the endpoint computes: the walk, the runs' details and the answer)."""
    middle = end - timedelta(days=15)
    with psycopg.connect(libpq_url(url), autocommit=True) as conn:
        runs = [row[0] for row in conn.execute(
            "select run_key from lineage.runs where run_at >= %s and run_at < %s order by md5(run_id) limit %s",
            (middle, middle + timedelta(days=1), samples))]
        queries = RunLineageQueries(conn)
        for direction in ("upstream", "downstream"):
            timings, reached = [], []
            for run in runs:
                began = time.perf_counter()
                found = walk_runs(queries, run, direction, 3, 1_000)
                orjson.dumps(run_lineage_response(found, queries.runs(sorted(found.levels)), lambda _: True,
                                                  lambda _: True, lambda _: {}))
                timings.append(time.perf_counter() - began)
                reached.append(len(found.levels) - 1)
            print(f"run lineage levels=3, {direction:<10} {percentiles(timings)}   "
                  f"median {statistics.median(reached):.0f} runs reached (target p95 <= 20 ms)")


def measure_compaction(base: Settings, topology: Topology, hours: int, end: datetime) -> None:
    from spark_jobs.compaction.job import run_compaction
    from spark_jobs.session import build_session

    url = scratch_database(base.database_url, "lineage_bench_walk_compaction")
    apply_migrations(url)
    log_root = base.home / "bench" / "lineage-raw-events"
    shutil.rmtree(log_root, ignore_errors=True)
    settings = Settings.from_env({  # the synthetic pipelines write into ns0..ns9, created on first use
        **os.environ, "LINEAGE_AUTO_CREATE_NAMESPACES": "true", "LINEAGE_LOG_ROOT": str(log_root),
        "LINEAGE_DATABASE_URL": url})
    files, total = write_logs(log_root, raw_events(topology, hours, end), 10_000, end)
    spark = build_session("lineage-bench-walk", settings)
    spark.sparkContext.setLogLevel("ERROR")
    began = time.perf_counter()
    summary = run_compaction(spark, interval_end=end, settings=settings)
    elapsed = time.perf_counter() - began
    spark.stop()
    print(f"compaction of {hours} hours of this workload: {total:,} events in {files} files, "
          f"{summary.runs_touched:,} runs, {summary.accesses_added:,} accesses in {elapsed:.1f}s "
          f"= {total / elapsed:,.0f} events/s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Benchmark the dataset lineage walk.")
    parser.add_argument("--programs", type=int, default=2000)
    parser.add_argument("--datasets", type=int, default=10_000)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--samples", type=int, default=40)
    parser.add_argument("--naive-samples", type=int, default=5)
    parser.add_argument("--compact-hours", type=int, default=24, help="hours of raw events to compact (0: skip)")
    parser.add_argument("--reuse", action="store_true", help="keep the loaded database from a previous run")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    end = datetime(2026, 11, 1, tzinfo=UTC)
    topology = Topology(programs=args.programs, datasets=args.datasets, domains=max(1, args.programs // 20))
    base = Settings.from_env()
    url = base.database_url.rsplit("/", 1)[0] + "/lineage_bench_walk"
    settings = Settings.from_env({**os.environ, "LINEAGE_DATABASE_URL": url})
    if not args.reuse:
        url = scratch_database(base.database_url, "lineage_bench_walk")
        apply_migrations(url)
        began = time.perf_counter()
        load(url, topology, args.days * 24 - 1, end - timedelta(hours=1))
        print(f"loaded {args.programs} programs x {args.days * 24 - 1} hourly runs over {args.datasets} datasets "
              f"({len(topology.edges()):,} program-dataset edges) in {time.perf_counter() - began:.0f}s")
        timed_build(url, settings, "walk mart, full build (dbt run +lineage_walk)")
        load(url, topology, 1, end, batch="bench-next-hour", first_hour=args.days * 24)
        timed_build(url, settings, "walk mart, incremental build after one more hour of runs")
    measure_walks(url, topology, end, args.days, args.samples, args.naive_samples)
    measure_run_lineage(url, end, args.samples)
    if args.compact_hours:
        measure_compaction(base, topology, args.compact_hours, end)
    return 0


if __name__ == "__main__":
    sys.exit(main())

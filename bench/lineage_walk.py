"""Benchmark: dataset lineage at scale (``python -m bench.lineage_walk``).

Loads a synthetic warehouse straight into the tables: 2,000 programs running hourly for 30
days (1.44M runs) over 10,000 datasets in 10 layers; each program reads 3 datasets of its
layer and writes 1 of the next (a layered DAG, so walks fan in and out). Then times what the
lineage endpoint does (walk, response, JSON) at levels=10 for a 1-day and a 30-day window,
and a naive walk that issues one query per visited node (CDAP's scan-per-node BFS) on the
same datasets, and prints p50/p95 and the ratio.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta

import psycopg

from bench.compaction import scratch_database
from lineage.lineage_graph import Access, DataRef, lineage_response
from lineage.settings import Settings, libpq_url
from warehouse.lineage_store import IN_WINDOW, walk_lineage
from warehouse.migrate import apply_migrations

LAYERS = 10


def load(url: str, programs: int, datasets: int, days: int, end: datetime) -> None:
    per_layer = datasets // LAYERS
    edges = []
    for index in range(programs):
        layer = index % (LAYERS - 1)
        rng = random.Random(index)
        for dataset in rng.sample(range(per_layer), 3):
            edges.append((index, layer * per_layer + dataset, "read"))
        edges.append((index, (layer + 1) * per_layer + rng.randrange(per_layer), "write"))
    start = end - timedelta(days=days)
    with psycopg.connect(libpq_url(url), autocommit=True) as conn:
        conn.execute("set synchronous_commit = off")
        conn.execute("insert into lineage.namespaces values ('bench') on conflict do nothing")
        conn.execute("""insert into lineage.programs (namespace, application, program_type, program)
                        select 'bench', 'app_' || (g / 20), 'spark', 'p_' || g from generate_series(0, %s - 1) g""",
                     (programs,))
        conn.execute("""insert into lineage.datasets (namespace, dataset_type, dataset)
                        select 'bench', 'dataset', 'ds_' || g from generate_series(0, %s - 1) g""", (datasets,))
        conn.execute("""insert into lineage.runs (namespace, program_key, run_id, started_at, stopped_at, status,
                                                  first_batch_id, last_batch_id)
                        select 'bench', p.program_key, 'r' || h, %(start)s + h * interval '1 hour',
                               %(start)s + h * interval '1 hour' + interval '10 minutes', 'completed', 'bench', 'bench'
                        from lineage.programs p cross join generate_series(0, %(hours)s - 1) h""",
                     {"start": start, "hours": days * 24})
        conn.execute("create temp table edges (program int, dataset int, access text)")
        with conn.cursor().copy("copy edges from stdin") as copy:
            for edge in edges:
                copy.write_row(edge)
        conn.execute("""insert into lineage.dataset_accesses (namespace, dataset_key, run_key, access, component,
                                                              accessed_at, batch_id)
                        select 'bench', d.dataset_key, r.run_key, e.access, '', r.started_at + interval '1 minute',
                               'bench'
                        from edges e
                        join lineage.programs p on p.program = 'p_' || e.program
                        join lineage.datasets d on d.dataset = 'ds_' || e.dataset
                        join lineage.runs r on r.program_key = p.program_key""")
        conn.execute("vacuum analyze")


def naive_walk(conn: psycopg.Connection, data: DataRef, start: datetime, end: datetime, levels: int) -> int:
    """One query per visited dataset and one per visited run, as a scan-per-node BFS does."""
    first = conn.execute("select dataset_key from lineage.datasets where namespace = %s and dataset = %s",
                         (data.namespace, data.name)).fetchone()
    if first is None:
        return 0
    frontier, seen_data, seen_runs, rows = [first[0]], {first[0]}, set(), 0
    for _ in range(levels):
        next_frontier = []
        for dataset_key in frontier:
            runs = [row[0] for row in conn.execute(
                f"""select a.run_key from lineage.dataset_accesses a join lineage.runs r using (run_key)
                    where a.dataset_key = %(dataset)s and {IN_WINDOW}""",  # type: ignore[arg-type]
                {"dataset": dataset_key, "start": start, "end": end}).fetchall()]
            for run_key in runs:
                if run_key in seen_runs:
                    continue
                seen_runs.add(run_key)
                for (accessed,) in conn.execute("select dataset_key from lineage.dataset_accesses where run_key = %s",
                                                (run_key,)).fetchall():
                    rows += 1
                    if accessed not in seen_data:
                        seen_data.add(accessed)
                        next_frontier.append(accessed)
        frontier = next_frontier
        if not frontier:
            break
    return rows


def percentiles(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"p50 {statistics.median(ordered) * 1000:7.1f} ms   p95 {p95 * 1000:7.1f} ms"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Benchmark the dataset lineage walk.")
    parser.add_argument("--programs", type=int, default=2000)
    parser.add_argument("--datasets", type=int, default=10_000)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--samples", type=int, default=40)
    parser.add_argument("--naive-samples", type=int, default=5)
    parser.add_argument("--reuse", action="store_true", help="keep the loaded database from a previous run")
    args = parser.parse_args(argv)
    end = datetime(2026, 11, 1, tzinfo=UTC)
    base = Settings.from_env()
    url = base.database_url.rsplit("/", 1)[0] + "/lineage_bench_walk"
    if not args.reuse:
        url = scratch_database(base.database_url, "lineage_bench_walk")
        apply_migrations(url)
        started = time.perf_counter()
        load(url, args.programs, args.datasets, args.days, end)
        print(f"loaded {args.programs} programs x {args.days * 24} hourly runs over {args.datasets} datasets "
              f"in {time.perf_counter() - started:.0f}s")
    with psycopg.connect(libpq_url(url), autocommit=True) as conn:
        counts = conn.execute("select (select count(*) from lineage.runs), (select count(*) "
                              "from lineage.dataset_accesses)").fetchone()
        assert counts is not None
        print(f"warehouse: {counts[0]:,} runs, {counts[1]:,} accesses")
        rng = random.Random(11)
        names = [f"ds_{rng.randrange(args.datasets)}" for _ in range(args.samples)]
        for label, days in (("1-day window", 1), ("30-day window", args.days)):
            start = end - timedelta(days=days)
            timings, sizes = [], []
            for name in names:
                began = time.perf_counter()
                accesses: list[Access] = walk_lineage(conn, DataRef("bench", "dataset", name), start, end, 10)
                body = json.dumps(lineage_response(int(start.timestamp()), int(end.timestamp()), accesses))
                timings.append(time.perf_counter() - began)
                sizes.append(len(body))
            print(f"lineage levels=10, {label:<14} {percentiles(timings)}   "
                  f"(median response {statistics.median(sizes) / 1024:.0f} KiB)")
            naive, ours = [], []
            for name in names[: args.naive_samples]:
                began = time.perf_counter()
                naive_walk(conn, DataRef("bench", "dataset", name), start, end, 10)
                naive.append(time.perf_counter() - began)
                began = time.perf_counter()
                walk_lineage(conn, DataRef("bench", "dataset", name), start, end, 10)
                ours.append(time.perf_counter() - began)
            print(f"  naive per-node walk, {label:<14} {percentiles(naive)}   "
                  f"ratio {sum(naive) / max(sum(ours), 1e-9):.0f}x slower than the set-at-a-time walk")
    return 0


if __name__ == "__main__":
    sys.exit(main())

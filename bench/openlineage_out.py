"""Benchmark: OpenLineage and Marquez out (``python -m bench.openlineage_out``, ``make bench-export``).

On the dataset-lineage benchmark's warehouse (``make bench-lineage`` loads it: 2,000 programs
running hourly for 30 days, 1.44M runs over 10,000 datasets; ``--load`` loads it here):

1. ``lineage export --out`` of a 1-day and a 4-day window to a file, each in its own process,
   with one process (``--workers 1``) and with the default workers (the machine's cores), in
   turn: events per second and the largest process's peak memory (flat in the window's size is
   the target).
2. Marquez's lineage graph (``GET /api/v1/lineage?nodeId=dataset:...&depth=10``) against this
   API's own dataset lineage (``GET /v3/.../datasets/{ds}/lineage?levels=10``, run ids and
   links), both the routes' whole work (walk, node details, JSON) on the same sampled datasets,
   interleaved, for a 1-day window: p50/p95 and the p95 ratio (target at most 1.2x).
"""

from __future__ import annotations

import argparse
import logging
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson
import psycopg
from lineage_api.routes.lineage import _lineage  # the plugin's routes: their whole work
from lineage_api.routes.marquez import lineage as marquez_lineage

from bench.compaction import scratch_database
from bench.lineage_walk import p95, percentiles
from bench.lineage_workload import NAMESPACE, Topology, load
from lineage.settings import Settings, libpq_url
from warehouse.db.migrate import apply_migrations
from warehouse.pipeline.dbt_build import build_marts
from warehouse.service.authorization import Access

END = datetime(2026, 11, 1, tzinfo=UTC)  # the lineage benchmark's
LINEAGE = str(Path(sys.executable).parent / "lineage")
_PEAK = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True); "
         "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")


def measure_export(url: str, days: int, workers: int = 0) -> tuple[int, float, float]:
    """Events, seconds and peak MiB (its largest process) of ``lineage export --out`` of the
    ``days`` before END, with ``workers`` rendering processes (0: the default)."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "window.jsonl"
        start = END - timedelta(days=days)
        began = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", _PEAK, LINEAGE, "export", "--since",
                               str(int(start.timestamp())), "--until", str(int(END.timestamp())), "--out", str(out),
                               "--workers", str(workers)],
                              env={**os.environ, "LINEAGE_DATABASE_URL": url}, capture_output=True, text=True,
                              check=True)
        seconds = time.perf_counter() - began
        with out.open("rb") as lines:
            events = sum(1 for _ in lines)
    return events, seconds, int(done.stdout.split()[-1]) / 1024


def measure_lineage(url: str, topology: Topology, samples: int) -> None:
    admin = Access("bench", instance_admin=True)
    window = (END - timedelta(days=1), END)
    accessed = sorted({dataset for _, dataset, _ in topology.edges()})
    step = max(1, len(accessed) // samples)
    names = [topology.dataset_name(index) for index in accessed[step // 2::step]][:samples]
    ours, theirs, nodes = [], [], []
    with psycopg.connect(libpq_url(url), autocommit=True) as conn:
        for name in names:
            began = time.perf_counter()
            orjson.dumps(_lineage(conn, NAMESPACE, "dataset", name, window, 10, [], None, "ids", admin))
            ours.append(time.perf_counter() - began)
            began = time.perf_counter()
            graph = marquez_lineage(admin, conn, window, f"dataset:lineage://{NAMESPACE}:{name}", 10)
            orjson.dumps(graph)
            theirs.append(time.perf_counter() - began)
            nodes.append(len(graph["graph"]))
    print(f"this API's lineage, levels=10, 1-day window   {percentiles(ours)}")
    print(f"Marquez's lineage graph, depth=10, same       {percentiles(theirs)}   "
          f"median graph: {sorted(nodes)[len(nodes) // 2]} nodes")
    print(f"  p95 ratio Marquez-shaped / ours: {p95(theirs) / p95(ours):.2f}x (target at most 1.2x)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Benchmark OpenLineage export and Marquez's read API.")
    parser.add_argument("--load", action="store_true", help="load the lineage benchmark's warehouse first")
    parser.add_argument("--samples", type=int, default=40)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    topology = Topology(programs=2000, datasets=10_000, domains=100)
    base = Settings.from_env()
    url = base.database_url.rsplit("/", 1)[0] + "/lineage_bench_walk"
    if args.load:
        url = scratch_database(base.database_url, "lineage_bench_walk")
        apply_migrations(url)
        load(url, topology, 30 * 24, END)
        build_marts(url, Settings.from_env({**os.environ, "LINEAGE_DATABASE_URL": url}), command="run",
                    select="+lineage_walk")
    else:
        apply_migrations(url)  # a warehouse loaded by an older checkout
    for days in (1, 4):
        for workers, label in ((1, "1 process"), (0, "default workers")):
            events, seconds, peak = measure_export(url, days, workers)
            print(f"lineage export --out, {days}-day window, {label:<15}: {events:,} events in {seconds:.1f}s = "
                  f"{events / seconds:,.0f} events/s (target 20,000), peak memory {peak:,.0f} MiB")
    measure_lineage(url, topology, args.samples)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: the blast radius of a bad dataset (``python -m bench.blast_radius``, ``make bench-blast``).

On the dataset-lineage benchmark's warehouse (``make bench-lineage`` loads it: 2,000 programs
hourly for 30 days, 1.44M runs over 10,000 datasets): for sampled datasets some program writes,
an incident marks one hour (``--hours``) of their writes bad (in a transaction rolled back after, so the
warehouse is left as it was), and the route's whole work (``GET .../blast-radius?levels=5``:
the bad writes, the spread run by run, the runs' and datasets' details, JSON) is timed: p50/p95
(target p95 at most 50 ms at levels 5) and how far the blasts reached.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta

import orjson
import psycopg
from lineage_api.routes.blast_radius import blast_radius

from bench.lineage_walk import percentiles
from bench.lineage_workload import NAMESPACE, Topology
from lineage.settings import Settings, libpq_url
from warehouse.db import incident_store
from warehouse.db.migrate import apply_migrations
from warehouse.service.authorization import Access

END = datetime(2026, 11, 1, tzinfo=UTC)  # the lineage benchmark's


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Benchmark the blast radius of a bad dataset.")
    parser.add_argument("--samples", type=int, default=40)
    parser.add_argument("--levels", type=int, default=5)
    parser.add_argument("--hours", type=int, default=1, help="how many hours of each dataset's writes are bad")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    topology = Topology(programs=2000, datasets=10_000, domains=100)
    url = Settings.from_env().database_url.rsplit("/", 1)[0] + "/lineage_bench_walk"
    apply_migrations(url)  # a warehouse loaded by an older checkout
    written = sorted({dataset for _, dataset, access in topology.edges() if access == "write"})
    step = max(1, len(written) // args.samples)
    names = [topology.dataset_name(index) for index in written[step // 2::step]][:args.samples]
    admin = Access("bench", instance_admin=True)
    timings, runs, datasets = [], [], []
    with psycopg.connect(libpq_url(url)) as conn:  # one transaction, rolled back: no incident stays
        for name in names:
            bad_from = END - timedelta(days=2)
            incident_store.record(conn, NAMESPACE, "dataset", name, bad_from, bad_from + timedelta(hours=args.hours),
                                  "bench", "bench")
            began = time.perf_counter()
            answer = blast_radius(NAMESPACE, name, admin, conn, levels=args.levels)
            orjson.dumps(answer)
            timings.append(time.perf_counter() - began)
            runs.append(sum(len(level["runs"]) for level in answer["levels"]))
            datasets.append(len(answer["recovered"]) + len(answer["stillAffected"]))
        conn.rollback()
    print(f"blast radius, levels={args.levels}, {args.hours} bad hour(s)   {percentiles(timings)}   "
          f"median blast: {statistics.median(runs):,.0f} runs, {statistics.median(datasets):,.0f} datasets; "
          f"largest: {max(runs):,} runs, {max(datasets):,} datasets (target p95 at most 50 ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

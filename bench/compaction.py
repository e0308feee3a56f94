"""Benchmark: compaction of N synthetic events end to end (``make bench``).

Creates a scratch warehouse database (``lineage_bench``) next to the configured one, generates
the events, then times ``run_compaction`` (list -> Spark parse/validate/dedup -> COPY ->
merge) and prints events/s and the peak resident memory of the whole process tree (driver,
JVM, Python workers). A second compaction of the same interval is timed too (the no-op).
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import sys
import threading
import time
from datetime import UTC, datetime
from urllib.parse import urlsplit, urlunsplit

import psutil
import psycopg
from psycopg import sql

from bench.generate import generate_events, write_logs
from lineage.settings import Settings, libpq_url
from spark_jobs.compaction.job import run_compaction
from spark_jobs.session import build_session
from warehouse.migrate import apply_migrations


class PeakMemory:
    """Samples the RSS of this process and its children until stopped."""

    def __init__(self, interval: float = 0.2) -> None:
        self.peak = 0
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        me = psutil.Process()
        while not self._stop.is_set():
            total = 0
            for process in [me, *me.children(recursive=True)]:
                try:
                    total += process.memory_info().rss
                except psutil.Error:
                    continue
            self.peak = max(self.peak, total)
            time.sleep(self._interval)


def scratch_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    admin = urlunsplit((parts.scheme, parts.netloc, "/postgres", "", ""))
    with psycopg.connect(libpq_url(admin), autocommit=True) as conn:
        conn.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(name)))
        conn.execute(sql.SQL("create database {}").format(sql.Identifier(name)))
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", "", ""))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Benchmark the compaction of synthetic events.")
    parser.add_argument("--events", type=int, default=1_000_000, help="about this many events (default 1M)")
    parser.add_argument("--events-per-file", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="  %(asctime)s %(message)s")

    base = Settings.from_env()
    url = scratch_database(base.database_url, "lineage_bench")
    apply_migrations(url)
    log_root = base.home / "bench" / "raw-events"
    shutil.rmtree(log_root, ignore_errors=True)
    settings = Settings.from_env({  # the synthetic pipelines write into ns0..ns9, created on first use
        **os.environ, "LINEAGE_AUTO_CREATE_NAMESPACES": "true", "LINEAGE_LOG_ROOT": str(log_root),
        "LINEAGE_DATABASE_URL": url})

    runs_per_pipeline = 125
    pipelines = max(1, round(args.events / (runs_per_pipeline * 7.5)))  # 7.5 events per run on average
    end = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    started = time.perf_counter()
    files, total = write_logs(log_root, generate_events(pipelines, runs_per_pipeline, seed=args.seed, end=end),
                              args.events_per_file, end)
    print(f"generated {total:,} events ({pipelines} pipelines x {runs_per_pipeline} runs) in {files} files "
          f"in {time.perf_counter() - started:.1f}s")

    started = time.perf_counter()
    spark = build_session("lineage-bench", settings)
    spark.sparkContext.setLogLevel("ERROR")
    print(f"spark session started in {time.perf_counter() - started:.1f}s (not counted below)")

    with PeakMemory() as memory:
        started = time.perf_counter()
        summary = run_compaction(spark, interval_end=end, settings=settings)
        elapsed = time.perf_counter() - started
    print(summary.render())
    rate = summary.events_read / elapsed
    print(f"compaction: {summary.events_read:,} events in {elapsed:.1f}s = {rate:,.0f} events/s "
          "end to end (list, parse + validate, dedup, COPY, merge)")
    print(f"peak memory (driver + JVM + Python workers): {memory.peak / 2**20:,.0f} MiB")

    started = time.perf_counter()
    again = run_compaction(spark, interval_end=end, settings=settings)
    print(f"re-run of the same interval: {again.files} new files, {time.perf_counter() - started:.1f}s")
    with psycopg.connect(libpq_url(url)) as conn:
        sizes = conn.execute(
            "select relname, pg_size_pretty(pg_total_relation_size(c.oid)) from pg_class c "
            "join pg_namespace n on n.oid = c.relnamespace where n.nspname = 'lineage' and c.relkind = 'r' "
            "order by pg_total_relation_size(c.oid) desc limit 5").fetchall()
    print("largest tables: " + ", ".join(f"{name} {size}" for name, size in sizes))
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())

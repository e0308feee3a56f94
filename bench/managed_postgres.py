"""Benchmark: the warehouse directly (plain, trust), over TLS with a scram password, and through
PgBouncer in transaction mode (``make bench-managed-pg``), side by side in one run.

Starts a throwaway plain cluster and a TLS + password cluster with PgBouncer in front
(``harness``), and on each path times: opening a connection; 2,000 executions of one indexed
query on one connection, with psycopg's default prepared statements and without (what
``pool_mode=transaction`` does); and the compaction of the same synthetic events end to end.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import psycopg

from bench.generate import generate_events, write_logs
from harness.managed_postgres import PgBouncer, TlsCluster
from harness.ports import free_port
from harness.postgres import Cluster
from lineage.settings import Settings, libpq_url
from spark_jobs.compaction.job import run_compaction
from spark_jobs.session import build_session
from warehouse.db.migrate import apply_migrations

QUERY = "select run_key, status from lineage.runs where namespace = %s and run_id = %s"


def _timed(action: Callable[[], object], times: int) -> float:
    started = time.perf_counter()
    for _ in range(times):
        action()
    return (time.perf_counter() - started) / times


def _queries(url: str, prepare_threshold: int | None, times: int = 2000) -> float:
    """Milliseconds per execution of QUERY on one connection."""
    with psycopg.connect(libpq_url(url), autocommit=True, prepare_threshold=prepare_threshold) as conn:
        return 1000 * _timed(lambda: conn.execute(QUERY, ("ns1", "run-1")).fetchall(), times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--events", type=int, default=100_000, help="events compacted on each path (default 100k)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    home = Path(tempfile.mkdtemp(prefix="lineage-bench-managed-"))
    os.chmod(home, 0o755)
    plain = Cluster(home=home / "plain", port=free_port(), databases=("plain",))
    tls = TlsCluster(databases=("tls", "pooled"))
    bouncer = PgBouncer(tls, pool_size=20)
    spark = None
    try:
        plain.start()
        tls.start()
        bouncer.start()
        paths = {"plain (trust)": plain.url("plain"), "TLS + scram": tls.url("tls"),
                 "PgBouncer transaction": bouncer.url("pooled")}
        for url in paths.values():
            apply_migrations(url)
        spark = build_session("lineage-bench-managed")
        spark.sparkContext.setLogLevel("ERROR")
        runs = 125
        pipelines = max(1, round(args.events / (runs * 7.5)))
        end = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
        print(f"{'path':<24}{'connect ms':>12}{'query ms (prepared)':>22}{'query ms (never)':>19}"
              f"{'compaction events/s':>22}")
        warm = home / "warm-up"
        write_logs(warm, generate_events(2, 10, seed=1, end=end), 1000, end)
        for name, url in paths.items():
            run_compaction(spark, interval_end=end, settings=_settings(url, warm))  # Spark's JIT, workers
            connect_ms = 1000 * _timed(lambda url=url: psycopg.connect(libpq_url(url)).close(), 30)  # type: ignore[misc]
            prepared, never = _queries(url, 5), _queries(url, None)
            log_root = home / f"raw-{name.split()[0]}"
            files, total = write_logs(log_root, generate_events(pipelines, runs, seed=7, end=end), 10_000, end)
            started = time.perf_counter()
            summary = run_compaction(spark, interval_end=end, settings=_settings(url, log_root))
            rate = summary.events_read / (time.perf_counter() - started)
            print(f"{name:<24}{connect_ms:>12.1f}{prepared:>22.3f}{never:>19.3f}{rate:>22,.0f}", flush=True)
        print(f"({total:,} events in {files} files per path; 2,000 executions per query column; 30 connects)")
    finally:
        if spark is not None:
            spark.stop()
        bouncer.stop()
        tls.stop()
        plain.destroy()
        shutil.rmtree(home, ignore_errors=True)
    return 0


def _settings(url: str, log_root: Path) -> Settings:
    return Settings.from_env({**os.environ, "LINEAGE_AUTO_CREATE_NAMESPACES": "true", "LINEAGE_LOG_ROOT": str(log_root),
                              "LINEAGE_DATABASE_URL": url})


if __name__ == "__main__":
    sys.exit(main())

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
import subprocess
import sys
import threading
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psutil
import psycopg
from psycopg import sql

from bench.generate import generate_events, mark_compacted, write_logs
from lineage.settings import Settings, libpq_url
from lineage.transport.log_file import partition_of
from spark_jobs.compaction.job import run_compaction
from spark_jobs.session import build_session
from warehouse.db.migrate import apply_migrations


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


def scratch_database(url: str, name: str, template: str | None = None) -> str:
    """Database ``name`` on ``url``'s server, made afresh (empty, or a clone of ``template``); its URL."""
    parts = urlsplit(url)
    drop_database(url, name)
    statement = sql.SQL("create database {}").format(sql.Identifier(name))
    if template:
        statement = sql.SQL("{} template {}").format(statement, sql.Identifier(template))
    with psycopg.connect(libpq_url(urlunsplit((parts.scheme, parts.netloc, "/postgres", "", ""))),
                         autocommit=True) as conn:
        conn.execute(statement)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", "", ""))


def drop_database(url: str, name: str) -> None:
    """Drop database ``name`` on ``url``'s server, if it is there."""
    parts = urlsplit(url)
    with psycopg.connect(libpq_url(urlunsplit((parts.scheme, parts.netloc, "/postgres", "", ""))),
                         autocommit=True) as conn:
        conn.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(name)))


def fake_history(url: str, log_root: Path, files: int, end: datetime, hours: int) -> None:
    """``files`` tiny log files spread over the ``hours`` before ``end``, already in the manifest
    (as a compaction would have left them), their folders last changed two hours before ``end``."""
    batch = f"bench-history-{uuid.uuid4().hex[:8]}"
    paths = []
    folders = [log_root / partition_of(end - timedelta(hours=hour)) for hour in range(1, hours + 1)]
    for index in range(files):
        folder = folders[index % hours]
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"history-{index:07d}.jsonl"
        path.write_text("{}\n")
        paths.append(f"file:{path}")  # as Hadoop names a local file
    old = (end - timedelta(hours=2)).timestamp()
    for folder in folders:
        os.utime(folder, (old, old))
    with psycopg.connect(libpq_url(url), autocommit=True) as conn:
        mark_compacted(conn, batch, paths)


def run_noop(settings: Settings, url: str, files: int, end: datetime, runs: int) -> dict[str, float]:
    """A lookback holding ``files`` compacted files, then ``runs`` no-op compactions (seconds each)."""
    log_root = Path(settings.log_root)
    started = time.perf_counter()
    fake_history(url, log_root, files, end, settings.lookback_hours)
    print(f"history: {files:,} compacted files over {settings.lookback_hours} hours in "
          f"{time.perf_counter() - started:.1f}s")
    spark = build_session("lineage-bench", settings)
    spark.sparkContext.setLogLevel("ERROR")
    timings = {}
    for attempt in range(1, runs + 1):
        started = time.perf_counter()
        summary = run_compaction(spark, interval_end=end, settings=settings)
        elapsed = time.perf_counter() - started
        assert summary.files == 0, "the no-op run found new files"
        print(f"no-op run {attempt}: {elapsed:.2f}s")
        print(f"RESULT noop{attempt} {elapsed:.3f}", flush=True)
        timings[f"noop{attempt}"] = elapsed
    spark.stop()
    return timings


def run_against(baseline: Path, argv: list[str], script: Path | None = None,
                database: str = "lineage_bench") -> dict[str, float]:
    """This benchmark (or ``script``) with the code of the checkout ``baseline`` (its
    spark_jobs, lineage and warehouse first on the path) over the same logs, into its own
    database; the RESULT lines it prints."""
    env = {**os.environ, "PYTHONPATH": f"{baseline}:{os.environ.get('PYTHONPATH', '')}"}
    command = [sys.executable, str((script or Path(__file__)).resolve()), *argv, "--database", f"{database}_before"]
    print(f"== before: the code of {baseline}", flush=True)
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    results = {}
    for line in done.stdout.splitlines():
        if line.startswith("RESULT "):
            _, name, value = line.split()
            results[name] = float(value)
        elif not line.startswith("  "):
            print(f"   {line}")
    if done.returncode != 0:
        print(done.stderr[-3000:])
        raise SystemExit(f"the baseline run failed ({done.returncode})")
    print("== after: this checkout", flush=True)
    return results


def _compare(before: dict[str, float], after: dict[str, float], name: str, unit: str) -> None:
    if name in before and name in after:
        print(f"before / after: {before[name]:,.2f} / {after[name]:,.2f}{unit} "
              f"(after / before = {after[name] / before[name]:.2f}x)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Benchmark the compaction of synthetic events.")
    parser.add_argument("--events", type=int, default=1_000_000, help="about this many events (default 1M)")
    parser.add_argument("--events-per-file", type=int, default=10_000,
                        help="events per log file (8: the client's shape, a file per run start and end)")
    parser.add_argument("--noop-files", type=int, default=0,
                        help="instead: a no-op compaction over a lookback holding this many compacted files")
    parser.add_argument("--noop-runs", type=int, default=3, help="no-op compactions to time (default 3)")
    parser.add_argument("--against", type=Path, default=None,
                        help="a checkout of the code to compare with (e.g. a git worktree of main): the same "
                             "benchmark runs first with its code, then with this checkout's; both are printed")
    parser.add_argument("--in-process", action="store_true",
                        help="compact with no Spark session: the batch is parsed in this process "
                             "(LINEAGE_COMPACTION_IN_PROCESS_MB raised to hold it)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--database", default="lineage_bench", help="the scratch database (dropped and made anew)")
    parser.add_argument("--logs-ready", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="  %(asctime)s %(message)s")
    raw_argv = list(argv if argv is not None else sys.argv[1:])
    before: dict[str, float] = {}
    if args.against is not None:
        index = raw_argv.index("--against")
        child_argv = raw_argv[:index] + raw_argv[index + 2:]
        before = run_against(args.against, child_argv, database=args.database)
        args.logs_ready = args.noop_files == 0

    base = Settings.from_env()
    url = scratch_database(base.database_url, args.database)
    apply_migrations(url)
    log_root = base.home / "bench" / "raw-events"
    settings = Settings.from_env({  # the synthetic pipelines write into ns0..ns9, created on first use
        **os.environ, "LINEAGE_AUTO_CREATE_NAMESPACES": "true", "LINEAGE_LOG_ROOT": str(log_root),
        "LINEAGE_DATABASE_URL": url, **({"LINEAGE_COMPACTION_IN_PROCESS_MB": "4096"} if args.in_process else {})})
    end = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)

    if args.noop_files:
        shutil.rmtree(log_root, ignore_errors=True)
        after = run_noop(settings, url, args.noop_files, end, args.noop_runs)
        for attempt in sorted({1, args.noop_runs}):
            _compare(before, after, f"noop{attempt}", f" s (no-op run {attempt})")
        return 0

    runs_per_pipeline = 125
    pipelines = max(1, round(args.events / (runs_per_pipeline * 7.5)))  # 7.5 events per run on average
    if not args.logs_ready:
        shutil.rmtree(log_root, ignore_errors=True)
        started = time.perf_counter()
        files, total = write_logs(log_root, generate_events(pipelines, runs_per_pipeline, seed=args.seed, end=end),
                                  args.events_per_file, end)
        print(f"generated {total:,} events ({pipelines} pipelines x {runs_per_pipeline} runs) in {files} files "
              f"in {time.perf_counter() - started:.1f}s")

    started = time.perf_counter()
    spark = None if args.in_process else build_session("lineage-bench", settings)
    if spark is not None:
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
    print(f"peak memory ({'this process' if spark is None else 'driver + JVM + Python workers'}): "
          f"{memory.peak / 2**20:,.0f} MiB")
    print(f"RESULT rate {rate:.1f}")
    print(f"RESULT memory {memory.peak / 2**20:.0f}")
    if before:
        _compare(before, {"rate": rate}, "rate", " events/s")

    started = time.perf_counter()
    again = run_compaction(spark, interval_end=end, settings=settings)
    print(f"re-run of the same interval: {again.files} new files, {time.perf_counter() - started:.1f}s")
    if before:
        print(f"peak memory before / after: {before.get('memory', 0):,.0f} / {memory.peak / 2**20:,.0f} MiB")
    with psycopg.connect(libpq_url(url)) as conn:
        sizes = conn.execute(
            "select relname, pg_size_pretty(pg_total_relation_size(c.oid)) from pg_class c "
            "join pg_namespace n on n.oid = c.relnamespace where n.nspname = 'lineage' and c.relkind = 'r' "
            "order by pg_total_relation_size(c.oid) desc limit 5").fetchall()
    print("largest tables: " + ", ".join(f"{name} {size}" for name, size in sizes))
    if spark is not None:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())


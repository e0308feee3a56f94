"""Benchmark: OpenLineage in over HTTP (``python -m bench.openlineage_ingest``, ``make bench-openlineage``).

A platform's hour (issue 16): 2,000 task runs each sending START, RUNNING and COMPLETE, every
event with 2 inputs and 1 output carrying a 20-field schema and column lineage (about 5 KB),
posted one event per request (as the stock HTTP transport does) with an ingest key by 16
concurrent clients to a real ``airflow api-server``. Then it prints:

- ingest: events/s over the whole posting, and the request latency p50/p95 (client clock);
- the files the endpoint wrote for the hour (sealed by size or age; the server is stopped at
  the end, which seals its open files);
- the compaction of the hour, end to end (listing, Spark staging, merge, commit), in
  OpenLineage events/s and native events/s (each OpenLineage event expands to several);
- a no-op compaction's time (listing + manifest lookup) after 1, 7 and 30 days of such hours
  already compacted (their files are written as tiny files and put in the manifest, as a
  compaction would): it grows until the lookback (7 days by default) is full, then stays flat.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import sys
import threading
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import orjson

from bench.compaction import scratch_database
from bench.lineage_walk import percentiles
from harness.api_server import api_server, token
from lineage.log_writer import EventLogWriter, partition_of
from lineage.openlineage_mapping import wrap
from lineage.settings import Settings, libpq_url
from spark_jobs.compaction.job import run_compaction
from spark_jobs.session import build_session
from warehouse import namespace_store
from warehouse.db import connect
from warehouse.migrate import apply_migrations

NAMESPACE = "bench"
PRODUCER = "https://github.com/apache/airflow/tree/providers-openlineage/2.20.3"
SCHEMA_URL = "https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json#/$defs/ColumnLineageDatasetFacet"


def task_events(task: int, start: datetime) -> list[dict[str, Any]]:
    """START, RUNNING and COMPLETE of one task run, each with the run's inputs and output."""
    dag, run_id = f"dag_{task // 20}", str(uuid.UUID(int=task + 1))
    sources = [{"namespace": "postgres://warehouse:5432", "name": f"analytics.public.source_{(task + k) % 500}"}
               for k in (0, 1)]
    fields = [f"column_{index:02d}" for index in range(20)]
    output = {"namespace": "postgres://warehouse:5432", "name": f"analytics.public.{dag}_task_{task % 20}",
              "facets": {
                  "schema": {"_producer": PRODUCER, "_schemaURL": SCHEMA_URL,
                             "fields": [{"name": field, "type": "varchar"} for field in fields]},
                  "columnLineage": {"_producer": PRODUCER, "_schemaURL": SCHEMA_URL, "fields": {
                      field: {"inputFields": [
                          {**sources[index % 2], "field": field, "transformations": [
                              {"type": "DIRECT", "subtype": "IDENTITY" if index % 3 else "TRANSFORMATION"}]}]}
                      for index, field in enumerate(fields)}}}}
    events = []
    for minutes, state in ((0, "START"), (1, "RUNNING"), (5, "COMPLETE")):
        events.append({
            "eventType": state, "eventTime": (start + timedelta(minutes=minutes)).isoformat(), "producer": PRODUCER,
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
            "run": {"runId": run_id, "facets": {"parent": {
                "_producer": PRODUCER, "_schemaURL": SCHEMA_URL,
                "run": {"runId": str(uuid.UUID(int=10_000_000 + task // 20))},
                "job": {"namespace": "airflow", "name": dag}}}},
            "job": {"namespace": "airflow", "name": f"{dag}.task_{task % 20}"},
            "inputs": sources, "outputs": [output]})
    return events


def ceiling(base: str, clients: int, requests: int = 3000) -> float:
    """Requests/s the api-server answers on the plugin's health route (a pooled ping) with the same
    clients: what Airflow's stack and this machine allow any route."""
    done = threading.Barrier(clients + 1)

    def work() -> None:
        with httpx.Client(base_url=f"{base}/lineage", timeout=60) as client:
            for _ in range(requests // clients):
                client.get("/health")
        done.wait()

    threads = [threading.Thread(target=work) for _ in range(clients)]
    began = time.perf_counter()
    for thread in threads:
        thread.start()
    done.wait()
    return (requests // clients * clients) / (time.perf_counter() - began)


def post_all(base: str, key: str, bodies: list[bytes], clients: int) -> tuple[float, list[float]]:
    """Post ``bodies`` (one event each) from ``clients`` threads; (seconds, latencies)."""
    latencies: list[float] = []
    failures: list[str] = []
    lock = threading.Lock()

    def work(share: list[bytes]) -> None:
        with httpx.Client(base_url=f"{base}/lineage", timeout=60,
                          headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"}) as client:
            mine = []
            for body in share:
                began = time.perf_counter()
                response = client.post("/api/v1/lineage", content=body)
                mine.append(time.perf_counter() - began)
                if response.status_code != 201:
                    failures.append(f"{response.status_code} {response.text[:200]}")
            with lock:
                latencies.extend(mine)

    # each client posts whole task runs in order (START, RUNNING, COMPLETE), as a worker does
    # (single events: three requests per task run; arrays: whole requests)
    step = 3 if bodies[0].startswith(b"{") else 1
    shares: list[list[bytes]] = [[] for _ in range(clients)]
    for index in range(0, len(bodies), step):
        shares[(index // step) % clients].extend(bodies[index:index + step])
    threads = [threading.Thread(target=work, args=(share,)) for share in shares]
    began = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - began
    if failures:
        raise RuntimeError(f"{len(failures)} requests failed, e.g. {failures[0]}")
    return seconds, latencies


def fake_history(url: str, log_root: Path, hours: int, files_per_hour: int, end: datetime) -> None:
    """``hours`` of already compacted hours: tiny files in their partitions, in the manifest."""
    batch = f"bench-history-{uuid.uuid4().hex[:8]}"
    paths = []
    for hour in range(1, hours + 1):
        folder = log_root / partition_of(end - timedelta(hours=hour))
        folder.mkdir(parents=True, exist_ok=True)
        for _ in range(files_per_hour):
            path = folder / f"openlineage-{uuid.uuid4().hex}.jsonl"
            path.write_text("{}\n")
            paths.append(f"file:{path}")  # as Hadoop lists a local file
        # the folder last changed when its hour ended (or a few minutes ago, for the last hour)
        old = min(end - timedelta(hours=hour - 1), datetime.now(UTC) - timedelta(minutes=2)).timestamp()
        os.utime(folder, (old, old))
    with connect(url, autocommit=True) as conn, conn.transaction():
        conn.execute("""insert into lineage.compaction_batches (batch_id, started_at, files, events_read,
                        events_compacted, duplicates, quarantined, runs_touched, accesses_added)
                        values (%s, now(), %s, 0, 0, 0, 0, 0, 0)""", (batch, len(paths)))
        with conn.cursor().copy("copy lineage.compacted_files (file_path, batch_id, size_bytes, lines) from stdin"
                                ) as copy:
            for uri in paths:
                copy.write_row((uri, batch, 3, 1))


def noop_seconds(spark: Any, settings: Settings, end: datetime, repeats: int = 3) -> float:
    samples = []
    for _ in range(repeats):
        began = time.perf_counter()
        summary = run_compaction(spark, interval_end=end, settings=settings)
        samples.append(time.perf_counter() - began)
        assert summary.files == 0, "the no-op run found new files"
    return min(samples)


def compaction_only(args: argparse.Namespace, argv: list[str]) -> int:
    """The compaction of the hour's events, written as the endpoint writes them; with
    ``--against``, the same first with another checkout's code (both rates printed)."""
    before: dict[str, float] = {}
    if args.against is not None:
        from bench.compaction import run_against  # not in the baseline checkout, which runs this file too

        index = argv.index("--against")
        before = run_against(args.against, argv[:index] + argv[index + 2:], Path(__file__), database=args.database)
    base_settings = Settings.from_env()
    url = scratch_database(base_settings.database_url, args.database)
    apply_migrations(url)
    with connect(url, autocommit=True) as conn:
        namespace_store.create_namespace(conn, NAMESPACE, "OpenLineage benchmark")
    log_root = base_settings.home / "bench" / "openlineage-raw"
    shutil.rmtree(log_root, ignore_errors=True)
    env = {**os.environ, "LINEAGE_LOG_ROOT": str(log_root), "LINEAGE_DATABASE_URL": url,
           "LINEAGE_NAMESPACE_MAP": f"airflow={NAMESPACE},postgres://warehouse={NAMESPACE}"}
    settings = Settings.from_env(env)
    hour = datetime.now(UTC).replace(minute=0, second=0, microsecond=0) - timedelta(hours=1)
    events = [wrap(event, settings.namespace_map) for task in range(args.tasks)
              for event in task_events(task, hour + timedelta(seconds=task % 3000))]
    writer = EventLogWriter(str(log_root))
    for start in range(0, len(events), 2000):
        writer.write(events[start:start + 2000], prefix="openlineage", now=hour)
    spark = build_session("bench-openlineage", settings)
    spark.sparkContext.setLogLevel("ERROR")
    began = time.perf_counter()
    summary = run_compaction(spark, interval_end=datetime.now(UTC) + timedelta(minutes=5), settings=settings)
    elapsed = time.perf_counter() - began
    rate = len(events) / elapsed
    print(f"compaction of the hour ({len(events):,} OpenLineage events in {summary.files} files): {elapsed:.1f} s "
          f"end to end, {rate:,.0f} OpenLineage events/s, {summary.events_read / elapsed:,.0f} native events/s "
          f"({summary.events_read:,} expanded; {summary.quarantined} quarantined; target >= 10,000 events/s)")
    print(f"RESULT rate {rate:.1f}", flush=True)
    if "rate" in before:
        print(f"before / after: {before['rate']:,.0f} / {rate:,.0f} OpenLineage events/s "
              f"(after / before = {rate / before['rate']:.2f}x)")
    spark.stop()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Benchmark OpenLineage in over HTTP.")
    parser.add_argument("--tasks", type=int, default=2000, help="task runs in the hour (3 events each)")
    parser.add_argument("--clients", type=int, default=16, help="concurrent HTTP clients")
    parser.add_argument("--batch", type=int, default=1,
                        help="events per request (1: as the stock HTTP transport sends them; more: JSON arrays)")
    parser.add_argument("--workers", type=int, default=2, help="api-server worker processes")
    parser.add_argument("--compaction-only", action="store_true",
                        help="no api-server: write the hour's events as the endpoint seals them (files of 2,000 "
                             "events) and time their compaction only")
    parser.add_argument("--against", type=Path, default=None,
                        help="with --compaction-only: a checkout of the code to compare with (e.g. a git worktree "
                             "of main), run first over the same events")
    parser.add_argument("--database", default="lineage_bench_openlineage", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="  %(asctime)s %(message)s")
    if args.compaction_only:
        return compaction_only(args, list(argv if argv is not None else sys.argv[1:]))

    base_settings = Settings.from_env()
    url = scratch_database(base_settings.database_url, args.database)
    apply_migrations(url)
    with connect(url, autocommit=True) as conn:
        namespace_store.create_namespace(conn, NAMESPACE, "OpenLineage benchmark")
    log_root = base_settings.home / "bench" / "openlineage-raw"
    shutil.rmtree(log_root, ignore_errors=True)
    log_root.mkdir(parents=True)
    env = {**os.environ, "AIRFLOW_CONN_LINEAGE_WAREHOUSE": libpq_url(url), "LINEAGE_LOG_ROOT": str(log_root),
           "LINEAGE_NAMESPACE_MAP": f"airflow={NAMESPACE},postgres://warehouse={NAMESPACE}",
           "AIRFLOW__API__WORKERS": str(args.workers)}
    settings = Settings.from_env({**env, "LINEAGE_DATABASE_URL": url})

    hour = datetime.now(UTC).replace(minute=0, second=0, microsecond=0) - timedelta(hours=1)
    bodies = [orjson.dumps(event) for task in range(args.tasks)
              for event in task_events(task, hour + timedelta(seconds=task % 3000))]
    print(f"{len(bodies):,} OpenLineage events of {args.tasks:,} task runs, "
          f"mean {sum(map(len, bodies)) / len(bodies) / 1024:.1f} KB, {args.clients} clients, "
          f"{args.batch} event(s) per request, {args.workers} api-server worker(s)")
    requests = bodies if args.batch == 1 else [
        b"[" + b",".join(bodies[index:index + args.batch]) + b"]" for index in range(0, len(bodies), args.batch)]

    with api_server(env) as base:
        jwt = token(base, "admin", "admin").json()["access_token"]
        admin = httpx.Client(base_url=f"{base}/lineage", timeout=30, headers={"Authorization": f"Bearer {jwt}"})
        admin.put("/v3/grants", json={"principal": "bench-producer", "entity": f"namespaces/{NAMESPACE}",
                                      "privilege": "WRITE"}).raise_for_status()
        created = admin.post("/v3/ingest-keys", json={"name": "bench", "principal": "bench-producer"})
        created.raise_for_status()
        key = created.json()["secret"]
        post_all(base, key, [orjson.dumps(task_events(10**6, hour)[0])] * 32, 4)  # warm-up: imports, pool, key
        seconds, latencies = post_all(base, key, requests, args.clients)
        health = ceiling(base, args.clients)
    print(f"ingest: {len(bodies) / seconds:,.0f} events/s ({seconds:.1f} s, {len(requests)} requests); "
          f"requests {percentiles(latencies)} "
          "(targets >= 2,000 events/s, p95 <= 25 ms)")
    print(f"the same clients on the plugin's health route (one pooled warehouse ping): {health:,.0f} requests/s "
          f"(the api-server's ceiling here; the endpoint reaches {len(requests) / seconds / health:.0%} of it)")
    files = sorted(log_root.glob("dt=*/hour=*/*.jsonl"))
    print(f"files written for the hour: {len(files)} ({sum(f.stat().st_size for f in files) / 1e6:.1f} MB; "
          "target <= 100)")

    spark = build_session("bench-openlineage", settings)
    end = datetime.now(UTC) + timedelta(minutes=5)
    began = time.perf_counter()
    summary = run_compaction(spark, interval_end=end, settings=settings)
    elapsed = time.perf_counter() - began
    print(f"compaction of the hour: {elapsed:.1f} s end to end, {len(bodies) / elapsed:,.0f} OpenLineage events/s, "
          f"{summary.events_read / elapsed:,.0f} native events/s ({summary.events_read:,} expanded; "
          f"{summary.duplicates} duplicates, {summary.quarantined} quarantined; target >= 10,000 events/s)")

    files_per_hour = max(1, len(files))
    noop = {}
    written = 0
    for days in (1, 7, 30):  # hours already compacted, back from the measured hour
        fake_history(url, log_root, days * 24 - written, files_per_hour, end - timedelta(hours=written))
        written = days * 24
        noop[days] = noop_seconds(spark, settings, end)
    print(f"no-op compaction ({files_per_hour} files per hour already compacted): "
          + ", ".join(f"after {days} day(s) {seconds:.2f} s" for days, seconds in noop.items())
          + f" (the listing covers LINEAGE_LOOKBACK_HOURS={settings.lookback_hours}, not the whole history)")
    spark.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

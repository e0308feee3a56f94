"""Benchmark: OpenLineage in over HTTP (``python -m bench.openlineage_ingest``, ``make bench-openlineage``).

A platform's hour (issue 16): 2,000 task runs each sending START, RUNNING and COMPLETE, every
event with 2 inputs and 1 output carrying a 20-field schema and column lineage (about 5 KB),
posted with an ingest key by 16 concurrent clients to a real ``airflow api-server``, one event
per request (as the stock HTTP transport does) or as JSON arrays (``--batch``). On the same
server, interleaved with the hour, the same clients call two trivial routes of a plugin app
mounted like ours (``bench/plugins``): what any plugin route costs in Airflow's stack here.
``--workers 1,2`` measures several api-server sizes, ``--baseline DIR`` another checkout's code
(say main's) alternating with this one, so both see the same machine. Then it prints:

- per server and route: requests/s, events/s, request latency p50/p95 (client clock), and the
  clients' own CPU (they run on the same cores as the server);
- the files each server wrote (sealed by size or age; the server is stopped at the end, which
  seals its open files);
- the compaction of what this checkout's first server wrote, end to end (listing, Spark
  staging, merge, commit), in OpenLineage events/s and native events/s (each OpenLineage event
  expands to several); ``--ingest-only`` skips it and the next point;
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
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import orjson
import psutil

from bench.compaction import scratch_database
from bench.generate import mark_compacted
from bench.lineage_walk import percentiles
from harness.api_server import ApiServer, token
from lineage.naming.identity import NO_MAPPING
from lineage.openlineage.mapping import wrap
from lineage.settings import Settings, libpq_url
from lineage.transport.log_file import EventLogWriter, partition_of
from spark_jobs.compaction.job import run_compaction
from spark_jobs.session import build_session
from warehouse.db import namespace_store
from warehouse.db.connection import connect
from warehouse.db.migrate import apply_migrations

NAMESPACE = "bench"
ROOT = Path(__file__).resolve().parent.parent
PLUGINS = Path(__file__).resolve().parent / "plugins"  # the lineage plugin and the trivial routes
INGEST = "/lineage/api/v1/lineage"
PING, ECHO = "/bench-trivial/ping", "/bench-trivial/echo"  # bench/plugins/trivial_routes.py
PRODUCER = "https://github.com/apache/airflow/tree/providers-openlineage/2.20.3"
SCHEMA_URL = "https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json#/$defs/ColumnLineageDatasetFacet"


def task_events(task: int, start: datetime) -> list[dict[str, Any]]:
    """START, RUNNING and COMPLETE of one task run, each with the run's inputs and output. The
    task's run and its DAG's run are new each hour (their ids hold the hour of ``start``), as an
    hourly platform's are."""
    hour = int(start.timestamp()) // 3600
    dag, run_id = f"dag_{task // 20}", str(uuid.UUID(int=(hour << 64) + task + 1))
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
                "run": {"runId": str(uuid.UUID(int=(hour << 64) + 10_000_000 + task // 20))},
                "job": {"namespace": "airflow", "name": dag}}}},
            "job": {"namespace": "airflow", "name": f"{dag}.task_{task % 20}"},
            "inputs": sources, "outputs": [output]})
    return events


def write_platform_hour(log_root: Path, at: datetime, tasks: int, name: str = "platform.jsonl") -> Path:
    """The hour ``at`` of ``tasks`` task runs (``task_events``), as the raw log holds OpenLineage
    events (each wrapped as the endpoint writes it), in the hour's partition under ``log_root``."""
    path = log_root / partition_of(at) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(wrap(event, NO_MAPPING)) + b"\n"
                              for task in range(tasks) for event in task_events(task, at)))
    return path


@dataclass(frozen=True)
class Server:
    """One ``airflow api-server`` to measure: which checkout's code, how many workers."""

    label: str
    code: Path  # the checkout whose lineage/ and plugins/ the server runs
    workers: int


@dataclass(frozen=True)
class Posting:
    """One measured posting: ``requests`` requests of ``events`` events in total."""

    server: Server
    what: str
    requests: int
    events: int
    seconds: float
    latencies: list[float]
    client_cpu: float  # the clients' own CPU, in cores (they share the machine with the server)
    server_cpu: float  # the api-server's CPU (all its processes), in seconds

    def row(self) -> str:
        return (f"{self.server.label:<10} {self.server.workers:>7}  {self.what:<30} "
                f"{self.requests / self.seconds:>7,.0f} {self.events / self.seconds:>9,.0f}  "
                f"{percentiles(self.latencies)}  {self.client_cpu:5.2f}  "
                f"{self.server_cpu / self.requests * 1000:6.2f} {self.server_cpu / self.events * 1000:6.2f}")


HEADER = (f"{'code':<10} {'workers':>7}  {'route':<30} {'req/s':>7} {'events/s':>9}  "
          f"{'request latency':<34} {'client':>5}  {'server CPU ms':>13}\n"
          f"{'':<10} {'':>7}  {'':<30} {'':>7} {'':>9}  {'':<34} {'cores':>5}  {'/req':>6} {'/event':>6}")


def cpu_seconds(process: psutil.Process) -> float:
    """CPU (user + system) of ``process`` and its children so far: the server's own work,
    whatever else loads the machine."""
    total = 0.0
    for each in [process, *process.children(recursive=True)]:
        try:
            times = each.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += times.user + times.system
    return total


def post_all(base: str, path: str, headers: dict[str, str], requests: list[bytes], clients: int,
             per_request: int = 1, method: str = "POST", rate: float | None = None
             ) -> tuple[float, list[float], float]:
    """Post ``requests`` from ``clients`` threads, each with its own keep-alive connection;
    (seconds, latencies, the clients' CPU in cores). Each client posts whole task runs in order
    (START, RUNNING, COMPLETE), as a worker does: three single-event requests, or whole arrays.
    Each client sends its next request once the last is answered; with ``rate`` (requests/s in
    all) on a schedule instead, and a latency counts from when its request was due, so a server
    that falls behind shows it."""
    latencies: list[float] = []
    failures: list[str] = []
    lock = threading.Lock()
    interval = clients / rate if rate else 0.0  # between one client's requests

    def work(share: list[bytes], offset: float) -> None:
        with httpx.Client(base_url=base, timeout=60, headers=headers) as client:
            mine = []
            start = time.perf_counter() + offset
            for index, body in enumerate(share):
                began = time.perf_counter()
                if interval:
                    due = start + index * interval
                    if due > began:
                        time.sleep(due - began)
                    began = due
                response = client.post(path, content=body) if method == "POST" else client.get(path)
                mine.append(time.perf_counter() - began)
                if response.status_code not in (200, 201):
                    failures.append(f"{response.status_code} {response.text[:200]}")
            with lock:
                latencies.extend(mine)

    step = 3 if per_request == 1 else 1
    shares: list[list[bytes]] = [[] for _ in range(clients)]
    for index in range(0, len(requests), step):
        shares[(index // step) % clients].extend(requests[index:index + step])
    threads = [threading.Thread(target=work, args=(share, number * interval / clients))
               for number, share in enumerate(shares)]
    cpu, began = time.process_time(), time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - began
    if failures:
        raise RuntimeError(f"{len(failures)} requests to {path} failed, e.g. {failures[0]}")
    return seconds, latencies, (time.process_time() - cpu) / seconds


class Running:
    """A started ``airflow api-server`` of one ``Server``, with an ingest key to post with."""

    def __init__(self, server: Server, env: dict[str, str], log_root: Path, args: argparse.Namespace) -> None:
        self.server, self.log_root, self.clients = server, log_root, args.clients
        self.api = ApiServer({**env, "LINEAGE_LOG_ROOT": str(log_root), "AIRFLOW__API__WORKERS": str(server.workers),
                              "AIRFLOW__CORE__PLUGINS_FOLDER": str(PLUGINS),
                              "PYTHONPATH": os.pathsep.join([str(server.code), str(server.code / "plugins")])})
        self.headers = {"Content-Type": "application/json"}
        if args.identity:
            self.headers["Accept-Encoding"] = "identity"
        self.process: psutil.Process | None = None

    def start(self, sample: bytes) -> Running:
        self.api.start()
        assert self.api.process is not None
        self.process = psutil.Process(self.api.process.pid)
        base = self.api.base
        jwt = token(base, "admin", "admin").json()["access_token"]
        with httpx.Client(base_url=f"{base}/lineage", timeout=30, headers={"Authorization": f"Bearer {jwt}"}) as admin:
            admin.put("/v3/grants", json={"principal": "bench-producer", "entity": f"namespaces/{NAMESPACE}",
                                          "privilege": "WRITE"}).raise_for_status()
            created = admin.post("/v3/ingest-keys", json={"name": "bench", "principal": "bench-producer"})
            created.raise_for_status()
        self.headers["Authorization"] = f"Bearer {created.json()['secret']}"
        for path in (INGEST, ECHO, PING):  # warm-up: imports, the pool, the key, every worker's connections
            post_all(base, path, self.headers, [sample] * 64, self.clients, method="GET" if path == PING else "POST")
        return self

    def post(self, what: str, path: str, requests: list[bytes], events: int, per_request: int = 1,
             method: str = "POST", rate: float | None = None) -> Posting:
        assert self.process is not None
        used = cpu_seconds(self.process)
        seconds, latencies, cpu = post_all(self.api.base, path, self.headers, requests, self.clients, per_request,
                                           method, rate)
        return Posting(self.server, what, len(requests), events, seconds, latencies, cpu,
                       cpu_seconds(self.process) - used)

    def stop(self) -> list[Path]:
        """Stop the server (which seals its open files); the files it wrote."""
        self.api.close()
        return sorted(self.log_root.glob("dt=*/hour=*/*.jsonl"))


def measure(servers: list[Server], env: dict[str, str], hour: datetime, args: argparse.Namespace,
            roots: Path) -> tuple[list[Posting], dict[Server, list[Path]]]:
    """Start ``servers`` together; post the trivial routes and the hour (once per ``--batch``
    value, each time with other task runs, so no event repeats) to each in turn, in the
    opposite order every other round, so they see the same machine; stop them."""
    sample = orjson.dumps(task_events(10**6, hour)[2])
    running: list[Running] = []
    postings: list[Posting] = []
    try:
        for server in servers:
            folder = roots / f"{server.label}-{server.workers}"
            running.append(Running(server, env, folder, args))
            running[-1].start(sample)
        for round_, batch in enumerate(args.batch):
            bodies = [orjson.dumps(event) for task in range(round_ * args.tasks, (round_ + 1) * args.tasks)
                      for event in task_events(task, hour + timedelta(seconds=task % 3000))]
            requests = bodies if batch == 1 else [
                b"[" + b",".join(bodies[index:index + batch]) + b"]" for index in range(0, len(bodies), batch)]
            what = "OpenLineage, 1 event/request" if batch == 1 else f"OpenLineage, {batch} events/request"
            rate = args.rate / batch if args.rate else None
            if rate:
                what += f" @{args.rate:,.0f}/s"
            trivial = [sample] * args.trivial_requests
            for each in running if round_ % 2 == 0 else running[::-1]:
                postings.append(each.post("trivial GET (no body)", PING, trivial, len(trivial), method="GET"))
                postings.append(each.post(f"trivial POST ({len(sample) / 1024:.1f} KB)", ECHO, trivial, len(trivial)))
                postings.append(each.post(what, INGEST, requests, len(bodies), batch, rate=rate))
                print("  " + postings[-1].row(), flush=True)
    finally:
        written = {each.server: each.stop() for each in running}
    return postings, written


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
    with connect(url, autocommit=True) as conn:
        mark_compacted(conn, batch, paths)


def noop_seconds(spark: Any, settings: Settings, end: datetime, repeats: int = 3) -> float:
    samples = []
    for _ in range(repeats):
        began = time.perf_counter()
        summary = run_compaction(spark, interval_end=end, settings=settings)
        samples.append(time.perf_counter() - began)
        assert summary.files == 0, "the no-op run found new files"
    return min(samples)


def bench_warehouse(database: str) -> tuple[str, Path]:
    """A migrated scratch warehouse with the benchmark's namespace, and an emptied raw log root."""
    base_settings = Settings.from_env()
    url = scratch_database(base_settings.database_url, database)
    apply_migrations(url)
    with connect(url, autocommit=True) as conn:
        namespace_store.create_namespace(conn, NAMESPACE, "OpenLineage benchmark")
    log_root = base_settings.home / "bench" / "openlineage-raw"
    shutil.rmtree(log_root, ignore_errors=True)
    return url, log_root


def compaction_only(args: argparse.Namespace, argv: list[str]) -> int:
    """The compaction of the hour's events, written as the endpoint writes them; with
    ``--against``, the same first with another checkout's code (both rates printed)."""
    before: dict[str, float] = {}
    if args.against is not None:
        from bench.compaction import run_against  # not in the baseline checkout, which runs this file too

        index = argv.index("--against")
        before = run_against(args.against, argv[:index] + argv[index + 2:], Path(__file__), database=args.database)
    url, log_root = bench_warehouse(args.database)
    env = {**os.environ, "LINEAGE_LOG_ROOT": str(log_root), "LINEAGE_DATABASE_URL": url,
           "LINEAGE_NAMESPACE_MAP": f"airflow={NAMESPACE},postgres://warehouse={NAMESPACE}"}
    settings = Settings.from_env(env)
    hour = datetime.now(UTC).replace(minute=0, second=0, microsecond=0) - timedelta(hours=1)
    events = [wrap(event, settings.namespace_map) for task in range(args.tasks)
              for event in task_events(task, hour + timedelta(seconds=task % 3000))]
    writer = EventLogWriter(str(log_root))
    for start in range(0, len(events), 2000):
        writer.write(events[start:start + 2000], prefix="openlineage", now=hour)
    spark = None if args.in_process else build_session("bench-openlineage", settings)
    if spark is not None:
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
    if spark is not None:
        spark.stop()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Benchmark OpenLineage in over HTTP.")
    parser.add_argument("--tasks", type=int, default=2000, help="task runs in the hour (3 events each)")
    parser.add_argument("--clients", type=int, default=16, help="concurrent HTTP clients")
    parser.add_argument("--batch", type=_ints, default=[1],
                        help="events per request, a comma list (1: as the stock HTTP transport sends them; "
                             "more: JSON arrays); each value posts the hour again, with other task runs")
    parser.add_argument("--workers", type=_ints, default=[2], help="api-server worker processes, a comma list")
    parser.add_argument("--baseline", type=Path,
                        help="also measure the code of this checkout (e.g. `git archive main | tar -x -C DIR`), "
                             "alternating with this one on the same machine")
    parser.add_argument("--rate", type=float,
                        help="offer the hour at this many events/s (clients send on a schedule; latency counts from "
                             "when a request was due) instead of as fast as the server answers")
    parser.add_argument("--trivial-requests", type=int, default=3000, help="requests per trivial-route measurement")
    parser.add_argument("--identity", action="store_true",
                        help="clients send Accept-Encoding: identity (httpx and the OpenLineage client ask for gzip)")
    parser.add_argument("--quiet-access-log", action="store_true",
                        help="the servers log no line per request "
                             "(AIRFLOW__LOGGING__NAMESPACE_LEVELS=http.access=WARNING)")
    parser.add_argument("--seal-seconds", type=int, default=None,
                        help="the servers' LINEAGE_INGEST_SEAL_SECONDS (default 60); with --rate, a shorter one "
                             "stands in for a trickle over a longer time (files written per seal interval)")
    parser.add_argument("--ingest-only", action="store_true", help="skip the compaction and the no-op listing")
    parser.add_argument("--in-process", action="store_true",
                        help="with --compaction-only: no Spark session, the hour is parsed in this process")
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

    url, roots = bench_warehouse(args.database)
    env = {**os.environ, "AIRFLOW_CONN_LINEAGE_WAREHOUSE": libpq_url(url),
           "LINEAGE_NAMESPACE_MAP": f"airflow={NAMESPACE},postgres://warehouse={NAMESPACE}"}
    if args.quiet_access_log:
        env["AIRFLOW__LOGGING__NAMESPACE_LEVELS"] = "http.access=WARNING"
    if args.seal_seconds:
        env["LINEAGE_INGEST_SEAL_SECONDS"] = str(args.seal_seconds)
    servers = [Server(label, code, workers) for workers in args.workers
               for label, code in ([("baseline", args.baseline.resolve())] if args.baseline else []) + [("this", ROOT)]]

    hour = datetime.now(UTC).replace(minute=0, second=0, microsecond=0) - timedelta(hours=1)
    sample = task_events(0, hour)
    mean = sum(len(orjson.dumps(event)) for event in sample) / len(sample) / 1024
    print(f"{3 * args.tasks:,} OpenLineage events of {args.tasks:,} task runs per posting, mean {mean:.1f} KB, "
          f"{args.clients} clients (threads of this process, on the same cores as the server), "
          f"Accept-Encoding {'identity' if args.identity else 'gzip (as httpx and the OpenLineage client send)'}, "
          f"access log {'off' if args.quiet_access_log else 'on'}; "
          f"servers: {', '.join(f'{s.label} code, {s.workers} worker(s)' for s in servers)}; "
          f"load average before: {os.getloadavg()[0]:.1f}")
    postings: list[Posting] = []
    written: dict[Server, list[Path]] = {}
    for workers in args.workers:
        done, written_by = measure([server for server in servers if server.workers == workers], env, hour, args,
                                   roots)
        postings.extend(done)
        written.update(written_by)
    print(f"load average after: {os.getloadavg()[0]:.1f} (2 cores; other work on the machine shares them)")
    print(HEADER)
    for posting in postings:
        print(posting.row())
    print("targets: >= 2,000 events/s with request p95 <= 25 ms, one event per request")
    for server, files in written.items():
        events = sum(p.events for p in postings if p.server == server and p.what.startswith("OpenLineage"))
        print(f"files written by the {server.label} code, {server.workers} worker(s), for {events:,} events: "
              f"{len(files)} ({sum(f.stat().st_size for f in files) / 1e6:.1f} MB; target <= 100 for the hour)")
    if args.ingest_only:
        return 0

    primary = next(server for server in servers if server.label == "this")
    log_root = roots / f"{primary.label}-{primary.workers}"
    settings = Settings.from_env({**env, "LINEAGE_DATABASE_URL": url, "LINEAGE_LOG_ROOT": str(log_root)})
    events_posted = sum(p.events for p in postings if p.server == primary and p.what.startswith("OpenLineage"))
    spark = build_session("bench-openlineage", settings)
    end = datetime.now(UTC) + timedelta(minutes=5)
    began = time.perf_counter()
    summary = run_compaction(spark, interval_end=end, settings=settings)
    elapsed = time.perf_counter() - began
    print(f"compaction of what the {primary.workers}-worker server wrote: {elapsed:.1f} s end to end, "
          f"{events_posted / elapsed:,.0f} OpenLineage events/s, "
          f"{summary.events_read / elapsed:,.0f} native events/s ({summary.events_read:,} expanded; "
          f"{summary.duplicates} duplicates, {summary.quarantined} quarantined; target >= 10,000 events/s)")

    files_per_hour = max(1, len(written[primary]))
    noop = {}
    history = 0
    for days in (1, 7, 30):  # hours already compacted, back from the measured hour
        fake_history(url, log_root, days * 24 - history, files_per_hour, end - timedelta(hours=history))
        history = days * 24
        noop[days] = noop_seconds(spark, settings, end)
    print(f"no-op compaction ({files_per_hour} files per hour already compacted): "
          + ", ".join(f"after {days} day(s) {seconds:.2f} s" for days, seconds in noop.items())
          + f" (the listing covers LINEAGE_LOOKBACK_HOURS={settings.lookback_hours}, not the whole history)")
    spark.stop()
    return 0


def _ints(text: str) -> list[int]:
    values = [int(part) for part in text.split(",") if part.strip()]
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers separated by commas, got {text!r}")
    return values


if __name__ == "__main__":
    raise SystemExit(main())

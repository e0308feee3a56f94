"""Benchmark: write-to-visible freshness under a real Airflow (``python -m bench.freshness``,
``make bench-freshness``).

Starts a scheduler, dag-processor, triggerer and api-server (as ``airflow standalone`` does)
with an Airflow home and metadata database of their own, against a scratch warehouse and log
root on the embedded PostgreSQL. Then, ``--samples`` times: waits a random gap, writes one run
through the client (a read and a write of datasets of its own) and polls, every 0.25 s, until
the run's write shows in the dataset lineage API (``lineage_walk``) *and* in the
``program_runs`` mart. Prints p50/p95/max of write-to-visible, and where the time went per
sample, from Airflow's own records of the DAG run that made it visible: detection and
scheduling (write -> run queued), start (queued -> task running), each stage inside the task
(its XCom) or the task as a whole, and the poll's lag after the task ended.

``--mode watcher`` (default): the ``lineage_refresh`` DAG (``LINEAGE_REFRESH_ON_NEW_FILES``),
started by new files. ``--mode cron``: today's way, the ``lineage_compaction`` DAG with
``LINEAGE_SCHEDULE`` at one minute (``* * * * *``) and the watcher off.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import os
import random
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

from bench.compaction import scratch_database
from harness.airflow_services import login, running_airflow
from harness.ports import free_port
from lineage.client.run_context import RunContext
from lineage.settings import Settings
from warehouse.db.connection import connect
from warehouse.db.migrate import apply_migrations

DAGS = {"watcher": ("lineage_refresh", "refresh"), "cron": ("lineage_compaction", "build_marts")}
COMPONENTS = ("scheduler", "dag-processor", "triggerer")
STAGES = ("compact", "field_lineage", "apply_metadata", "check", "build_marts")  # warehouse.pipeline.refresh, in order


@dataclass
class Sample:
    index: int
    written: float  # epoch seconds: the client returned (its files renamed into place)
    visible: float


def airflow_env(home: Path, warehouse: str, airflow_db: str, log_root: Path, port: int, mode: str) -> dict[str, str]:
    """The checkout's environment with an Airflow home, metadata DB, warehouse and log root of the benchmark's."""
    airflow_home = home / "airflow"
    airflow_home.mkdir(parents=True)
    (airflow_home / "passwords.json").write_text('{"admin": "admin"}')
    return {
        **os.environ,
        "AIRFLOW_HOME": str(airflow_home),
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": airflow_db,
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN_ASYNC": airflow_db,
        "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE": str(airflow_home / "passwords.json"),
        "AIRFLOW__API__BASE_URL": f"http://127.0.0.1:{port}",
        "AIRFLOW__API_AUTH__JWT_SECRET": "bench-freshness-jwt-secret-of-enough-length-for-sha512-0123456789",
        "AIRFLOW__API__SECRET_KEY": "bench-freshness-secret-key",
        "AIRFLOW_CONN_LINEAGE_WAREHOUSE": warehouse.replace("postgresql+psycopg://", "postgresql://", 1),
        "LINEAGE_DATABASE_URL": warehouse,
        "LINEAGE_LOG_ROOT": str(log_root),
        "LINEAGE_REFRESH_ON_NEW_FILES": "true" if mode == "watcher" else "false",
        "LINEAGE_SCHEDULE": "* * * * *" if mode == "cron" else "@hourly",
        "LINEAGE_AIRFLOW_OPENLINEAGE": "false",
        "LINEAGE_DBT_OPENLINEAGE": "false",
    }


def write_run(log_root: Path, index: int) -> str:
    with RunContext("default", "Freshness", "spark", "Probe", run_id=f"probe-{index}", log_root=str(log_root)) as run:
        run.read(f"fresh_in_{index}")
        run.write(f"fresh_out_{index}")
    return run.run_id


def visible(api: httpx.Client, warehouse: str, index: int) -> bool:
    """The run's write is in the dataset lineage API and in the program_runs mart."""
    response = api.get(f"/lineage/v3/namespaces/default/datasets/fresh_out_{index}/lineage",
                       params={"start": "now-1d", "end": "now"})
    if response.status_code != 200 or not response.json().get("relations"):
        return False
    with connect(warehouse) as conn:
        try:
            found = conn.execute("select 1 from lineage_marts.program_runs where run_id = %s",
                                 (f"probe-{index}",)).fetchone()
        except Exception:  # the mart is not built yet
            return False
    return found is not None


def measure(args: argparse.Namespace) -> int:
    settings = Settings.from_env()
    home = settings.home / "bench" / f"freshness-{args.mode}"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    warehouse = scratch_database(settings.database_url, f"lineage_bench_fresh_{args.mode}")
    apply_migrations(warehouse)
    airflow_db = scratch_database(settings.database_url, f"airflow_bench_fresh_{args.mode}").replace(
        "postgresql://", "postgresql+psycopg://", 1)
    log_root = home / "raw-events"
    port = free_port()
    env = airflow_env(home, warehouse, airflow_db, log_root, port, args.mode)
    bin_dir = Path(sys.executable).parent
    began = time.perf_counter()
    subprocess.run([str(bin_dir / "airflow"), "db", "migrate"], env=env, check=True, capture_output=True)
    print(f"airflow metadata database migrated in {time.perf_counter() - began:.0f} s", flush=True)
    dag_id, last_task = DAGS[args.mode]
    with running_airflow(env, bin_dir, home, port, components=COMPONENTS) as airflow, login(airflow.base) as api:
        airflow.wait_for(f"{dag_id} parsed", lambda: api.get(f"/api/v2/dags/{dag_id}").status_code == 200, 300)
        api.patch(f"/api/v2/dags/{dag_id}", json={"is_paused": False}).raise_for_status()
        print(f"{dag_id} parsed and unpaused; warming up (first run, not counted)", flush=True)
        write_run(log_root, 0)
        airflow.wait_for("the warm-up run visible", lambda: visible(api, warehouse, 0), 600, every=0.5)
        samples = []
        for index in range(1, args.samples + 1):
            time.sleep(random.uniform(args.min_gap, args.max_gap))
            write_run(log_root, index)
            written = time.time()
            airflow.wait_for(f"probe {index} visible", functools.partial(visible, api, warehouse, index),
                             args.timeout, every=0.25)
            samples.append(Sample(index, written, time.time()))
            print(f"  probe {index:2d}: visible {samples[-1].visible - written:5.1f} s after the write "
                  f"(load {os.getloadavg()[0]:.1f})", flush=True)
        airflow.wait_for(f"{dag_id}'s runs finished", lambda: all(
            run["state"] not in ("queued", "running") for run in dag_runs(api, dag_id)), 300)
        report(api, dag_id, last_task, samples, args.mode)
    return 0


def nearest_rank(values: list[float], percent: float) -> float:
    """The ``percent`` percentile by nearest rank (the 19th of 20 for p95)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(percent / 100 * len(ordered)) - 1)]


def _time(value: str | None) -> float | None:
    return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() if value else None


def report(api: httpx.Client, dag_id: str, last_task: str, samples: list[Sample], mode: str) -> None:
    latencies = [s.visible - s.written for s in samples]
    p50, p95 = nearest_rank(latencies, 50), nearest_rank(latencies, 95)
    print(f"\n{mode}: write-to-visible over {len(samples)} writes: p50 {p50:.1f} s, p95 {p95:.1f} s, "
          f"max {max(latencies):.1f} s (target p95 <= 60 s)")
    runs = dag_runs(api, dag_id)
    print(f"per write: write -> run queued | queued -> {last_task} running | {last_task} (stages) | "
          f"seen - {last_task} end")
    parts: dict[str, list[float]] = {}
    for sample in samples:
        made = _run_that_made_it_visible(api, dag_id, last_task, runs, sample)
        if made is None:
            print(f"  probe {sample.index:2d}: no run of {last_task} started before it was seen")
            continue
        run, instance, stages = made
        queued, task_start = _time(run["queued_at"]), _time(instance["start_date"])
        task_end = _time(instance["end_date"])
        assert queued is not None and task_start is not None and task_end is not None
        row = {"to queued": queued - sample.written, "to running": task_start - queued,
               "task": task_end - task_start, "seen after end": sample.visible - task_end}
        for name, value in row.items():
            parts.setdefault(name, []).append(value)
        for name, value in stages.items():
            parts.setdefault(f"  {name}", []).append(value)
        stage_text = ", ".join(f"{name} {value:.1f}" for name, value in stages.items())
        print(f"  probe {sample.index:2d}: {row['to queued']:5.1f} | {row['to running']:4.1f} | {row['task']:4.1f} "
              f"({stage_text}) | {row['seen after end']:4.1f}")
    print("medians: " + ", ".join(f"{name.strip()} {nearest_rank(values, 50):.1f} s"
                                  for name, values in parts.items()))
    print(f"RESULT p50 {p50:.2f} p95 {p95:.2f}", flush=True)


def dag_runs(api: httpx.Client, dag_id: str) -> list[dict[str, Any]]:
    """Every run of ``dag_id`` (the API returns pages of at most ``[api] maximum_page_limit``)."""
    runs: list[dict[str, Any]] = []
    while True:
        response = api.get(f"/api/v2/dags/{dag_id}/dagRuns", params={"limit": 100, "offset": len(runs)})
        response.raise_for_status()
        page = response.json()
        runs.extend(page["dag_runs"])
        if not page["dag_runs"] or len(runs) >= page["total_entries"]:
            return runs


def _run_that_made_it_visible(api: httpx.Client, dag_id: str, last_task: str, runs: list[dict[str, Any]],
                              sample: Sample) -> tuple[dict[str, Any], dict[str, Any], dict[str, float]] | None:
    """The DAG run whose marts task started last before the write was seen (an earlier one had
    listed the files before the write, a later one started after), that task, and its stages."""
    best = None
    for run in runs:
        instance = api.get(f"/api/v2/dags/{dag_id}/dagRuns/{run['dag_run_id']}/taskInstances/{last_task}").json()
        start = _time(instance.get("start_date"))
        if instance.get("end_date") and start is not None and start <= sample.visible \
                and (best is None or start > best[2]):
            best = (run, instance, start)
    if best is None:
        return None
    run, instance, _ = best
    stages: dict[str, float] = {}
    xcom = api.get(f"/api/v2/dags/{dag_id}/dagRuns/{run['dag_run_id']}/taskInstances/{last_task}/xcomEntries/"
                   "return_value")
    if xcom.status_code == 200:
        value = xcom.json().get("value")
        value = json.loads(value) if isinstance(value, str) else value
        if isinstance(value, dict) and isinstance(value.get("seconds"), dict):
            order = {name: index for index, name in enumerate(STAGES)}
            stages = {name: float(value["seconds"][name])
                      for name in sorted(value["seconds"], key=lambda stage: order.get(stage, len(order)))}
    return run, instance, stages


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write-to-visible freshness under a real Airflow.")
    parser.add_argument("--mode", choices=sorted(DAGS), default="watcher",
                        help="watcher: lineage_refresh on new files; cron: lineage_compaction every minute")
    parser.add_argument("--samples", type=int, default=20, help="writes measured (after one warm-up)")
    parser.add_argument("--min-gap", type=float, default=5.0, help="shortest random wait before a write (s)")
    parser.add_argument("--max-gap", type=float, default=30.0, help="longest random wait before a write (s)")
    parser.add_argument("--timeout", type=float, default=300.0, help="give up on a write after this many seconds")
    return measure(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())

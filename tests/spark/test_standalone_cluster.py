"""The compaction and the field lineage job on a real Spark standalone cluster (issue 19).

A master and a worker run as their own JVMs, started from the PySpark distribution with
``spark-class``, on loopback ports. Each job runs as a user runs it: ``python -m ...`` in its
own process, with ``LINEAGE_SPARK_MASTER=spark://...``. The executors find the project's code
through the installed package only (the worker's environment has no ``PYTHONPATH``). Spark's
event log of each application says which executor ran each task and how many bytes each
task sent back to the driver. The same logs compacted in local mode give the same rows.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pyspark
import pytest

from harness.ports import free_port
from lineage.model.events import parse_time
from lineage.settings import Settings
from spark_jobs.compaction.job import run_compaction
from spark_jobs.field_lineage.job import run_field_lineage
from tests.conftest import ROOT, create_scratch_db, drop_scratch_db
from tests.factories import access, event, write_log
from warehouse.db.connection import connect

SPARK_HOME = Path(pyspark.__file__).parent
RUNS, FILES, FIELDS, SETS = 40, 8, 60, 4
INTERVAL_END = "2026-11-21T06:00:00Z"
RESULT_BYTES = 16_384  # a task's result (a row count and its metrics) stays under this


@dataclass(frozen=True)
class StandaloneCluster:
    master_url: str
    work_dir: Path


def _cluster_env() -> dict[str, str]:
    env = {**os.environ, "SPARK_HOME": str(SPARK_HOME), "SPARK_LOCAL_IP": "127.0.0.1"}
    env.pop("PYTHONPATH", None)  # executors reach the code through the installed package, as on a cluster
    return env


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneCluster]:
    """A Spark master and one worker (1 core, 1 GiB), each its own JVM; stopped at the end."""
    home = tmp_path_factory.mktemp("spark-standalone")
    port, ui = free_port(), free_port()
    master_url = f"spark://127.0.0.1:{port}"
    spark_class = str(SPARK_HOME / "bin" / "spark-class")
    commands = {
        "master": [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                   "--port", str(port), "--webui-port", str(ui)],
        "worker": [spark_class, "org.apache.spark.deploy.worker.Worker", master_url, "--host", "127.0.0.1",
                   "--port", str(free_port()), "--webui-port", str(free_port()), "--cores", "1", "--memory", "1g",
                   "--work-dir", str(home / "work")],
    }
    started: list[subprocess.Popen[bytes]] = []
    try:
        for name, command in commands.items():
            with (home / f"{name}.log").open("wb") as log:
                started.append(subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=_cluster_env()))
        _wait_for_worker(f"http://127.0.0.1:{ui}/json/", home)
        yield StandaloneCluster(master_url, home / "work")
    finally:
        for process in reversed(started):
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_for_worker(status_url: str, home: Path, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if httpx.get(status_url, timeout=5).json().get("aliveworkers", 0) >= 1:
                return
        except (httpx.HTTPError, ValueError):
            pass  # the master is still starting
        time.sleep(0.5)
    logs = "\n".join((home / f"{name}.log").read_text()[-2000:] for name in ("master", "worker"))
    raise AssertionError(f"no worker registered with the master in {timeout_s}s:\n{logs}")


def _field_operations(set_index: int) -> dict[str, Any]:
    """One of SETS operation sets: read FIELDS columns, derive a total from some, write all."""
    columns = [f"column_{i}" for i in range(FIELDS)]
    return {"destination": {"name": f"table_{set_index}"}, "operations": [
        {"name": "read", "inputs": [{"source": {"name": f"source_{set_index}"}}], "outputs": columns,
         "description": f"read source_{set_index}"},
        {"name": "total", "inputs": [{"field": c} for c in columns[:set_index + 2]], "outputs": ["total"],
         "description": "sum of the first columns"},
        {"type": "write", "name": "write", "inputs": [{"field": c} for c in [*columns, "total"]]}]}


def _write_logs(root: Path) -> int:
    """RUNS runs over FILES files (start, a read, a write, field operations, end), plus one bad
    line; returns the events written."""
    lines: list[dict[str, Any] | str] = []
    for number in range(RUNS):
        run = {"application": "Cluster", "program_type": "spark", "program": f"job_{number % 5}",
               "run_id": f"run-{number}"}
        at = f"2026-11-21T05:{number:02d}:00Z"
        lines += [event("run_start", run=run, event_time=at),
                  access(f"source_{number % SETS}", run=run, event_time=at),
                  access(f"table_{number % SETS}", "write", run=run, event_time=at),
                  event("field_operations", _field_operations(number % SETS), run=run, event_time=at),
                  event("run_end", {"status": "completed"}, run=run, event_time=f"2026-11-21T05:{number:02d}:30Z")]
    lines.append("{not json")
    for index in range(FILES):
        write_log(root, lines[index::FILES])
    return len(lines)


def _run_job(module: str, env: dict[str, str], extra: tuple[str, ...] = ()) -> str:
    done = subprocess.run([sys.executable, "-m", module, *extra], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    return done.stdout


def _task_ends(event_log_dir: Path) -> dict[str, list[dict[str, Any]]]:
    """Per application name: each finished task's executor id and result size (bytes sent back
    to the driver), from Spark's event log."""
    found: dict[str, list[dict[str, Any]]] = {}
    for log in event_log_dir.glob("[!.]*"):  # a file, or a folder of rolled files (Spark 4's default)
        app, tasks = None, []
        lines = [line for path in sorted(log.rglob("*") if log.is_dir() else [log])
                 if path.is_file() and not path.name.startswith(".")  # Hadoop's .crc files
                 for line in path.read_text().splitlines()]
        for line in lines:
            record = json.loads(line)
            if record["Event"] == "SparkListenerApplicationStart":
                app = record["App Name"]
            elif record["Event"] == "SparkListenerTaskEnd":
                tasks.append({"executor": record["Task Info"]["Executor ID"],
                              "result_bytes": record["Task Metrics"]["Result Size"]})
        assert app is not None, log
        found[app] = tasks
    return found


_COMPARED = {
    "runs": """select p.application, p.program, r.run_id, r.status, r.started_at, r.stopped_at
               from lineage.runs r join lineage.programs p using (program_key)""",
    "accesses": "select dataset, access, run_id from lineage.access_details",
    "quarantine": "select line_number, reason, raw_text from lineage.quarantine",
    "sets": "select fingerprint, destination, operations, descriptions, warnings from lineage.field_operation_sets",
    "paths": "select set_fingerprint, field, path_fingerprint, path from lineage.field_paths",
    "flows": """select source, source_field, set_fingerprint, flow_fingerprint, flow
                from lineage.field_source_flows""",
    "path_sources": "select source, source_field, set_fingerprint, field from lineage.field_path_sources",
    "field_runs": """select d.dataset, r.run_id, f.set_fingerprint from lineage.field_lineage_runs f
                     join lineage.datasets d using (dataset_key) join lineage.runs r using (run_key)""",
    "unprocessed": "select count(*) from lineage.pending_events where processed_at is null",
}


def _warehouse_rows(url: str) -> dict[str, list[tuple[Any, ...]]]:
    with connect(url) as conn:
        return {name: sorted(conn.execute(query).fetchall(), key=repr) for name, query in _COMPARED.items()}


@pytest.fixture
def logs(tmp_path: Path) -> tuple[Path, int]:
    root = tmp_path / "raw-events"
    return root, _write_logs(root)


@pytest.fixture
def cluster_db() -> Iterator[str]:
    url = create_scratch_db("wh_cluster")
    yield url
    drop_scratch_db(url)


def test_compaction_and_field_lineage_run_on_the_cluster_executors(  # type: ignore[no-untyped-def]
    cluster: StandaloneCluster, logs: tuple[Path, int], cluster_db: str, warehouse_db: str, spark, tmp_path: Path,
) -> None:
    log_root, written = logs
    event_logs = tmp_path / "event-logs"
    event_logs.mkdir()
    env = {**_cluster_env(), "LINEAGE_SPARK_MASTER": cluster.master_url, "LINEAGE_DATABASE_URL": cluster_db,
           "LINEAGE_LOG_ROOT": str(log_root),
           "LINEAGE_COMPACTION_IN_PROCESS_MB": "0",  # these few files would be parsed in the driver's process
           "LINEAGE_SPARK_CONF": f"spark.eventLog.enabled=true,spark.eventLog.dir={event_logs.as_uri()},"
                                 "spark.eventLog.compress=false,spark.executor.memory=768m"}

    compacted = _run_job("spark_jobs.compaction.job", env, ("--interval-end", INTERVAL_END))
    derived = _run_job("spark_jobs.field_lineage.job", env)

    assert f"{FILES} new files, {written} events read" in compacted
    assert f"field lineage: {RUNS} records -> {SETS} new operation sets" in derived
    tasks = _task_ends(event_logs)
    assert sorted(tasks) == ["lineage-compaction", "lineage-field-lineage"]
    with connect(cluster_db) as conn:
        record_bytes = conn.execute("select sum(length(payload::text)) from lineage.pending_events").fetchall()[0][0]
    assert record_bytes > 4 * RESULT_BYTES, record_bytes  # the records: a task returning its share would show
    for app, ended in tasks.items():
        assert ended, f"{app} ran no task"
        assert {task["executor"] for task in ended} == {"0"}, app  # the worker's one executor, never the driver
        # what a task sends back to the driver is its row count and metrics, never the records
        assert max(task["result_bytes"] for task in ended) < RESULT_BYTES, (app, ended)
    assert list(cluster.work_dir.glob("app-*/0/stderr")), "the worker started no executor"

    # the same logs compacted in local mode (the test session's local Spark) give the same rows
    local = Settings.from_env({**os.environ, "LINEAGE_LOG_ROOT": str(log_root), "LINEAGE_DATABASE_URL": warehouse_db})
    run_compaction(spark, interval_end=parse_time(INTERVAL_END), settings=local)
    run_field_lineage(spark, local)
    on_cluster = _warehouse_rows(cluster_db)
    assert on_cluster == _warehouse_rows(warehouse_db)
    assert (len(on_cluster["runs"]), len(on_cluster["accesses"]), len(on_cluster["quarantine"])) == (RUNS, 2 * RUNS, 1)
    assert (len(on_cluster["sets"]), len(on_cluster["field_runs"]), on_cluster["unprocessed"]) == (SETS, RUNS, [(0,)])
    assert len(on_cluster["paths"]) == SETS * (FIELDS + 1)

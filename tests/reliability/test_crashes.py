"""Crashes of the real processes: ``kill -9`` of a compaction's Spark driver (its Python process
and its JVM) at three points, and of an api-server while OpenLineage writes are in flight.

- The compaction, killed after Spark staged a chunk, after a chunk merged into the open
  transaction, and with everything written but not committed: the warehouse is as before, and
  the next run compacts every file once.
- The api-server, killed while 8 clients post events: every event it acknowledged (201) is in
  the raw log once the next server process has started (it seals what the dead one left).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import orjson
import pytest

from harness.api_server import ApiServer
from lineage.failpoints import FAILPOINT, FAILPOINT_FILE
from spark_jobs.compaction.job import run_compaction
from tests.airflow_support import airflow_env, ensure_airflow_db, libpq
from tests.factories import RUN, access, event, write_log
from tests.warehouse.test_compaction import END, rows, snapshot

ROOT = Path(__file__).resolve().parents[2]


def _workload(log_root: Path) -> int:
    """Three files, 12 events in all."""
    for index in range(3):
        run = {**RUN, "run_id": f"r-{index}"}
        write_log(log_root, [event("run_start", run=run, event_time="2026-11-21T05:00:00Z"),
                             access(f"in_{index}", run=run), access(f"out_{index}", "write", run=run),
                             event("run_end", {"status": "completed"}, run=run, event_time="2026-11-21T05:10:00Z")])
    return 12


@pytest.mark.parametrize("point", ["compaction.staged", "compaction.merged", "compaction.committing"])
def test_a_compaction_killed_at_any_point_leaves_the_warehouse_as_it_was_and_the_next_run_compacts_once(
        spark, warehouse_db: str, log_root: Path, settings_for, tmp_path: Path,  # type: ignore[no-untyped-def]
        point: str) -> None:
    events = _workload(log_root)
    before = snapshot(warehouse_db)
    marker = tmp_path / "at-failpoint"
    env = {**os.environ, "LINEAGE_LOG_ROOT": str(log_root), "LINEAGE_DATABASE_URL": warehouse_db,
           FAILPOINT: point, FAILPOINT_FILE: str(marker),
           "PYTHONPATH": f"{ROOT}:{ROOT / 'plugins'}"}
    driver = subprocess.Popen([sys.executable, "-m", "spark_jobs.compaction.job", "--interval-end", END.isoformat()],
                              env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while not marker.exists():
            assert driver.poll() is None, driver.stderr.read().decode()[-3000:] if driver.stderr else ""
            assert time.monotonic() < deadline, f"the compaction never reached {point}"
            time.sleep(0.2)
    finally:
        os.killpg(driver.pid, signal.SIGKILL)  # the driver's Python process and its JVM
        driver.wait(timeout=60)
        if driver.stderr is not None:
            driver.stderr.close()
    assert driver.returncode == -signal.SIGKILL

    assert snapshot(warehouse_db) == before  # nothing of the killed batch is visible
    summary = run_compaction(spark, interval_end=END, settings=settings_for(warehouse_db))  # the lock is free
    assert (summary.files, summary.events_read, summary.events_compacted, summary.duplicates) == (3, events, events, 0)
    assert rows(warehouse_db, "select count(*) from lineage.compaction_batches") == [(1,)]
    assert rows(warehouse_db, "select count(*), count(distinct run_id) from lineage.runs") == [(3, 3)]
    assert run_compaction(spark, interval_end=END, settings=settings_for(warehouse_db)).files == 0


def _ol_event(run_id: str) -> bytes:
    return orjson.dumps({
        "eventType": "COMPLETE", "eventTime": (datetime.now(UTC) - timedelta(minutes=1)).isoformat(),
        "producer": "tests/reliability", "run": {"runId": run_id},
        "job": {"namespace": "default", "name": "crash test"},
        "inputs": [{"namespace": "postgres://db:5432", "name": "shop.public.orders"}], "outputs": []})


def test_an_api_server_killed_while_writes_are_in_flight_loses_no_acknowledged_write(
        warehouse_db: str, tmp_path: Path) -> None:
    ensure_airflow_db()
    log_root = tmp_path / "raw"
    env = airflow_env(AIRFLOW_CONN_LINEAGE_WAREHOUSE=libpq(warehouse_db), LINEAGE_LOG_ROOT=str(log_root),
                      LINEAGE_INGEST_SEAL_SECONDS="60")  # files stay open: the crash leaves them to recover
    server = ApiServer(env).start()
    try:
        jwt = httpx.post(f"{server.base}/auth/token", json={"username": "admin", "password": "admin"},
                         timeout=10).json()["access_token"]
        admin = httpx.Client(base_url=f"{server.base}/lineage", headers={"Authorization": f"Bearer {jwt}"},
                             timeout=30)
        assert admin.put("/v3/grants", json={"principal": "crash-producer", "entity": "namespaces/default",
                                             "privilege": "WRITE"}).status_code == 200
        key = admin.post("/v3/ingest-keys", json={"name": "crash", "principal": "crash-producer"}).json()["secret"]

        acknowledged: list[str] = []
        refused: list[str] = []
        answers: list[str] = []  # the first refusal's answer, to show if nothing is acknowledged
        stop = threading.Event()

        def produce() -> None:
            with httpx.Client(timeout=10) as client:
                while not stop.is_set():
                    run_id = str(uuid.uuid4())
                    try:
                        answer = client.post(f"{server.base}/lineage/api/v1/lineage", content=_ol_event(run_id),
                                             headers={"Authorization": f"Bearer {key}",
                                                      "Content-Type": "application/json"})
                    except httpx.HTTPError:
                        refused.append(run_id)
                        time.sleep(0.05)
                        continue
                    if answer.status_code != 201 and not answers:
                        answers.append(f"{answer.status_code} {answer.text[:300]}")
                    (acknowledged if answer.status_code == 201 else refused).append(run_id)

        producers = [threading.Thread(target=produce) for _ in range(8)]
        for thread in producers:
            thread.start()
        deadline = time.monotonic() + 60
        while len(acknowledged) < 200 and time.monotonic() < deadline:
            time.sleep(0.05)
        server.kill()  # kill -9, mid-stream
        time.sleep(0.5)
        stop.set()
        for thread in producers:
            thread.join(timeout=30)
        assert len(acknowledged) >= 200 and refused, answers  # writes were in flight when it died
        assert list((log_root / "_spool").glob("*.open"))  # it died with open files

        server.start()  # the next process seals what the dead one left
        deadline = time.monotonic() + 30
        while list((log_root / "_spool").glob("*.open")) and time.monotonic() < deadline:
            time.sleep(0.2)
        written = [orjson.loads(line) for path in log_root.glob("dt=*/hour=*/*.jsonl")
                   for line in path.read_bytes().splitlines()]
        run_ids = [line["payload"]["run"]["runId"] for line in written]
        assert set(acknowledged) <= set(run_ids)  # no acknowledged write lost
        assert len(run_ids) == len(set(run_ids))  # each once
    finally:
        server.close()

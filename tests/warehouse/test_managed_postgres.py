"""The warehouse on PostgreSQL as a managed service offers it: TLS only (``sslmode=require``, a
self-signed certificate) with a scram-sha-256 password for a role that is no superuser, directly
and through PgBouncer in transaction pooling mode (``?pool_mode=transaction``). Migrations, a
compaction, its quality check, the dbt build of the marts and an API read all go through it;
behind PgBouncer two compactions (and two migrators) still exclude each other, and a killed
compaction's lock is released.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from harness.managed_postgres import PgBouncer, TlsCluster
from lineage.errors import CompactionBusyError
from lineage.settings import Settings
from spark_jobs.compaction import job as compaction_job
from spark_jobs.compaction.job import run_compaction
from tests.airflow_support import ensure_airflow_db
from tests.factories import RUN, access, event, write_log
from tests.warehouse.test_compaction import END, rows
from warehouse.db.migrate import apply_migrations, discover
from warehouse.pipeline.dbt_build import build_marts
from warehouse.pipeline.quality import check_batch

ROOT = Path(__file__).resolve().parents[2]
DATABASES = ("direct", "pooled", "busy", "crash", "migrators")


@pytest.fixture(scope="module")
def managed() -> Iterator[tuple[TlsCluster, PgBouncer]]:
    """One TLS + password cluster for the module, and a PgBouncer (transaction mode) in front."""
    cluster = TlsCluster(databases=DATABASES).start()
    try:
        bouncer = PgBouncer(cluster).start()
        try:
            yield cluster, bouncer
        finally:
            bouncer.stop()
    finally:
        cluster.stop()


def _workload(log_root: Path) -> int:
    """Three files of one run of a program of its own each (start, a read, a write, end): 12 events."""
    for index in range(3):
        run = {**RUN, "program": f"Builder{index}", "run_id": f"r-{index}"}
        write_log(log_root, [event("run_start", run=run, event_time="2026-11-21T05:00:00Z"),
                             access(f"in_{index}", run=run), access(f"out_{index}", "write", run=run),
                             event("run_end", {"status": "completed"}, run=run, event_time="2026-11-21T05:10:00Z")])
    return 12


def _api_get(url: str, path: str, monkeypatch: pytest.MonkeyPatch, **params: str) -> tuple[dict[str, Any], Any]:
    """GET ``path`` from the plugin's app whose Airflow connection ``lineage_warehouse`` is
    ``url`` as a user pastes it (every parameter kept); its JSON and the pool's connection options."""
    from airflow.api_fastapi.app import init_auth_manager
    from airflow.api_fastapi.auth.managers.simple.user import SimpleAuthManagerUser
    from fastapi.testclient import TestClient
    from lineage_api.app import create_app

    ensure_airflow_db()
    monkeypatch.setenv("AIRFLOW_CONN_LINEAGE_WAREHOUSE", url)
    jwt = init_auth_manager().generate_jwt(SimpleAuthManagerUser(username="admin", role="admin"))
    with TestClient(create_app()) as client:
        response = client.get(path, params=params, headers={"Authorization": f"Bearer {jwt}"})
        assert response.status_code == 200, response.text
        with client.app.state.warehouse.connection() as conn:  # type: ignore[attr-defined]
            prepared_after = conn.prepare_threshold
    return response.json(), prepared_after


@pytest.mark.parametrize("path", ["tls", "pgbouncer"])
def test_the_warehouse_behind_tls_a_password_and_pgbouncer_migrates_compacts_builds_and_answers(
        spark, managed: tuple[TlsCluster, PgBouncer], log_root: Path,  # type: ignore[no-untyped-def]
        monkeypatch: pytest.MonkeyPatch, path: str) -> None:
    cluster, bouncer = managed
    url = cluster.url("direct") if path == "tls" else bouncer.url("pooled")
    settings = Settings.from_env({**os.environ, "LINEAGE_LOG_ROOT": str(log_root), "LINEAGE_DATABASE_URL": url})

    assert [m.version for m in apply_migrations(url)] == [m.version for m in discover()]
    assert apply_migrations(url) == []
    assert rows(url, "select ssl from pg_stat_ssl where pid = pg_backend_pid()") == [(True,)]
    assert rows(url, "select current_user, rolsuper from pg_roles where rolname = current_user") == [("lineage",
                                                                                                     False)]

    events = _workload(log_root)
    summary = run_compaction(spark, interval_end=END, settings=settings)
    assert (summary.files, summary.events_read, summary.events_compacted, summary.quarantined) == (3, events, events, 0)
    assert run_compaction(spark, interval_end=END, settings=settings).files == 0
    assert all(check.success for check in check_batch(url, summary.batch_id))

    built = build_marts(url, settings)
    assert built.passed > 20 and built.warned == 0
    assert rows(url, "select count(*) from lineage_marts.lineage_walk") == [(6,)]

    start = str(int(datetime(2026, 11, 21, tzinfo=UTC).timestamp()))
    body, prepared_after = _api_get(url, "/v3/namespaces/default/datasets/in_1/lineage", monkeypatch,
                                    start=start, end=str(int(END.timestamp())))
    assert [(r["data"], r["access"], r["runs"]) for r in body["relations"]] == [
        ("dataset.default.in_1", "read", ["r-1"]), ("dataset.default.out_1", "write", ["r-1"])]
    assert prepared_after == (None if path == "pgbouncer" else 5)  # psycopg never prepares behind the pooler

    if path == "pgbouncer":  # an incremental build: dbt's temp tables and ``set local`` inside its transactions
        run = {**RUN, "program": "Builder3", "run_id": "r-3"}
        write_log(log_root, [access("in_3", run=run)], name="late.jsonl")
        assert run_compaction(spark, interval_end=END, settings=settings).events_compacted == 1
        build_marts(url, settings, command="run", select="lineage_walk")
        assert rows(url, "select count(*) from lineage_marts.lineage_walk") == [(7,)]


def test_two_compactions_through_pgbouncer_exclude_each_other(
        spark, managed: tuple[TlsCluster, PgBouncer], log_root: Path,  # type: ignore[no-untyped-def]
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The first compaction waits with a chunk merged into its open transaction (its failpoint,
    held by the test); a second one, through other PgBouncer clients, is refused. Once the first
    commits, the second finds nothing left to do."""
    _, bouncer = managed
    url = bouncer.url("busy")
    apply_migrations(url)
    events = _workload(log_root)
    settings = Settings.from_env({**os.environ, "LINEAGE_LOG_ROOT": str(log_root), "LINEAGE_DATABASE_URL": url})
    merged, go_on = threading.Event(), threading.Event()

    def hold(name: str) -> None:
        if name == "compaction.merged" and not merged.is_set():
            merged.set()
            assert go_on.wait(timeout=300)

    monkeypatch.setattr(compaction_job, "failpoint", hold)
    first: dict[str, Any] = {}
    running = threading.Thread(target=lambda: first.update(
        summary=run_compaction(spark, interval_end=END, settings=settings)))
    running.start()
    try:
        assert merged.wait(timeout=300), "the first compaction never merged a chunk"
        with pytest.raises(CompactionBusyError, match="another compaction is running"):
            run_compaction(spark, interval_end=END, settings=settings)
    finally:
        go_on.set()
        running.join(timeout=300)
    summary = first["summary"]
    assert (summary.files, summary.events_read, summary.events_compacted) == (3, events, events)
    assert run_compaction(spark, interval_end=END, settings=settings).files == 0
    assert rows(url, "select count(*) from lineage.compaction_batches where files > 0") == [(1,)]


_HOLD_THE_LOCK = """
import sys, time
from warehouse.db.compaction_store import BatchMerge
from warehouse.db.connection import connect
merge = BatchMerge(connect(sys.argv[1], autocommit=True), "crashing")
print("locked", flush=True)
time.sleep(600)
"""


def test_the_lock_of_a_compaction_killed_behind_pgbouncer_is_released(
        spark, managed: tuple[TlsCluster, PgBouncer], log_root: Path) -> None:  # type: ignore[no-untyped-def]
    """A driver holding the compaction lock (a ``BatchMerge`` open, as in a compaction) is
    ``kill -9``ed: PgBouncer drops its server connection, which was inside a transaction, so the
    lock goes with it and the next compaction runs."""
    _, bouncer = managed
    url = bouncer.url("crash")
    apply_migrations(url)
    events = _workload(log_root)
    settings = Settings.from_env({**os.environ, "LINEAGE_LOG_ROOT": str(log_root), "LINEAGE_DATABASE_URL": url})
    holder = subprocess.Popen([sys.executable, "-c", _HOLD_THE_LOCK, url], cwd=ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": f"{ROOT}:{ROOT / 'plugins'}"})
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == b"locked", (
            holder.stderr.read().decode()[-3000:] if holder.stderr else "")
        with pytest.raises(CompactionBusyError):
            run_compaction(spark, interval_end=END, settings=settings)
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
        for pipe in (holder.stdout, holder.stderr):
            if pipe is not None:
                pipe.close()
    deadline = time.monotonic() + 20
    while True:
        try:
            summary = run_compaction(spark, interval_end=END, settings=settings)
            break
        except CompactionBusyError:
            assert time.monotonic() < deadline, "the killed driver's lock was never released"
            time.sleep(0.2)
    assert (summary.files, summary.events_compacted) == (3, events)


def test_two_migrators_through_pgbouncer_apply_each_migration_once(managed: tuple[TlsCluster, PgBouncer]) -> None:
    _, bouncer = managed
    url = bouncer.url("migrators")
    applied: list[list[int]] = [[], []]

    def migrate(index: int) -> None:
        applied[index] = [m.version for m in apply_migrations(url)]

    migrators = [threading.Thread(target=migrate, args=(index,)) for index in range(2)]
    for migrator in migrators:
        migrator.start()
    for migrator in migrators:
        migrator.join(timeout=120)
    everything = [m.version for m in discover()]
    assert sorted(applied[0] + applied[1]) == everything
    assert rows(url, "select version from lineage.schema_migrations order by version") == [(v,) for v in everything]
    assert rows(url, "select count(*) from pg_locks where locktype = 'advisory'") == [(0,)]  # none left behind

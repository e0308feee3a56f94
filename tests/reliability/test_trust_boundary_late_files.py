"""Nothing stranded (issue 28, item 7): a client's spilled files delivered after a week's outage,
into hour partitions older than the lookback, are taken by the scheduled compaction (the DAG's
``compact`` stage and the DAG itself), reported in its summary, task log and asset event, and
counted by ``lineage status``; ``lineage compact --late`` lists every partition.

Real parts: the lineage client (its spill and delivery), real PostgreSQL, the compaction as the
DAG runs it (in-process parsing: no Spark needed for a few small local files), the installed
``lineage`` command, and ``airflow dags test``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest

from lineage.client.delivery import Delivery
from lineage.client.run_context import RunContext
from lineage.transport.log_file import EventLogWriter, partition_of
from spark_jobs.compaction.job import compact_interval
from tests.airflow_support import airflow_dags_test, airflow_env, ensure_airflow_db, libpq
from tests.factories import access, write_log
from warehouse.db.connection import connect

LINEAGE = str(Path(sys.executable).parent / "lineage")
LOOKBACK_HOURS = 168  # the default: a week


def rows(url: str, query: str) -> list[tuple]:  # type: ignore[type-arg]
    with connect(url) as conn:
        return [tuple(row) for row in conn.execute(query).fetchall()]  # type: ignore[arg-type]


@pytest.fixture
def client_env(log_root: Path, warehouse_db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The environment of a client host and of the compaction: the log root, the warehouse, a
    spill folder; one write attempt, so an unavailable root spills at once. Returns the spill folder."""
    spill = tmp_path / "spill"
    for key, value in {"LINEAGE_LOG_ROOT": str(log_root), "LINEAGE_DATABASE_URL": warehouse_db,
                       "LINEAGE_SPILL_DIR": str(spill), "LINEAGE_WRITE_ATTEMPTS": "1",
                       "LINEAGE_LOOKBACK_HOURS": str(LOOKBACK_HOURS)}.items():
        monkeypatch.setenv(key, value)
    return spill


def spill_a_run_during_an_outage(tmp_path: Path, spill: Path, log_root: Path, started: datetime) -> list[str]:
    """A pipeline records a run with our client while the log root is unreachable (its events are
    spilled on the host), ``started`` being a week and more ago; the root comes back and the
    spill is delivered now, into the hour the files were meant for. Returns the delivered paths."""
    unreachable = tmp_path / "unmounted"
    unreachable.write_text("not a folder")  # the root's mount is gone: every write fails
    run = RunContext("default", "Billing", "spark", "MonthlyInvoices", "outage-run",
                     log_root=str(unreachable / "raw-events"))
    run.start(at=started)
    run.read("invoices_raw")
    run.write("invoices")
    run.end("completed", at=started + timedelta(minutes=20))
    assert run.spilled and len(run.spilled) == len(run.files), run.files
    # the client's clock spilled them into the hour of the run (a week ago): as the partition
    # they were meant for, they stay in the spill folder until the root is back
    meant_for = spill / partition_of(started)
    meant_for.mkdir(parents=True, exist_ok=True)
    for path in map(Path, run.spilled):
        if path.parent != meant_for:
            path.rename(meant_for / path.name)
    delivered = Delivery(EventLogWriter(str(log_root)), spill).deliver_spilled()
    assert len(delivered) == len(run.spilled)
    assert all(partition_of(started) in path for path in delivered)
    return delivered


def test_a_spill_delivered_into_an_hour_eight_days_old_is_taken_by_the_scheduled_compaction(
        client_env: Path, log_root: Path, warehouse_db: str, tmp_path: Path,
        caplog: pytest.LogCaptureFixture) -> None:
    end = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)  # the last hourly run's interval end
    write_log(log_root, [access("on_time")], hour=partition_of(end - timedelta(minutes=30)))
    first = compact_interval(warehouse_db, end, "scheduled__first")
    assert (first.files, first.late_files) == (1, 0)

    started = end - timedelta(days=8, minutes=50)
    delivered = spill_a_run_during_an_outage(tmp_path, client_env, log_root, started)

    caplog.set_level("INFO")
    nxt = end + timedelta(hours=1)
    late = compact_interval(warehouse_db, nxt, "scheduled__late")  # the DAG's compact stage, the next hour
    assert (late.files, late.late_files, late.late_checked) == (len(delivered), len(delivered), True)
    assert late.events_compacted == 4 and late.quarantined == 0  # start, read, write, end
    assert f"{len(delivered)} late files taken" in late.render()
    assert any("late files found in 1 hour partitions older than the 168-hour lookback" in record.getMessage()
               for record in caplog.records)
    assert rows(warehouse_db, "select run_id, status, started_at from lineage.runs where run_id = 'outage-run'") == [
        ("outage-run", "completed", started)]
    assert sorted(rows(warehouse_db, "select dataset, access from lineage.access_details "
                                     "where dataset like 'invoices%'")) == [
        ("invoices", "write"), ("invoices_raw", "read")]
    assert rows(warehouse_db, "select files, late_files from lineage.compaction_batches "
                              "where dag_run_id = 'scheduled__late'") == [(len(delivered), len(delivered))]

    again = compact_interval(warehouse_db, nxt, "scheduled__late")  # a re-run of the same interval
    assert (again.files, again.events_compacted) == (0, 0)


@pytest.fixture
def cli(client_env: Path) -> object:
    def run(*args: str) -> str:
        done = subprocess.run([LINEAGE, *args], env={**os.environ, "COLUMNS": "250"}, capture_output=True,
                              text=True, timeout=300, check=False)
        assert done.returncode == 0, (args, done.returncode, done.stdout, done.stderr)
        return done.stdout + done.stderr
    return run


def test_lineage_status_counts_late_files_and_lineage_compact_takes_them(
        cli, client_env: Path, log_root: Path, warehouse_db: str, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    now = datetime.now(UTC)
    write_log(log_root, [access("on_time")], hour=partition_of(now))
    assert "1 new files" in cli("compact")
    delivered = spill_a_run_during_an_outage(tmp_path, client_env, log_root, now - timedelta(days=8))

    status = cli("status")
    assert f"files waiting in {log_root}: {len(delivered)} ({len(delivered)} late: in hour partitions older than " \
           f"the 168-hour lookback" in status, status
    compacted = cli("compact")  # what the schedule runs: no flag needed to take late files
    assert f"{len(delivered)} new files" in compacted and f"{len(delivered)} late files taken" in compacted, compacted
    assert "late files found in 1 hour partitions older than the 168-hour lookback" in compacted
    assert rows(warehouse_db, "select status from lineage.runs where run_id = 'outage-run'") == [("completed",)]
    assert f"files waiting in {log_root}: 0 (0 late" in cli("status")

    # --late lists every partition, however old, whatever the log root; here nothing is left
    assert "--late" in cli("compact", "--help")
    assert "0 new files" in cli("compact", "--late")


def test_the_dag_takes_late_files_and_says_so_in_its_summary_and_asset_events(
        client_env: Path, log_root: Path, warehouse_db: str, tmp_path: Path) -> None:
    ensure_airflow_db()
    end = datetime(2026, 11, 21, 6, 0, tzinfo=UTC)
    write_log(log_root, [access("on_time")], hour="dt=2026-11-21/hour=05")
    assert compact_interval(warehouse_db, end, "scheduled__before").files == 1  # a compaction ran
    delivered = spill_a_run_during_an_outage(tmp_path, client_env, log_root, end - timedelta(days=8))

    completed = subprocess.run(
        [*airflow_dags_test(), "lineage_compaction", "2026-11-21T07:00:00+00:00"],
        env=airflow_env(AIRFLOW_CONN_LINEAGE_WAREHOUSE=libpq(warehouse_db)),
        capture_output=True, text=True, timeout=600, check=False)
    output = completed.stdout + completed.stderr
    assert completed.returncode == 0 and "state=success" in output, output[-4000:]
    summary = next(line for line in output.splitlines() if "SUMMARY batch=" in line)
    assert f"files={len(delivered)} late_files={len(delivered)} " in summary, summary
    assert "late_checked=True" in summary, summary
    assert f"{len(delivered)} late files taken" in output  # the compact task's log
    assert rows(warehouse_db, "select status from lineage.runs where run_id = 'outage-run'") == [("completed",)]

    batch_id = rows(warehouse_db, "select batch_id from lineage.compaction_batches where late_files > 0")[0][0]
    with psycopg.connect(libpq(airflow_env()["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"])) as conn:
        events = conn.execute("select a.name, e.extra::text from asset_event e join asset a on a.id = e.asset_id "
                              "where e.extra::text like %s order by a.name", (f"%{batch_id}%",)).fetchall()
    assert {name for name, _ in events} >= {"lineage_runs", "lineage_dataset_accesses"}
    assert all(json.loads(extra)["late_files"] == len(delivered) for _, extra in events)

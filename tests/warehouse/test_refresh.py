"""The fast path (``warehouse.pipeline.refresh``, the lineage_refresh DAG's task) on a real warehouse with
real dbt and GX and no Spark session given, and the watcher that starts it (the real Airflow
trigger class, run on a real folder)."""

from __future__ import annotations

import asyncio
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from lineage.client.run_context import RunContext
from lineage.errors import CompactionBusyError, DataQualityError
from lineage.transport.log_file import EventLogWriter, partition_of
from tests.factories import access, event, write_log
from warehouse.db.compaction_store import take_lock as take_compaction_lock
from warehouse.db.connection import connect
from warehouse.pipeline.new_files_trigger import NewLogFilesTrigger
from warehouse.pipeline.refresh import refresh


def write_run(log_root: Path, run_id: str) -> None:
    with RunContext("default", "Shop", "spark", "Load", run_id=run_id, log_root=str(log_root)) as run:
        run.read("orders")
        run.write("totals")


def mart_runs(url: str) -> list[str]:
    with connect(url) as conn:
        return [row[0] for row in conn.execute("select run_id from lineage_marts.program_runs order by run_id")]


def test_a_refresh_compacts_checks_and_builds_the_marts_in_one_process_and_then_has_nothing_to_do(
    warehouse_db: str, log_root: Path, settings_for  # type: ignore[no-untyped-def]
) -> None:
    write_run(log_root, "r-1")
    summary = refresh(warehouse_db, settings_for(warehouse_db))

    assert summary.compacted is not None and summary.compacted.events_compacted == 4
    assert summary.changed and summary.marts is not None and summary.marts.startswith("dbt build: ")
    assert list(summary.seconds) == ["compact", "field_lineage", "apply_metadata", "propagate_tags", "check",
                                     "build_marts"]
    assert summary.checks and all(check.endswith(": ok") for check in summary.checks)
    assert mart_runs(warehouse_db) == ["r-1"]

    idle = refresh(warehouse_db, settings_for(warehouse_db))  # nothing new: no checks, no dbt
    assert not idle.changed and idle.marts is None and idle.compacted is not None and idle.compacted.files == 0
    assert list(idle.seconds) == ["compact", "field_lineage", "apply_metadata"]


def test_a_refresh_whose_batch_fails_its_checks_leaves_the_marts_as_they_were(
    warehouse_db: str, log_root: Path, settings_for  # type: ignore[no-untyped-def]
) -> None:
    now = datetime.now(UTC)
    write_log(log_root, [event("run_start", event_time=now.strftime("%Y-%m-%dT%H:%M:%SZ")), access("purchases"),
                         event("run_end", {"status": "completed"}, event_time="2026-01-01T00:00:00Z")],
              hour=partition_of(now))  # the run ends before it starts
    with pytest.raises(DataQualityError, match="failed 1 expectation"):
        refresh(warehouse_db, settings_for(warehouse_db))
    with connect(warehouse_db) as conn:
        assert conn.execute("select to_regclass('lineage_marts.program_runs')").fetchone() == (None,)


def test_a_refresh_waits_for_a_running_compaction_then_compacts(
    warehouse_db: str, log_root: Path, settings_for  # type: ignore[no-untyped-def]
) -> None:
    write_run(log_root, "r-2")
    held = threading.Event()
    release = threading.Event()

    def hold_the_lock() -> None:  # another compaction's transaction
        with connect(warehouse_db) as conn:
            take_compaction_lock(conn)
            held.set()
            release.wait(30)

    holder = threading.Thread(target=hold_the_lock)
    holder.start()
    held.wait(10)
    with pytest.raises(CompactionBusyError, match="another compaction is running"):
        refresh(warehouse_db, settings_for(warehouse_db), busy_wait=0)
    threading.Timer(3, release.set).start()
    began = time.monotonic()
    summary = refresh(warehouse_db, settings_for(warehouse_db), busy_wait=60)
    holder.join()
    assert time.monotonic() - began >= 2.5
    assert summary.compacted is not None and summary.compacted.events_compacted == 4
    assert mart_runs(warehouse_db) == ["r-2"]


def test_the_watcher_fires_once_for_files_present_then_once_per_new_file(tmp_path: Path) -> None:
    root = tmp_path / "raw"
    writer = EventLogWriter(str(root))
    writer.write([access("before")])

    async def watch() -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        stream = NewLogFilesTrigger(str(root), poke_interval=0.05).run()
        events.append((await anext(stream)).payload)  # what was there when the triggerer started
        quiet = asyncio.ensure_future(anext(stream))
        done, _ = await asyncio.wait({quiet}, timeout=0.5)
        assert not done, "fired with no new file"
        folder = root / partition_of(datetime.now(UTC))
        (folder / ".in-progress.jsonl").write_text("{}\n")  # a producer's temporary name: not yet
        done, _ = await asyncio.wait({quiet}, timeout=0.5)
        assert not done, "fired for a file still being written"
        (folder / ".in-progress.jsonl").rename(folder / "done.jsonl")
        events.append((await asyncio.wait_for(quiet, 5)).payload)
        await stream.aclose()
        return events

    first, second = asyncio.run(watch())
    assert first["new_files"] == 1 and first["example"].endswith(".jsonl")
    assert second == {"new_files": 1, "example": str(root / partition_of(datetime.now(UTC)) / "done.jsonl")}

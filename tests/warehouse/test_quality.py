"""Great Expectations over a compacted batch, on the real warehouse."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from lineage.errors import LineageError
from spark_jobs.compaction.job import run_compaction
from tests.factories import RUN, access, event, write_log
from warehouse.db.connection import connect
from warehouse.pipeline.quality import DataQualityError, check_batch

END = datetime(2026, 11, 21, 6, 0, tzinfo=UTC)


def test_a_clean_batch_passes_and_a_corrupted_one_fails_loudly(
    warehouse_db: str, log_root: Path, settings_for  # type: ignore[no-untyped-def]
) -> None:
    write_log(log_root, [event("run_start", event_time="2026-11-21T05:00:00Z"), access("purchases"),
                         event("run_end", {"status": "completed"}, event_time="2026-11-21T05:10:00Z")])
    batch = run_compaction(None, interval_end=END, settings=settings_for(warehouse_db)).batch_id
    results = check_batch(warehouse_db, batch)
    assert results and all(result.success for result in results)
    assert {result.table for result in results} == {"runs", "dataset_accesses", "compaction_batches"}

    with connect(warehouse_db, autocommit=True) as conn:  # a run that stopped before it started
        conn.execute("update lineage.runs set stopped_at = started_at - interval '1 hour'")
    failure = r"runs: expect_column_pair_values_a_to_be_greater_than_b: FAILED \(1 rows\)"
    with pytest.raises(DataQualityError, match=failure):
        check_batch(warehouse_db, batch)


def test_check_refuses_a_malformed_batch_id(warehouse_db: str) -> None:
    with pytest.raises(DataQualityError, match="not a batch id"):
        check_batch(warehouse_db, "x'; drop table lineage.runs; --")


def test_a_failed_batch_blocks_the_gate_until_it_is_acknowledged(
    warehouse_db: str, log_root: Path, settings_for  # type: ignore[no-untyped-def]
) -> None:
    """A producer's clock put a run's end before its start: the batch fails its check. A later
    gate with nothing new compacted checks it again and fails again (before, a re-run skipped
    the check); acknowledging it, with a reason, lets the gate pass."""
    from warehouse.pipeline.quality import acknowledge, blocking, gate

    write_log(log_root, [event("run_start", event_time="2026-11-21T05:10:00Z"), access("purchases"),
                         event("run_end", {"status": "completed"}, event_time="2026-11-21T05:00:00Z")])
    batch = run_compaction(None, interval_end=END, settings=settings_for(warehouse_db)).batch_id
    for _ in range(2):  # the run, then a re-run that compacts nothing
        with pytest.raises(DataQualityError, match=f"batch {batch} failed 1 expectation.*acknowledge"):
            gate(warehouse_db)
    assert [(b.batch_id, b.quality) for b in blocking(warehouse_db)] == [(batch, "failed")]

    with pytest.raises(LineageError, match="say why"):
        acknowledge(warehouse_db, batch, "  ")
    with pytest.raises(LineageError, match="no batch 'nope'"):
        acknowledge(warehouse_db, "nope", "because")
    assert acknowledge(warehouse_db, batch, "clock skew on one host; accepted").quality == "acknowledged"
    assert gate(warehouse_db) == [] and blocking(warehouse_db) == []
    with pytest.raises(LineageError, match="is acknowledged, not failed"):
        acknowledge(warehouse_db, batch, "again")

    second = {**RUN, "run_id": "r-2"}
    write_log(log_root, [event("run_start", event_time="2026-11-21T05:20:00Z", run=second),
                         event("run_end", {"status": "completed"}, event_time="2026-11-21T05:30:00Z", run=second)])
    later = run_compaction(None, interval_end=END, settings=settings_for(warehouse_db)).batch_id
    assert gate(warehouse_db)  # the new, clean batch is checked and passes
    with connect(warehouse_db) as conn:
        assert conn.execute("select batch_id, quality from lineage.compaction_batches order by started_at"
                            ).fetchall() == [(batch, "acknowledged"), (later, "passed")]

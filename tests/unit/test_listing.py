from __future__ import annotations

from datetime import UTC, datetime

from spark_jobs.compaction.listing import partition_days, partition_start


def test_partition_days_cover_the_lookback() -> None:
    end = datetime(2026, 11, 21, 1, 0, tzinfo=UTC)
    assert partition_days(end, 2) == ["2026-11-20", "2026-11-21"]
    assert partition_days(end, 1) == ["2026-11-21"]


def test_partition_start_reads_the_folder_names() -> None:
    assert partition_start("file:/r/dt=2026-11-21/hour=05/a.jsonl") == datetime(2026, 11, 21, 5, tzinfo=UTC)
    assert partition_start("file:/r/other/a.jsonl") is None
    assert partition_start("file:/r/dt=2026-13-01/hour=05/a.jsonl") is None

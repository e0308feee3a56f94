from __future__ import annotations

from datetime import UTC, datetime

from lineage.log_writer import partition_start
from spark_jobs.compaction.listing import partition_days


def test_partition_days_cover_the_lookback() -> None:
    end = datetime(2026, 11, 21, 1, 0, tzinfo=UTC)
    assert partition_days(end, 2) == ["2026-11-20", "2026-11-21"]
    assert partition_days(end, 1) == ["2026-11-21"]


def test_partition_start_reads_the_folder_names() -> None:
    assert partition_start("file:/r/dt=2026-11-21/hour=05/a.jsonl") == datetime(2026, 11, 21, 5, tzinfo=UTC)
    assert partition_start("file:/r/other/a.jsonl") is None
    assert partition_start("file:/r/dt=2026-13-01/hour=05/a.jsonl") is None


def test_chunk_files_groups_consecutive_files_by_size() -> None:
    from spark_jobs.compaction.job import chunk_files
    from spark_jobs.compaction.listing import LogFile

    files = [LogFile(f"f{index}", size) for index, size in enumerate([40, 40, 40, 200, 10])]
    assert [[f.path for f in chunk] for chunk in chunk_files(files, 100)] == [
        ["f0", "f1"], ["f2"], ["f3"], ["f4"]]
    assert chunk_files([], 100) == []

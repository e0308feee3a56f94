from __future__ import annotations

from datetime import UTC, datetime, timedelta

from lineage.transport.log_file import partition_start
from spark_jobs.compaction.listing import is_late, listing_start, partition_days


def test_partition_days_cover_the_lookback() -> None:
    end = datetime(2026, 11, 21, 1, 0, tzinfo=UTC)
    assert partition_days(end - timedelta(hours=2), end) == ["2026-11-20", "2026-11-21"]
    assert partition_days(end - timedelta(hours=1), end) == ["2026-11-21"]


def test_the_listing_reaches_back_to_the_previous_run_after_a_pause() -> None:
    end = datetime(2026, 11, 21, 6, 0, tzinfo=UTC)
    assert listing_start(end, 168, None) == end - timedelta(hours=168)  # the first run: the lookback
    hourly = listing_start(end, 168, end - timedelta(hours=1))
    assert hourly == end - timedelta(hours=169)  # on schedule: one interval more than the lookback
    paused = listing_start(end, 168, end - timedelta(days=30))  # a month's pause with catchup=False
    assert paused == end - timedelta(days=30, hours=168)
    assert listing_start(end, 168, end + timedelta(days=1)) == end - timedelta(hours=168)  # after a backfill


def test_a_file_older_than_the_runs_own_window_is_late() -> None:
    end = datetime(2026, 11, 21, 6, 0, tzinfo=UTC)
    assert not is_late("file:/r/dt=2026-11-21/hour=03/a.jsonl", end, 3)
    assert is_late("file:/r/dt=2026-11-21/hour=02/a.jsonl", end, 3)
    assert is_late("file:/r/dt=2026-10-01/hour=00/a.jsonl", end, 3)
    assert not is_late("file:/r/other/a.jsonl", end, 3)


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


def test_only_partitions_changed_since_they_settled_are_listed() -> None:
    from spark_jobs.compaction.listing import Partition, changed

    settled = {"file:/r/dt=2026-11-21/hour=03": 1_000, "file:/r/dt=2026-11-21/hour=04": 2_000}
    partitions = [Partition("file:/r/dt=2026-11-21/hour=03", 1_000),  # unchanged: skipped
                  Partition("file:/r/dt=2026-11-21/hour=04", 2_500),  # a file landed since
                  Partition("file:/r/dt=2026-11-21/hour=05", 3_000),  # never settled
                  Partition("s3a://b/r/dt=2026-11-21/hour=03", 0)]  # no folder times: always listed
    assert [item.path for item in changed(partitions, settled)] == [
        "file:/r/dt=2026-11-21/hour=04", "file:/r/dt=2026-11-21/hour=05", "s3a://b/r/dt=2026-11-21/hour=03"]


def test_a_partition_settles_only_when_its_folder_changed_well_before_the_listing() -> None:
    from spark_jobs.compaction.listing import SETTLE_MARGIN_MS, Partition

    listed_at = 10_000_000
    assert Partition("p", listed_at - SETTLE_MARGIN_MS).settles(listed_at)
    assert not Partition("p", listed_at - SETTLE_MARGIN_MS + 1).settles(listed_at)  # a file may land in the same tick
    assert not Partition("p", 0).settles(listed_at)  # object stores: no folder time to trust


def test_local_roots_are_recognised_and_others_left_to_hadoop() -> None:
    from spark_jobs.compaction.listing import local_root

    assert local_root("/data/raw") == "/data/raw"
    assert local_root("file:///data/raw/") == "/data/raw"
    assert local_root("s3a://bucket/raw") is None
    assert local_root("hdfs://nn:8020/raw") is None


def test_recent_log_files_are_the_completed_files_of_this_and_the_previous_hour(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from spark_jobs.compaction.listing import recent_log_files

    now = datetime(2026, 11, 21, 6, 30, tzinfo=UTC)
    for hour, name in [("06", "a.jsonl"), ("06", "b.jsonl.gz"), ("06", ".writing.jsonl"), ("06", "_spool.jsonl"),
                       ("06", "notes.txt"), ("05", "c.jsonl"), ("04", "old.jsonl")]:
        folder = tmp_path / f"dt=2026-11-21/hour={hour}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text("{}\n")
    found = recent_log_files(str(tmp_path), now)
    assert sorted(path.removeprefix(str(tmp_path)) for path in found) == [
        "/dt=2026-11-21/hour=05/c.jsonl", "/dt=2026-11-21/hour=06/a.jsonl", "/dt=2026-11-21/hour=06/b.jsonl.gz"]
    assert recent_log_files(str(tmp_path / "missing"), now) == set()
    midnight = datetime(2026, 11, 22, 0, 10, tzinfo=UTC)  # the previous hour is yesterday's last
    (tmp_path / "dt=2026-11-21/hour=23").mkdir()
    (tmp_path / "dt=2026-11-21/hour=23/late.jsonl").write_text("{}\n")
    assert [p.rsplit("/", 1)[1] for p in recent_log_files(str(tmp_path), midnight)] == ["late.jsonl"]

"""Where a compaction's listing starts, so no late file is stranded (pure rules, no IO)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lineage.transport.log_file import partition_start
from spark_jobs.compaction.listing import _hour_start, has_folder_times, listing_from, sweep_due

END = datetime(2026, 11, 21, 6, 0, tzinfo=UTC)


@pytest.mark.parametrize(("root", "expected"), [
    ("/data/raw", True), ("file:///data/raw", True), ("hdfs://nn:8020/raw", True),
    ("s3a://bucket/raw", False), ("gs://bucket/raw", False), ("abfss://c@a.dfs.core.windows.net/raw", False)])
def test_has_folder_times_only_for_local_and_hdfs_roots(root: str, expected: bool) -> None:
    assert has_folder_times(root) is expected


def test_a_root_with_folder_times_lists_every_partition_on_every_run() -> None:
    for root in ("/data/raw", "hdfs://nn:8020/raw"):
        assert listing_from(root, END, 168, END - timedelta(hours=1), 24) is None
        assert listing_from(root, END, 168, END - timedelta(hours=1), 0) is None


def test_the_refresh_on_new_files_lists_the_lookback_alone_and_leaves_late_files_to_the_schedule() -> None:
    hourly = END - timedelta(hours=1)
    assert listing_from("/data/raw", END, 168, hourly, 24, lookback_only=True) == END - timedelta(hours=169)
    assert listing_from("s3a://b/raw", END, 168, None, 24, lookback_only=True) == END - timedelta(hours=168)
    assert listing_from("/data/raw", END, 168, hourly, 24, everything=True, lookback_only=True) is None


def test_an_object_store_lists_the_lookback_between_sweeps_and_everything_on_one() -> None:
    hourly = END - timedelta(hours=1)
    assert listing_from("s3a://b/raw", END, 168, hourly, 24) == END - timedelta(hours=169)
    assert listing_from("s3a://b/raw", END, 168, hourly, 24, everything=True) is None  # lineage compact --late
    midnight = datetime(2026, 11, 22, 0, 0, tzinfo=UTC)
    assert listing_from("s3a://b/raw", midnight, 168, midnight - timedelta(hours=1), 24) is None
    assert listing_from("s3a://b/raw", midnight, 168, midnight - timedelta(hours=1), 0) is not None  # sweep off


@pytest.mark.parametrize(("previous", "end", "hours", "expected"), [
    (None, END, 24, True),  # the first run
    (END - timedelta(hours=1), END, 24, False),
    (datetime(2026, 11, 21, 23, tzinfo=UTC), datetime(2026, 11, 22, 0, tzinfo=UTC), 24, True),  # midnight UTC
    (datetime(2026, 11, 21, 23, 59, tzinfo=UTC), datetime(2026, 11, 22, 0, 1, tzinfo=UTC), 24, True),
    (datetime(2026, 11, 19, 5, tzinfo=UTC), END, 24, True),  # after a pause: the missed sweeps, once
    (END, END, 24, False),  # a re-run of the same interval
    (END + timedelta(days=3), END, 24, False),  # a backfill of an older interval
    (END - timedelta(hours=1), END, 6, True),  # every 6 hours: 00, 06, 12, 18 UTC
    (END - timedelta(hours=1), END, 0, False),  # never
    (None, END, 0, False),
])
def test_a_sweep_is_due_when_its_period_boundary_falls_in_the_runs_interval(
        previous: datetime | None, end: datetime, hours: int, expected: bool) -> None:
    assert sweep_due(end, previous, hours) is expected


def test_hourly_runs_sweep_once_a_day() -> None:
    ends = [END + timedelta(hours=hour) for hour in range(24 * 3)]
    sweeps = [end for previous, end in pairwise(ends) if sweep_due(end, previous, 24)]
    assert [end.hour for end in sweeps] == [0, 0, 0]


@given(day=st.dates(min_value=datetime(1970, 1, 2).date(), max_value=datetime(2999, 12, 31).date()),
       hour=st.integers(min_value=0, max_value=30), padded=st.booleans(),
       root=st.sampled_from(["file:/r", "s3a://b/raw", "file:/a/hour=3", "", "file:/dt=2020-01-01"]))
def test_the_fast_hour_parse_agrees_with_partition_start(day, hour, padded, root) -> None:  # type: ignore[no-untyped-def]
    path = f"{root}/dt={day.isoformat()}/hour={f'{hour:02d}' if padded else hour}/"
    assert _hour_start(path) == partition_start(path)


@pytest.mark.parametrize("path", [
    "file:/r/dt=2026-13-01/hour=05/", "file:/r/dt=2026-11-21/hour=²/", "file:/r/dt=2026-11-21/hour=/",
    "file:/r/dt=20261121/hour=05/", "file:/r/dt=2026-11-21/hour=005/", "file:/r/other/", "dt=2026-11-21/hour=07"])
def test_the_fast_hour_parse_agrees_on_odd_names(path: str) -> None:
    assert _hour_start(path) == partition_start(path)

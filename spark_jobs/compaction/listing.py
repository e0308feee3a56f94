"""Find raw log files through Hadoop's FileSystem API, so any URI Spark reads works."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from pyspark.sql import SparkSession

from lineage.log_writer import LOG_SUFFIX, partition_start


@dataclass(frozen=True)
class LogFile:
    path: str
    size_bytes: int


def partition_days(earliest: datetime, interval_end: datetime) -> list[str]:
    """The ``dt=`` days whose hours may hold files from ``earliest`` up to ``interval_end``."""
    first = earliest.astimezone(UTC).date()
    last = interval_end.astimezone(UTC).date()
    return [(first + timedelta(days=offset)).isoformat() for offset in range((last - first).days + 1)]


def listing_start(interval_end: datetime, lookback_hours: int, listed_until: datetime | None) -> datetime:
    """Where a scheduled compaction's listing starts: the lookback before ``interval_end``, or
    before the previous run's interval end (``listed_until``) when that is earlier, so files
    written while the schedule was paused are still found."""
    lookback = timedelta(hours=lookback_hours)
    window = interval_end - lookback
    return window if listed_until is None else min(window, listed_until - lookback)


def is_late(path: str, interval_end: datetime, lookback_hours: int) -> bool:
    """A file whose hour partition is older than this run's own lookback window."""
    start = partition_start(path)
    return start is not None and start <= interval_end - timedelta(hours=lookback_hours + 1)


def list_log_files(spark: SparkSession, log_root: str, interval_end: datetime,
                   earliest: datetime | None) -> list[LogFile]:
    """Completed log files (``*.jsonl``, and ``*.jsonl.gz``, which Spark reads decompressed) in
    hour partitions from ``earliest`` up to ``interval_end`` (every partition when ``earliest``
    is None: ``--all``).

    Files whose names start with ``.`` or ``_`` (in-progress temporaries) are skipped.
    """
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    hadoop_conf = spark.sparkContext._jsc.hadoopConfiguration()
    days = "*" if earliest is None else "{" + ",".join(partition_days(earliest, interval_end)) + "}"
    suffixes = f"{{{LOG_SUFFIX},{LOG_SUFFIX}.gz}}"
    pattern = jvm.org.apache.hadoop.fs.Path(f"{log_root.rstrip('/')}/dt={days}/hour=*/*{suffixes}")
    filesystem = pattern.getFileSystem(hadoop_conf)
    statuses = filesystem.globStatus(pattern) or []
    found: list[LogFile] = []
    for status in statuses:
        path = status.getPath().toString()
        name = status.getPath().getName()
        start = partition_start(path)
        if name.startswith((".", "_")) or start is None or start > interval_end:
            continue
        if earliest is not None and start <= earliest - timedelta(hours=1):
            continue
        found.append(LogFile(path=path, size_bytes=int(status.getLen())))
    return sorted(found, key=lambda item: item.path)

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


def partition_days(interval_end: datetime, lookback_hours: int) -> list[str]:
    """The ``dt=`` days whose hours may hold files for an interval ending at ``interval_end``."""
    first = (interval_end - timedelta(hours=lookback_hours)).astimezone(UTC).date()
    last = interval_end.astimezone(UTC).date()
    return [(first + timedelta(days=offset)).isoformat() for offset in range((last - first).days + 1)]


def list_log_files(spark: SparkSession, log_root: str, interval_end: datetime, lookback_hours: int) -> list[LogFile]:
    """Completed log files in partitions from ``interval_end - lookback`` up to ``interval_end``.

    Files whose names start with ``.`` or ``_`` (in-progress temporaries) are skipped.
    """
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    hadoop_conf = spark.sparkContext._jsc.hadoopConfiguration()
    days = ",".join(partition_days(interval_end, lookback_hours))
    pattern = jvm.org.apache.hadoop.fs.Path(f"{log_root.rstrip('/')}/dt={{{days}}}/hour=*/*{LOG_SUFFIX}")
    filesystem = pattern.getFileSystem(hadoop_conf)
    statuses = filesystem.globStatus(pattern) or []
    earliest = interval_end - timedelta(hours=lookback_hours)
    found: list[LogFile] = []
    for status in statuses:
        path = status.getPath().toString()
        name = status.getPath().getName()
        start = partition_start(path)
        if name.startswith((".", "_")) or start is None or not (earliest - timedelta(hours=1) < start <= interval_end):
            continue
        found.append(LogFile(path=path, size_bytes=int(status.getLen())))
    return sorted(found, key=lambda item: item.path)

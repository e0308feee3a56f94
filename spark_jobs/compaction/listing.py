"""Find raw log files, hour partition by hour partition, so any URI Spark reads works.

A compaction lists the hour folders (``dt=.../hour=...``) of its window first, then the files
of only those folders that changed since a compaction found every file in them compacted (a
*settled* partition: its folder's modification time is recorded with the batch, migration
0019). A folder's modification time moves whenever a file is created, renamed into or deleted
from it, which is how every producer adds a file (written under a ``.`` name, then renamed), so
an unchanged folder holds no new file. A no-op run therefore costs one listing of the window's
hour folders, whatever the number of files already compacted.

Only file systems with real folders have such times: local paths (``file:``) and HDFS. On object
stores (``s3a://``, ``gs://``, ...) a "folder" is a name prefix, so every partition of the window
is listed every time, as before.

Late files are found by arrival, not by hour. On a root with folder times the scheduled listing
covers every hour folder of the root, however old (a stat each; the files of only the folders
that moved), so a file delivered now into an hour a week gone (a client's spilled files after an
outage) is taken by the next run. On an object store that would list every file of the root
every run; there a run lists every partition only once per ``LINEAGE_LATE_SWEEP_HOURS`` (the sweep)
and the lookback window otherwise; ``lineage compact --late`` lists everything at once.

Local log roots are listed with ``os.scandir`` (Hadoop's listing through py4j costs several
round trips per file: 7-15 s for 12,594 files); other URIs through Hadoop's FileSystem API.
Both name files as Hadoop does (``file:/abs/path``).
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:  # a local log root is listed without Spark (the ``lineage status`` command)
    from pyspark.sql import SparkSession

from lineage.transport.log_file import LOG_SUFFIX, partition_of, partition_start

# Schemes whose folders carry a modification time that moves when a file is added.
DIRECTORY_TIME_SCHEMES = frozenset({"file", "hdfs"})
# A partition is settled only if its folder last changed this long before the listing began, so a
# file added right after the listing can never share the recorded time (coarse clocks, skew).
SETTLE_MARGIN_MS = 60_000
_SUFFIXES = (LOG_SUFFIX, LOG_SUFFIX + ".gz")


@dataclass(frozen=True)
class LogFile:
    path: str
    size_bytes: int


@dataclass(frozen=True)
class Partition:
    """One hour folder of the log: its URI and its modification time in ms (0: not trustworthy)."""

    path: str
    modified_ms: int

    def settles(self, listed_at_ms: int) -> bool:
        """Whether a compaction that listed this folder at ``listed_at_ms`` may record it settled."""
        return 0 < self.modified_ms <= listed_at_ms - SETTLE_MARGIN_MS


def changed(partitions: Sequence[Partition], settled: Mapping[str, int]) -> list[Partition]:
    """The partitions whose files must be listed: never settled, or changed since."""
    return [item for item in partitions if item.modified_ms == 0 or settled.get(item.path) != item.modified_ms]


def now_ms() -> int:
    return time.time_ns() // 1_000_000


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


def has_folder_times(log_root: str) -> bool:
    """Whether the hour folders of ``log_root`` carry modification times that move when a file
    arrives (a local path, ``file:`` or ``hdfs:``), so every partition can be checked cheaply."""
    return local_root(log_root) is not None or urlsplit(log_root).scheme in DIRECTORY_TIME_SCHEMES


def sweep_due(interval_end: datetime, listed_until: datetime | None, sweep_hours: int) -> bool:
    """Whether a run up to ``interval_end`` lists every partition of a root without folder times:
    when a multiple of ``sweep_hours`` (counted from the epoch, so UTC midnight for 24) falls after
    the previous run's interval end and up to this one's. No state beside ``listed_until``: a
    failed sweep is retried by the next attempt, and a re-run of an older interval sweeps nothing.
    ``sweep_hours`` 0 never sweeps."""
    if sweep_hours <= 0:
        return False
    if listed_until is None:
        return True
    period = sweep_hours * 3600
    return int(interval_end.timestamp()) // period > int(listed_until.timestamp()) // period


def listing_from(log_root: str, interval_end: datetime, lookback_hours: int, listed_until: datetime | None,
                 sweep_hours: int, everything: bool = False, lookback_only: bool = False) -> datetime | None:
    """Where a compaction's listing starts; None: every hour partition of the root, however old.

    Every partition when asked (``everything``: ``lineage compact --late``), on a root with folder
    times (the partitions whose folder did not move since they settled cost a stat, not a
    listing), and on a sweep (``sweep_due``); else, or when the caller leaves late files to the
    schedule (``lookback_only``: the refresh on new files), the lookback window (``listing_start``)."""
    if everything:
        return None
    if not lookback_only and (has_folder_times(log_root) or sweep_due(interval_end, listed_until, sweep_hours)):
        return None
    return listing_start(interval_end, lookback_hours, listed_until)


def is_late(path: str, interval_end: datetime, lookback_hours: int) -> bool:
    """A file whose hour partition is older than this run's own lookback window."""
    start = partition_start(path)
    return start is not None and start <= interval_end - timedelta(hours=lookback_hours + 1)


def in_window(path: str, interval_end: datetime, earliest: datetime | None) -> bool:
    """Whether the hour partition of ``path`` lies from ``earliest`` up to ``interval_end``."""
    start = _hour_start(path)
    if start is None or start > interval_end:
        return False
    return earliest is None or start > earliest - timedelta(hours=1)


def _hour_start(path: str) -> datetime | None:
    """``partition_start`` of a partition's path (``.../dt=D/hour=H/``), its day parsed once: a
    listing of every partition of a root checks thousands (strptime was 2/3 of that cost)."""
    folders = path.rstrip("/").rsplit("/", 2)
    if len(folders) != 3 or not folders[1].startswith("dt=") or not folders[2].startswith("hour="):
        return partition_start(path)
    day, hour = _day(folders[1][len("dt="):]), folders[2][len("hour="):]
    if day is None or not (hour.isascii() and hour.isdigit() and len(hour) <= 2 and int(hour) < 24):
        return partition_start(path)
    return datetime(day.year, day.month, day.day, int(hour), tzinfo=UTC)


@functools.lru_cache(maxsize=4096)
def _day(text: str) -> date | None:
    try:
        return datetime.strptime(text, "%Y-%m-%d").date()
    except ValueError:
        return None


def is_log_file(name: str) -> bool:
    """A completed log file's name (``*.jsonl``, ``*.jsonl.gz``, which Spark reads decompressed);
    names starting with ``.`` or ``_`` are in-progress temporaries."""
    return name.endswith(_SUFFIXES) and not name.startswith((".", "_"))


def local_root(log_root: str) -> str | None:
    """The absolute local folder of a local log root (a path or a ``file:`` URI), else None."""
    parts = urlsplit(log_root)
    if parts.scheme == "file":
        return os.path.abspath(parts.path or "/")
    if parts.scheme == "" or (len(parts.scheme) == 1 and os.name == "nt"):
        return os.path.abspath(log_root)
    return None


def list_partitions(spark: SparkSession | None, log_root: str, interval_end: datetime,
                    earliest: datetime | None) -> list[Partition]:
    """The hour folders from ``earliest`` up to ``interval_end`` (all of them when ``earliest``
    is None: ``--all``), sorted."""
    days = None if earliest is None else set(partition_days(earliest, interval_end))
    local = local_root(log_root)
    found = _local_partitions(local, days) if local is not None else _hadoop_partitions(spark, log_root, days)
    return sorted((item for item in found if in_window(item.path + "/", interval_end, earliest)),
                  key=lambda item: item.path)


def list_files(spark: SparkSession | None, partitions: Sequence[Partition]) -> list[LogFile]:
    """The completed log files of ``partitions``, sorted by path."""
    found: list[LogFile] = []
    hadoop = [item for item in partitions if not item.path.startswith("file:")]
    for item in partitions:
        if item.path.startswith("file:"):
            with os.scandir(item.path[len("file:"):]) as entries:
                found.extend(LogFile(f"{item.path}/{entry.name}", entry.stat().st_size)
                             for entry in entries if is_log_file(entry.name) and entry.is_file())
    if hadoop:
        found.extend(_hadoop_files(spark, hadoop))
    return sorted(found, key=lambda item: item.path)


def list_log_files(spark: SparkSession, log_root: str, interval_end: datetime,
                   earliest: datetime | None) -> list[LogFile]:
    """Every completed log file in hour partitions from ``earliest`` up to ``interval_end``."""
    return list_files(spark, list_partitions(spark, log_root, interval_end, earliest))


def recent_log_files(root: str, now: datetime, hours: int = 2) -> set[str]:
    """The completed log files (paths under the local folder ``root``) of the last ``hours`` hour
    partitions up to ``now``: where producers write a new file (the new-file watcher's view)."""
    found: set[str] = set()
    for back in range(hours):
        folder = os.path.join(root, partition_of(now - timedelta(hours=back)))
        try:
            with os.scandir(folder) as entries:
                found.update(entry.path for entry in entries if is_log_file(entry.name))
        except (FileNotFoundError, NotADirectoryError):
            continue
    return found


def _local_partitions(root: str, days: set[str] | None) -> list[Partition]:
    found = []
    for day in _subfolders(root, "dt="):
        if days is not None and day.name[len("dt="):] not in days:
            continue
        for hour in _subfolders(day.path, "hour="):
            found.append(Partition("file:" + hour.path, hour.stat().st_mtime_ns // 1_000_000))
    return found


def _subfolders(folder: str, prefix: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as entries:
            return [entry for entry in entries if entry.name.startswith(prefix) and entry.is_dir()]
    except FileNotFoundError:
        return []


def _hadoop_filesystem(spark: SparkSession | None, uri: str) -> tuple[Any, Any]:
    if spark is None:
        raise ValueError(f"listing {uri} needs a Spark session (only local log roots are listed without one)")
    """A Hadoop ``Path`` for ``uri`` and its ``FileSystem`` (py4j objects)."""
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    path = jvm.org.apache.hadoop.fs.Path(uri)
    return path, path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())


def _hadoop_partitions(spark: SparkSession | None, log_root: str, days: set[str] | None) -> list[Partition]:
    pattern = "*" if days is None else "{" + ",".join(sorted(days)) + "}"
    path, filesystem = _hadoop_filesystem(spark, f"{log_root.rstrip('/')}/dt={pattern}/hour=*")
    trusted = urlsplit(filesystem.getUri().toString()).scheme in DIRECTORY_TIME_SCHEMES
    found = []
    for status in filesystem.globStatus(path) or []:
        if status.isDirectory():
            found.append(Partition(status.getPath().toString(), int(status.getModificationTime()) if trusted else 0))
    return found


def _hadoop_files(spark: SparkSession | None, partitions: Sequence[Partition]) -> list[LogFile]:
    found = []
    for item in partitions:
        path, filesystem = _hadoop_filesystem(spark, item.path)
        for status in filesystem.listStatus(path) or []:
            uri = status.getPath().toString()
            if is_log_file(uri.rsplit("/", 1)[-1]) and not status.isDirectory():
                found.append(LogFile(uri, int(status.getLen())))
    return found

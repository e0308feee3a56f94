"""The compaction job: new raw log files -> validated, deduplicated rows in the warehouse.

    python -m spark_jobs.compaction.job [--interval-end 2026-11-21T06:00:00Z]

Reads only files not yet in the manifest, from partitions up to the interval's end: every hour
partition whose folder moved since it was last compacted on a local or HDFS root (a file delivered
into an hour however old is taken by the next run), the lookback window on an object store
(every partition once per ``LINEAGE_LATE_SWEEP_HOURS``, or with ``--late``); merges everything
in one transaction, so a crash leaves the warehouse as it was and a re-run of the same interval
is a no-op.
"""

from __future__ import annotations

import argparse
import logging
import re
import sys
import time
import uuid
from collections import Counter
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

import psycopg
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from lineage.failpoints import failpoint
from lineage.model.events import parse_time
from lineage.settings import Settings
from spark_jobs.compaction.listing import (
    LogFile,
    Partition,
    changed,
    is_late,
    list_files,
    list_partitions,
    listing_from,
    local_root,
    now_ms,
)
from spark_jobs.compaction.load import stage_local_files, stage_parsed_lines
from spark_jobs.session import build_session
from warehouse.db.compaction_store import (
    BatchMerge,
    CompactionSummary,
    compacted_paths,
    create_lines_table,
    drop_lines_table,
    listed_until,
    prepare_staging,
    settled_partitions,
)
from warehouse.db.connection import connect

log = logging.getLogger(__name__)


@contextmanager
def _phase(name: str) -> Iterator[None]:
    """Log the start and duration of one phase of a compaction (progress on long work)."""
    started = time.perf_counter()
    log.info("compaction: %s ...", name)
    yield
    log.info("compaction: %s done in %.1fs", name, time.perf_counter() - started)


def new_batch_id(interval_end: datetime) -> str:
    return f"{interval_end.astimezone(UTC):%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:8]}"


def chunk_files(files: Sequence[LogFile], max_bytes: int) -> list[list[LogFile]]:
    """Consecutive groups of ``files`` of at most ``max_bytes`` each (a larger file is alone)."""
    chunks: list[list[LogFile]] = []
    size = 0
    for item in files:
        if not chunks or (size + item.size_bytes > max_bytes and chunks[-1]):
            chunks.append([])
            size = 0
        chunks[-1].append(item)
        size += item.size_bytes
    return chunks


# Spark's defaults suit a few large files, not thousands of small ones: each file counts as
# 4 MB when files are packed into tasks (about one task per 32 small files, each with its own
# warehouse connection), and more than 32 paths are checked by a Spark job of one task per path
# (10,000 tasks for 10,000 files). Measured on 4,000 files of 8 events: 75 s with the defaults,
# 12 s with these. Set only while the compaction reads; local files skip Spark's file source.
SMALL_FILE_CONF = {
    "spark.sql.files.openCostInBytes": str(8 * 1024),
    "spark.sql.sources.parallelPartitionDiscovery.parallelism": "8",
}


@contextmanager
def _read_conf(spark: SparkSession, conf: dict[str, str]) -> Iterator[None]:
    """``conf`` set on the session for the block, the previous values restored after it."""
    before = {key: spark.conf.get(key, None) for key in conf}
    for key, value in conf.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, previous in before.items():
            if previous is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, previous)


def run_compaction(
    spark: SparkSession | None,
    *,
    interval_end: datetime,
    database_url: str | None = None,
    settings: Settings | None = None,
    dag_run_id: str | None = None,
    everything: bool = False,
    lookback_only: bool = False,
) -> CompactionSummary:
    """Compact the raw log files not yet compacted; returns what was done.

    Files are found by arrival, not only by hour (``listing.listing_from``): on a local or HDFS
    root every hour partition whose folder moved since it was last found fully compacted is
    listed, however old, so a file delivered into a long-gone hour (a client's spill after an
    outage) is taken by the next run. On an object store the listing reaches back
    ``LINEAGE_LOOKBACK_HOURS`` before ``interval_end`` (or before the previous run's interval end
    after a pause), and every partition once per ``LINEAGE_LATE_SWEEP_HOURS``. Files older than the
    run's own lookback are counted as late. ``everything`` lists every partition, however old
    (``--late``); ``lookback_only`` lists the lookback window alone and leaves late files to the
    schedule (the refresh on new files, whose latency a root of years of hour folders would add to).

    Files are staged in chunks of ``LINEAGE_COMPACTION_CHUNK_MB``; while Spark parses and
    stages one chunk, the previous one is merged inside the batch's single open transaction,
    so Spark and PostgreSQL work at the same time and the batch still commits (or rolls back)
    as one.

    Without a ``spark`` session, new local files of at most ``LINEAGE_COMPACTION_IN_PROCESS_MB``
    in all are parsed and staged in this process, and no JVM starts (a no-op run starts none
    either); a larger batch, or a remote log root, starts the session then.
    """
    settings = settings or Settings.from_env()
    sessions = _Sessions(spark, settings)
    url = database_url or settings.database_url
    started_at = datetime.now(UTC)
    batch_id = new_batch_id(interval_end)
    with connect(url, autocommit=True) as conn, connect(url, autocommit=True) as merge_conn:
        merge = BatchMerge(merge_conn, batch_id, auto_create_namespaces=settings.auto_create_namespaces)
        try:
            with _phase("listing raw log files"):
                earliest = listing_from(settings.log_root, interval_end, settings.lookback_hours, listed_until(conn),
                                        settings.late_sweep_hours, everything, lookback_only)
                listed_at = now_ms()
                lister = None if local_root(settings.log_root) else sessions.get()
                partitions = list_partitions(lister, settings.log_root, interval_end, earliest)
                to_list = changed(partitions, settled_partitions(conn, [p.path for p in partitions]))
                candidates = list_files(lister, to_list)
                done = compacted_paths(conn, [f.path for f in candidates])
                new_files = [f for f in candidates if f.path not in done]
                late_files = [f for f in new_files if is_late(f.path, interval_end, settings.lookback_hours)]
                late = len(late_files)
                settling = _settling(to_list, candidates, listed_at)
            log.info("compaction: %d hour partitions since %s, %d unchanged since they were last compacted; "
                     "%d files in the others, %d already compacted, %d new (%d late: older than the %d-hour "
                     "lookback)", len(partitions), earliest.isoformat() if earliest else "the beginning",
                     len(partitions) - len(to_list), len(candidates), len(done), len(new_files), late,
                     settings.lookback_hours)
            _log_late(late_files, earliest, settings)
            late_checked = earliest is None
            if not new_files:
                merge.finish_empty(interval_end, settled=settling)
                return CompactionSummary(batch_id, 0, 0, 0, 0, 0, 0, 0, 0, late_checked=late_checked)
            prepare_staging(conn)
            chunks = chunk_files(new_files, settings.compaction_chunk_mb * 1_048_576)
            if sessions.in_process(new_files):
                log.info("compaction: %d new files, %.1f MB: parsed in this process (no Spark)", len(new_files),
                         sum(f.size_bytes for f in new_files) / 1_048_576)
                events_read = _stage_and_merge(None, conn, merge, chunks, settings, url)
            else:
                session = sessions.get()
                with _read_conf(session, SMALL_FILE_CONF):
                    events_read = _stage_and_merge(session, conn, merge, chunks, settings, url)
            with _phase("recording the batch and committing"):
                return merge.finish(
                    [(f.path, f.size_bytes) for f in new_files], dag_run_id=dag_run_id,
                    interval_end=interval_end, started_at=started_at, events_read=events_read,
                    event_id_retention_days=settings.event_id_retention_days,
                    pending_retention_days=settings.pending_retention_days, late_files=late,
                    late_checked=late_checked, settled=settling,
                )
        except BaseException as error:
            merge.abort(error)
            raise


def _log_late(late_files: Sequence[LogFile], earliest: datetime | None, settings: Settings) -> None:
    """Say in the task's log what this run does about late files: those it takes, or that it did
    not look (an object store between sweeps)."""
    if late_files:
        hours = sorted({f.path.rsplit("/", 1)[0] for f in late_files})
        log.warning("compaction: %d late files found in %d hour partitions older than the %d-hour lookback "
                    "(delivered after their hour, e.g. a client's spill after an outage), taken in this batch: "
                    "%s", len(late_files), len(hours), settings.lookback_hours,
                    ", ".join(hours[:5]) + (f" and {len(hours) - 5} more" if len(hours) > 5 else ""))
    if earliest is not None:
        every = (f"every {settings.late_sweep_hours} hours" if settings.late_sweep_hours
                 else "never (LINEAGE_LATE_SWEEP_HOURS=0)")
        log.info("compaction: hour partitions before %s not listed by this run; the scheduled compaction lists "
                 "them (every run on a local or HDFS root, on an object store %s), `lineage compact --late` now",
                 earliest.isoformat(), every)


class _Sessions:
    """The compaction's Spark session: the one it was given, else one built when first needed."""

    def __init__(self, spark: SparkSession | None, settings: Settings) -> None:
        self.given = spark
        self.settings = settings
        self.built: SparkSession | None = None

    def in_process(self, files: Sequence[LogFile]) -> bool:
        """Whether ``files`` are staged without Spark: no session was given, they are local,
        and together at most ``in_process_mb``."""
        limit = self.settings.in_process_mb * 1_048_576
        return (self.given is None and all(f.path.startswith("file:") for f in files)
                and sum(f.size_bytes for f in files) <= limit)

    def get(self) -> SparkSession:
        if self.given is not None:
            return self.given
        if self.built is None:
            with _phase("starting Spark"):
                self.built = build_session("lineage-compaction", self.settings)
        return self.built


def _settling(listed: Sequence[Partition], files: Sequence[LogFile], listed_at: int) -> list[tuple[str, int, int]]:
    """The listed partitions a successful batch leaves settled (path, folder time, files): all of
    their files are compacted once the batch commits."""
    counts = Counter(f.path.rsplit("/", 1)[0] for f in files)
    return [(item.path, item.modified_ms, counts[item.path]) for item in listed if item.settles(listed_at)]


def _first_line(error: BaseException) -> str:
    """An error's gist: Spark's errors carry pages of JVM stack."""
    text = " ".join(str(error).split())
    found = re.search(r"\[[A-Z_.]+\][^\n]{0,300}", str(error))
    return (found.group(0) if found else text)[:500]


def compact_interval(database_url: str, interval_end: datetime, dag_run_id: str | None = None) -> CompactionSummary:
    """The DAG's ``compact`` stage: one compaction up to ``interval_end`` into ``database_url``
    (Spark starts only for a batch too large to parse in the task's process)."""
    summary = run_compaction(None, interval_end=interval_end, database_url=database_url, dag_run_id=dag_run_id)
    log.info("%s", summary.render())
    return summary


def _stage_and_merge(
    spark: SparkSession | None, conn: psycopg.Connection, merge: BatchMerge, chunks: list[list[LogFile]],
    settings: Settings, url: str,
) -> int:
    """Stage chunk i+1 with Spark (in this process without ``spark``) while chunk i merges;
    returns the lines read.

    A chunk Spark cannot read (a corrupt or truncated gzip file, a file too large to read whole)
    is staged again file by file; a file that still cannot be read is quarantined whole, with
    the reason, and recorded as compacted, so one poison file never fails the batch or the
    runs after it."""
    events_read = 0
    pending = [list(chunk) for chunk in chunks]
    tables = 0
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="merge") as merger:
        merging: Future[None] | None = None
        while pending:
            piece = pending.pop(0)
            tables += 1
            table = create_lines_table(conn, merge.batch_id, tables)
            read_local = all(f.path.startswith("file:") for f in piece)
            try:
                with _phase(f"staging {len(piece)} files ({len(pending)} pieces left)"):
                    latest = datetime.now(UTC) + timedelta(hours=settings.max_clock_skew_hours)
                    if spark is None:
                        events_read += stage_local_files([f.path for f in piece], settings.max_event_bytes, url,
                                                         table, settings.namespace_map, latest)
                    else:
                        events_read += stage_parsed_lines(_log_files(spark, piece, read_local),
                                                          settings.max_event_bytes, url, table,
                                                          settings.namespace_map, latest, read_local=read_local)
            except Exception as error:  # Spark could not read some file of the piece
                drop_lines_table(conn, table)
                if len(piece) > 1:
                    log.warning("compaction: %d files could not be read together (%s); staging them one by one",
                                len(piece), _first_line(error))
                    pending[:0] = [[item] for item in piece]
                    continue
                reason = f"unreadable file: {_first_line(error)}"
                log.warning("compaction: quarantining %s: %s", piece[0].path, reason)
                if merging is not None:
                    merging.result()
                merging = merger.submit(merge.quarantine_file, piece[0].path, reason)
                events_read += 1
                continue
            failpoint("compaction.staged")
            if merging is not None:
                merging.result()
            merging = merger.submit(_merge_logged, merge, table, tables, tables + len(pending))
        if merging is not None:
            merging.result()
    return events_read


def _log_files(spark: SparkSession, files: Sequence[LogFile], read_local: bool) -> DataFrame:
    """The files to stage: their paths, spread over the cluster's cores, when the Python workers
    read them (local files, ``read_local``); else Spark's text source, each file whole."""
    if read_local:
        return spark.createDataFrame([(f.path,) for f in files], "file_path string")
    # Spark names a file by its URI (a space as %20, % as %25); the listing and the manifest by
    # its Hadoop path: decoded here, a '+' kept as it is (url_decode reads it as a space)
    uri = F.regexp_replace(F.col("_metadata.file_path"), r"\+", "%2B")
    return spark.read.text([f.path for f in files], wholetext=True).select(
        F.url_decode(uri).alias("file_path"), "value")


def _merge_logged(merge: BatchMerge, table: str, index: int, total: int) -> None:
    with _phase(f"chunk {index}/{total}: merging into the open transaction"):
        merge.merge_chunk(table)
    failpoint("compaction.merged")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Compact raw lineage logs into the warehouse.")
    parser.add_argument("--interval-end", help="RFC 3339 time; default now")
    parser.add_argument("--late", "--all", action="store_true", dest="everything",
                        help="list every partition of the log root, however old, and compact the files not yet "
                             "compacted (files delivered into hours older than the lookback); the summary counts "
                             "them as late")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    interval_end = parse_time(args.interval_end) if args.interval_end else datetime.now(UTC)
    summary = run_compaction(None, interval_end=interval_end, everything=args.everything)
    print(summary.render())
    return 0


if __name__ == "__main__":
    sys.exit(main())

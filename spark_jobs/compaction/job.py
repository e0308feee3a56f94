"""The compaction job: new raw log files -> validated, deduplicated rows in the warehouse.

    python -m spark_jobs.compaction.job [--interval-end 2026-11-21T06:00:00Z]

Reads only files not yet in the manifest, from partitions up to the interval's end (and a
lookback for late files); merges everything in one transaction, so a crash leaves the
warehouse as it was and a re-run of the same interval is a no-op.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from lineage.events import parse_time
from lineage.settings import Settings
from spark_jobs.compaction.listing import LogFile, list_log_files
from spark_jobs.compaction.load import stage_parsed_lines
from spark_jobs.session import build_session
from warehouse.compaction_store import (
    CompactionSummary,
    acquire_lock,
    compacted_paths,
    merge_batch,
    prepare_staging,
    release_lock,
)
from warehouse.db import connect

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


def run_compaction(
    spark: SparkSession,
    *,
    interval_end: datetime,
    database_url: str | None = None,
    settings: Settings | None = None,
    dag_run_id: str | None = None,
) -> CompactionSummary:
    """Compact the raw log files not yet compacted; returns what was done."""
    settings = settings or Settings.from_env()
    url = database_url or settings.database_url
    started_at = datetime.now(UTC)
    batch_id = new_batch_id(interval_end)
    with connect(url, autocommit=True) as conn:
        acquire_lock(conn)
        try:
            with _phase("listing raw log files"):
                candidates = list_log_files(spark, settings.log_root, interval_end, settings.lookback_hours)
                done = compacted_paths(conn, [f.path for f in candidates])
                new_files = [f for f in candidates if f.path not in done]
            log.info("compaction: %d files found, %d already compacted, %d new",
                     len(candidates), len(done), len(new_files))
            if not new_files:
                return CompactionSummary(batch_id, 0, 0, 0, 0, 0, 0, 0, 0)
            tables = prepare_staging(conn, batch_id)
            log_files = spark.read.text([f.path for f in new_files], wholetext=True).select(
                F.col("_metadata.file_path").alias("file_path"), "value"
            )
            with _phase(f"parsing, validating and staging {len(new_files)} files"):
                events_read = stage_parsed_lines(log_files, settings.max_event_bytes, url, tables.lines)
            _stage_files(conn, tables.files, new_files)
            with _phase("merging into the warehouse (one transaction)"):
                return merge_batch(
                    conn, tables, batch_id=batch_id, dag_run_id=dag_run_id, interval_end=interval_end,
                    started_at=started_at, events_read=events_read,
                    event_id_retention_days=settings.event_id_retention_days,
                )
        finally:
            release_lock(conn)


def _stage_files(conn: object, table: str, files: list[LogFile]) -> None:
    with conn.cursor() as cursor, cursor.copy(f"COPY {table} (file_path, size_bytes) FROM STDIN") as copy:  # type: ignore[attr-defined]
        for item in files:
            copy.write_row((item.path, item.size_bytes))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Compact raw lineage logs into the warehouse.")
    parser.add_argument("--interval-end", help="RFC 3339 time; default now")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    interval_end = parse_time(args.interval_end) if args.interval_end else datetime.now(UTC)
    spark = build_session("lineage-compaction")
    summary = run_compaction(spark, interval_end=interval_end)
    print(summary.render())
    return 0


if __name__ == "__main__":
    sys.exit(main())

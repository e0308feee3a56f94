"""The field lineage job (the *Field Level Lineage* design): compacted field operation records -> stored paths.

Reads the records the compaction kept (``pending_events`` of kind ``field_operations`` not
processed yet), fingerprints each in Spark, computes the per-field paths of the fingerprints
not stored yet (once per distinct operation set), and stores sets, paths, the source-field
index and one row per run and destination in one transaction per chunk of records. The
executors read the records and COPY what they derive into staging tables; the driver sees
only row ranges and counts, then merges the staging tables. Run it after the compaction:

    python -m spark_jobs.field_lineage.job
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from contextlib import suppress
from dataclasses import dataclass, replace

import psycopg
import pyarrow as pa
from pyspark.sql import SparkSession

from lineage.settings import Settings, libpq_url
from spark_jobs.compaction.load import copy_arrow_batches
from spark_jobs.field_lineage.load import BATCH_ROWS, copy_into, new_set_records, pending_records
from spark_jobs.field_lineage.transforms import (
    NEW_SETS_SCHEMA,
    PENDING_SCHEMA,
    fingerprint_batches,
    fingerprint_records,
    path_batches,
    set_paths,
)
from spark_jobs.session import build_session
from warehouse.db.connection import connect
from warehouse.db.field_lineage_staging import (
    FieldStaging,
    PendingRange,
    backfill_edges,
    chunk_ranges,
    count_pending,
    create_staging,
    drop_staging,
    lock_chunk,
    read_new_sets,
    read_pending,
    staging_columns,
    store_results,
)

log = logging.getLogger(__name__)
CHUNK_RECORDS = 20_000


@dataclass(frozen=True)
class FieldLineageSummary:
    records: int
    sets_added: int
    paths_added: int
    runs_recorded: int
    quarantined: int
    seconds: float

    def render(self) -> str:
        return (f"field lineage: {self.records} records -> {self.sets_added} new operation sets, "
                f"{self.paths_added} new field paths, {self.runs_recorded} run rows, "
                f"{self.quarantined} quarantined, in {self.seconds:.1f}s")


class _SparkSteps:
    """The two derivation steps on Spark: the executors read, derive and COPY."""

    def __init__(self, spark: SparkSession, url: str) -> None:
        self.spark, self.url = spark, url
        self.tasks = max(2, spark.sparkContext.defaultParallelism)

    def stage_records(self, parts: list[PendingRange], staging: FieldStaging) -> int:
        return copy_into(fingerprint_records(pending_records(self.spark, self.url, parts)).drop("payload"),
                         self.url, staging.records)

    def stage_sets(self, staging: FieldStaging) -> int:
        return copy_into(set_paths(new_set_records(self.spark, self.url, staging, self.tasks)), self.url, staging.sets)


class _InProcessSteps:
    """The same steps in the job's own process, for a batch too small to pay for a JVM: the same
    batch functions over the same reads, COPYed into the same staging tables."""

    tasks = 1

    def __init__(self, conn: psycopg.Connection, url: str) -> None:
        self.conn, self.url = conn, libpq_url(url)

    def stage_records(self, parts: list[PendingRange], staging: FieldStaging) -> int:
        batches = (_arrow(rows, PENDING_SCHEMA.names) for part in parts
                   for rows in read_pending(self.conn, part, BATCH_ROWS))
        fingerprinted = (batch.drop_columns(["payload"]) for batch in fingerprint_batches(batches))
        return copy_arrow_batches(fingerprinted, self.url, staging.records, staging_columns("records"))

    def stage_sets(self, staging: FieldStaging) -> int:
        batches = (_arrow(rows, NEW_SETS_SCHEMA.names) for rows in read_new_sets(self.conn, staging, 0, 1, BATCH_ROWS))
        return copy_arrow_batches(path_batches(batches), self.url, staging.sets, staging_columns("sets"))


def _arrow(rows: list[tuple[str, ...]], names: list[str]) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays([pa.array(column, pa.string()) for column in zip(*rows, strict=True)],
                                      names=names)


def run_field_lineage(spark: SparkSession | None, settings: Settings | None = None,
                      chunk_records: int = CHUNK_RECORDS) -> FieldLineageSummary:
    """Process every pending field operation record, ``chunk_records`` at a time (one
    transaction per chunk: a chunk is stored and marked processed together), on ``spark``, or
    in this process when it is None."""
    settings = settings or Settings.from_env()
    url = settings.database_url
    began = time.perf_counter()
    totals = dict.fromkeys(("records", "sets_added", "paths_added", "runs_recorded", "quarantined"), 0)
    with connect(url) as conn:
        steps: _SparkSteps | _InProcessSteps = _SparkSteps(spark, url) if spark else _InProcessSteps(conn, url)
        while True:
            staging = create_staging(conn)  # committed: Spark's tasks COPY into it over their own connections
            lock_chunk(conn)  # another job (the scheduled DAG's, the refresh's) finishes its chunk first
            if not (parts := chunk_ranges(conn, chunk_records, steps.tasks)):
                drop_staging(conn, staging)
                conn.commit()
                break
            try:
                records = steps.stage_records(parts, staging)
                log.info("field lineage: %d field operation records staged (%d before)", records, totals["records"])
                steps.stage_sets(staging)
                counts = store_results(conn, staging)
                conn.commit()
            except BaseException:
                conn.rollback()
                with suppress(psycopg.Error):  # else a later run drops them (STALE_STAGING_SECONDS)
                    drop_staging(conn, staging)
                    conn.commit()
                raise
            totals["records"] += records
            for key, value in counts.items():
                totals[key] += value
    summary = FieldLineageSummary(**totals, seconds=time.perf_counter() - began)
    log.info(summary.render())
    return summary


def derive_pending(database_url: str) -> FieldLineageSummary:
    """The DAG's ``field_lineage`` stage: process the pending records in ``database_url``; in
    this process when at most ``LINEAGE_FIELD_LINEAGE_IN_PROCESS_RECORDS`` are pending, else
    on Spark (started only then)."""
    settings = replace(Settings.from_env(), database_url=database_url)
    limit = settings.field_lineage_in_process_records
    with connect(database_url) as conn:
        lock_chunk(conn)
        backfilled = backfill_edges(conn)  # sets stored before field edges: once, after the upgrade
        conn.commit()
        if backfilled:
            log.info("field lineage: %d operation sets stored before field edges got theirs", backfilled)
        waiting = count_pending(conn, upto=limit + 1)
    if not waiting:
        log.info("field lineage: no pending field operation records")
        return FieldLineageSummary(0, 0, 0, 0, 0, 0.0)
    if waiting <= limit:
        log.info("field lineage: %d pending records, derived in this process (no JVM)", waiting)
        return run_field_lineage(None, settings)
    return run_field_lineage(build_session("lineage-field-lineage", settings), settings)


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(description="Turn compacted field operations into field lineage.").parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    print(run_field_lineage(build_session("lineage-field-lineage")).render())
    return 0


if __name__ == "__main__":
    sys.exit(main())

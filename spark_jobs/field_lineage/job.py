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
from pyspark.sql import SparkSession

from lineage.settings import Settings
from spark_jobs.field_lineage.load import copy_into, new_set_records, pending_records
from spark_jobs.field_lineage.transforms import fingerprint_records, set_paths
from spark_jobs.session import build_session
from warehouse.db.connection import connect
from warehouse.db.field_lineage_staging import (
    chunk_ranges,
    create_staging,
    drop_staging,
    has_pending,
    lock_chunk,
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


def run_field_lineage(spark: SparkSession, settings: Settings | None = None,
                      chunk_records: int = CHUNK_RECORDS) -> FieldLineageSummary:
    """Process every pending field operation record, ``chunk_records`` at a time (one
    transaction per chunk: a chunk is stored and marked processed together)."""
    settings = settings or Settings.from_env()
    url = settings.database_url
    tasks = max(2, spark.sparkContext.defaultParallelism)
    began = time.perf_counter()
    totals = dict.fromkeys(("records", "sets_added", "paths_added", "runs_recorded", "quarantined"), 0)
    with connect(url) as conn:
        while True:
            staging = create_staging(conn)  # committed: Spark's tasks COPY into it over their own connections
            lock_chunk(conn)  # another job (the scheduled DAG's, the refresh's) finishes its chunk first
            if not (parts := chunk_ranges(conn, chunk_records, tasks)):
                drop_staging(conn, staging)
                conn.commit()
                break
            try:
                records = copy_into(fingerprint_records(pending_records(spark, url, parts)).drop("payload"),
                                    url, staging.records)
                log.info("field lineage: %d field operation records staged (%d before)", records, totals["records"])
                copy_into(set_paths(new_set_records(spark, url, staging, tasks)), url, staging.sets)
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
    """The DAG's ``field_lineage`` stage: process the pending records in ``database_url``;
    Spark starts only when there are some."""
    with connect(database_url) as conn:
        waiting = has_pending(conn)
    if not waiting:
        log.info("field lineage: no pending field operation records")
        return FieldLineageSummary(0, 0, 0, 0, 0, 0.0)
    settings = replace(Settings.from_env(), database_url=database_url)
    return run_field_lineage(build_session("lineage-field-lineage", settings), settings)


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(description="Turn compacted field operations into field lineage.").parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    print(run_field_lineage(build_session("lineage-field-lineage")).render())
    return 0


if __name__ == "__main__":
    sys.exit(main())

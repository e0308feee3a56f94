"""The field lineage job (the *Field Level Lineage* design): compacted field operation records -> stored paths.

Reads the records the compaction kept (``pending_events`` of kind ``field_operations`` not
processed yet), fingerprints each in Spark, computes the per-field paths of the fingerprints
not stored yet (once per distinct operation set), and stores sets, paths, the source-field
index and one row per run and destination in one transaction. Run it after the compaction:

    python -m spark_jobs.field_lineage.job
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from dataclasses import dataclass, replace

from pyspark.sql import SparkSession
from pyspark.sql import types as T

from lineage.settings import Settings
from spark_jobs.field_lineage.transforms import PENDING_SCHEMA, fingerprint_records, paths_of_new_sets
from spark_jobs.session import build_session
from warehouse.db import connect
from warehouse.field_lineage_store import fetch_pending, known_fingerprints, store_results

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
    began = time.perf_counter()
    totals = dict.fromkeys(("records", "sets_added", "paths_added", "runs_recorded", "quarantined"), 0)
    with connect(settings.database_url) as conn:
        while pending := fetch_pending(conn, chunk_records):
            log.info("field lineage: %d field operation records (%d so far)", len(pending), totals["records"])
            known = spark.createDataFrame([(f,) for f in known_fingerprints(conn)],
                                          T.StructType([T.StructField("fingerprint", T.StringType())]))
            fingerprinted = fingerprint_records(spark.createDataFrame(pending, PENDING_SCHEMA)).cache()
            new_sets = [row.asDict() for row in paths_of_new_sets(fingerprinted, known).collect()]
            records = [row.asDict() for row in fingerprinted.drop("payload").collect()]
            fingerprinted.unpersist()
            counts = store_results(conn, records, new_sets)
            conn.commit()
            totals["records"] += len(pending)
            for key, value in counts.items():
                totals[key] += value
    summary = FieldLineageSummary(**totals, seconds=time.perf_counter() - began)
    log.info(summary.render())
    return summary


def derive_pending(database_url: str) -> FieldLineageSummary:
    """The DAG's ``field_lineage`` stage: process the pending records in ``database_url``;
    Spark starts only when there are some."""
    with connect(database_url) as conn:
        waiting = bool(fetch_pending(conn, 1))
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

"""
### lineage_compaction

Compacts the raw lineage event logs into the warehouse, every hour by default
(`LINEAGE_SCHEDULE`):

1. **compact**: a Spark job reads the raw log files not yet in the manifest (partitions up
   to the interval's end, plus `LINEAGE_LOOKBACK_HOURS` for late files), validates each line
   against the event schema (bad lines go to `lineage.quarantine` with the reason),
   deduplicates by event id, COPYs into staging and merges in one transaction. Then, in the
   same Spark session, the field lineage job turns the new field operation records into
   operation sets, per-field paths and run rows (seed 004), and the SYSTEM metadata programs
   recorded is applied (the later event wins by event time), each change with its record.
2. **check**: Great Expectations over the rows this batch wrote; a failure stops the run
   before the marts are published.
3. **build_marts**: `dbt build` of the marts (`lineage_marts.*`) and their tests.
4. **publish**: emits the Assets of the tables updated, with the batch id, and logs the summary.
5. **notify_metadata_changes**: emits `lineage_metadata_changes` with the ids of the metadata
   change records this run made (SYSTEM metadata programs recorded); skipped when none.

Re-running a run for the same interval is a no-op. The warehouse is reached through the
Airflow connection `lineage_warehouse`.
"""

from __future__ import annotations

import logging
import os
from typing import Any

import pendulum
from airflow.sdk import Asset, dag, get_current_context, task

from lineage import assets
from lineage.settings import Settings

log = logging.getLogger(__name__)

RUNS, DATASET_ACCESSES, PENDING_EVENTS, MARTS, METADATA_CHANGES = (
    Asset(name=asset.name, uri=asset.uri)
    for asset in (assets.RUNS, assets.DATASET_ACCESSES, assets.PENDING_EVENTS, assets.MARTS, assets.METADATA_CHANGES)
)


@dag(
    schedule=Settings.from_env().schedule,
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    max_active_runs=1,
    tags=["lineage"],
    doc_md=__doc__,
    default_args={"retries": 0},
)
def lineage_compaction() -> None:
    @task
    def compact() -> dict[str, Any]:
        from spark_jobs.compaction.job import run_compaction
        from spark_jobs.field_lineage.job import run_field_lineage
        from spark_jobs.session import build_session
        from warehouse.db import connect, warehouse_url
        from warehouse.program_metadata_store import apply_program_metadata

        context = get_current_context()
        interval_end = context.get("data_interval_end") or context.get("logical_date") or pendulum.now("UTC")
        spark = build_session("lineage-compaction")
        summary = run_compaction(
            spark, interval_end=interval_end, database_url=warehouse_url(), dag_run_id=context["run_id"]
        )
        log.info("%s", summary.render())
        fields = run_field_lineage(spark, Settings.from_env({**os.environ, "LINEAGE_DATABASE_URL": warehouse_url()}))
        log.info("%s", fields.render())
        with connect(warehouse_url()) as conn:
            metadata = apply_program_metadata(conn, auto_create_namespaces=Settings.from_env().auto_create_namespaces)
        log.info("%s", metadata.render())
        return {**summary.as_dict(), "field_records": fields.records, "field_sets_added": fields.sets_added,
                "metadata_events": metadata.events, "metadata_change_ids": metadata.change_ids}

    @task
    def check(summary: dict[str, Any]) -> list[str]:
        from warehouse.db import warehouse_url
        from warehouse.quality import check_batch

        if not summary["files"]:
            log.info("no new files were compacted; nothing to check")
            return []
        results = check_batch(warehouse_url(), str(summary["batch_id"]))
        for result in results:
            log.info("%s", result.render())
        return [result.render() for result in results]

    @task
    def build_marts(summary: dict[str, Any], checks: list[str]) -> dict[str, int]:
        from warehouse.db import warehouse_url
        from warehouse.dbt_build import build_marts as dbt_build

        result = dbt_build(warehouse_url())
        log.info("dbt build: %d passed, %d warnings", result.passed, result.warned)
        return {"passed": result.passed, "warned": result.warned, "checks": len(checks)}

    @task(outlets=[RUNS, DATASET_ACCESSES, PENDING_EVENTS, MARTS])
    def publish(summary: dict[str, Any], marts: dict[str, int]) -> dict[str, Any]:
        from airflow.exceptions import AirflowSkipException

        log.info(
            "SUMMARY batch=%s files=%s events_read=%s compacted=%s duplicates=%s quarantined=%s "
            "runs_updated=%s accesses_added=%s field_records=%s metadata_events=%s metadata_changes=%s "
            "dbt_nodes_passed=%s",
            summary["batch_id"], summary["files"], summary["events_read"], summary["events_compacted"],
            summary["duplicates"], summary["quarantined"], summary["runs_touched"], summary["accesses_added"],
            summary["field_records"], summary["metadata_events"], len(summary["metadata_change_ids"]), marts["passed"],
        )
        if not summary["events_compacted"]:
            raise AirflowSkipException("nothing new was compacted; no asset events emitted")
        outlet_events = get_current_context()["outlet_events"]
        for asset in (RUNS, DATASET_ACCESSES, PENDING_EVENTS, MARTS):
            outlet_events[asset].extra = {"batch_id": summary["batch_id"], "events": summary["events_compacted"]}
        return summary

    @task(outlets=[METADATA_CHANGES])
    def notify_metadata_changes(summary: dict[str, Any], marts: dict[str, int]) -> list[int]:
        """One asset event carrying the ids of the metadata changes this run applied (after the
        marts, so a subscriber's search sees them)."""
        from airflow.exceptions import AirflowSkipException

        change_ids: list[int] = summary["metadata_change_ids"]
        if not change_ids:
            raise AirflowSkipException("no metadata changed; no asset event emitted")
        get_current_context()["outlet_events"][METADATA_CHANGES].extra = {
            "change_ids": change_ids, "source": "compaction", "batch_id": summary["batch_id"]}
        return change_ids

    summary = compact()
    checks = check(summary)
    marts = build_marts(summary, checks)
    publish(summary, marts)
    notify_metadata_changes(summary, marts)


lineage_compaction()

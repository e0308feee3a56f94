"""
### lineage_compaction

Compacts the raw lineage event logs into the warehouse, every hour by default
(`LINEAGE_SCHEDULE`). One task per stage, so logs and retries are per stage; each task
resolves the warehouse URL once (the Airflow connection `lineage_warehouse`) and calls one
function. Tasks are idempotent and retry with exponential backoff.

1. **compact**: a Spark job reads the raw log files not yet in the manifest (partitions up
   to the interval's end: on a local or HDFS root every hour partition whose folder changed
   since it was compacted, however old, so files delivered late are taken; on an object store
   `LINEAGE_LOOKBACK_HOURS`, and every partition once per `LINEAGE_LATE_SWEEP_HOURS`), validates each line
   against the event schema (bad lines go to `lineage.quarantine` with the reason),
   deduplicates by event id, COPYs into staging and merges in one transaction.
2. **field_lineage**: turns the new field operation records into operation sets, per-field
   paths and run rows (in the task for a small batch; Spark past
   `LINEAGE_FIELD_LINEAGE_IN_PROCESS_RECORDS` pending records).
3. **apply_metadata**: applies the SYSTEM metadata programs recorded (the later event wins by
   event time), each change with its record.
4. **propagate_tags**: each tag with a propagation policy (`LINEAGE_TAG_POLICIES`), from the
   fields it is assigned to, along the field lineage of the last `LINEAGE_TAG_PROPAGATION_DAYS`
   days, as far as the values flow (`lineage.propagated_tags`; docs/metadata-and-search.md).
5. **check**: the quality gate: Great Expectations over the rows of every batch not yet
   passed (this run's, and any earlier batch that failed); a failure fails the run (without
   retrying) before the marts are published, and every later run fails the same way until the
   data is fixed or the batch acknowledged (`python -m warehouse.pipeline.quality acknowledge`).
6. **build_marts**: `dbt build` of the marts (`lineage_marts.*`) and their tests, then the
   search index (`lineage.search_index`) rebuilt from its dbt view; skipped when nothing new
   was compacted, derived, applied or propagated. Under `dbt-ol` with
   `LINEAGE_DBT_OPENLINEAGE=true` (each model's run a child of this task's OpenLineage run
   when Airflow's provider is on).
7. **publish**: logs the SUMMARY (with the late files taken) and emits the Assets of the tables
   updated, with the batch id and the count of late files.
8. **notify**: emits `lineage_metadata_changes` with the ids of the metadata change records
   this run made; skipped when none.
9. **announce_changes**: one asset event per dataset whose lineage changed
   (`lineage_marts.lineage_changes`: edges and field sources that appeared, or disappeared on
   a day that is over), through the asset alias `lineage_dataset_changes`, each change once;
   skipped when none is due.
10. **announce_blast_radius** (beside announce_changes): one asset event per dataset a recent
   incident's bad writes reached (the bad dataset itself, then downstream up to 5 levels),
   through the asset alias `lineage_blast_radius`, each (incident, dataset) once; skipped when
   none is due.

Re-running a run for the same interval is a no-op.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

import pendulum
from airflow.sdk import Asset, AssetAlias, TriggerRule, dag, get_current_context, task

from lineage.settings import Settings
from warehouse.service import assets

log = logging.getLogger(__name__)

RUNS, DATASET_ACCESSES, PENDING_EVENTS, MARTS, METADATA_CHANGES = (
    Asset(name=asset.name, uri=asset.uri)
    for asset in (assets.RUNS, assets.DATASET_ACCESSES, assets.PENDING_EVENTS, assets.MARTS, assets.METADATA_CHANGES)
)
DATASET_CHANGES = AssetAlias(assets.DATASET_CHANGES)
BLAST_RADIUS = AssetAlias(assets.BLAST_RADIUS)


@dag(
    schedule=Settings.from_env().schedule,
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    max_active_runs=1,
    tags=["lineage"],
    doc_md=__doc__,
    default_args={"retries": 2, "retry_delay": timedelta(seconds=30), "retry_exponential_backoff": True,
                  "max_retry_delay": timedelta(minutes=10)},
)
def lineage_compaction() -> None:
    @task
    def compact() -> dict[str, Any]:
        from spark_jobs.compaction.job import compact_interval
        from warehouse.pipeline.airflow_connection import warehouse_url

        context = get_current_context()
        interval_end = context.get("data_interval_end") or context.get("logical_date") or pendulum.now("UTC")
        return compact_interval(warehouse_url(), interval_end, context["run_id"]).as_dict()

    @task
    def field_lineage() -> dict[str, int]:
        from spark_jobs.field_lineage.job import derive_pending
        from warehouse.pipeline.airflow_connection import warehouse_url

        derived = derive_pending(warehouse_url())
        return {"records": derived.records, "sets_added": derived.sets_added}

    @task
    def apply_metadata() -> dict[str, Any]:
        from warehouse.db.program_metadata_store import apply_pending
        from warehouse.pipeline.airflow_connection import warehouse_url

        applied = apply_pending(warehouse_url(), auto_create_namespaces=Settings.from_env().auto_create_namespaces)
        return {"events": applied.events, "change_ids": applied.change_ids}

    @task
    def propagate_tags() -> dict[str, int]:
        from warehouse.pipeline.airflow_connection import warehouse_url
        from warehouse.pipeline.tag_propagation import propagate_tags as propagate

        propagated = propagate(warehouse_url())
        return {"reached": propagated.reached, "stops": propagated.stops, "changed": propagated.changed}

    @task
    def check(compacted: dict[str, Any]) -> list[str]:
        from airflow.exceptions import AirflowFailException

        from lineage.errors import DataQualityError
        from warehouse.pipeline.airflow_connection import warehouse_url
        from warehouse.pipeline.quality import gate

        try:  # every batch not yet passed, this run's or an earlier failed one (a re-run checks it again)
            results = gate(warehouse_url())
        except DataQualityError as error:  # the data will not change on a retry
            raise AirflowFailException(str(error)) from error
        for result in results:
            log.info("%s", result.render())
        return [result.render() for result in results]

    @task
    def build_marts(compacted: dict[str, Any], derived: dict[str, int], applied: dict[str, Any],
                    propagated: dict[str, Any]) -> dict[str, int]:
        from airflow.exceptions import AirflowSkipException

        from warehouse.pipeline.airflow_connection import warehouse_url
        from warehouse.pipeline.dbt_build import airflow_parent_run
        from warehouse.pipeline.dbt_build import build_marts as dbt_build

        if not (compacted["events_compacted"] or derived["records"] or applied["events"] or propagated["changed"]):
            raise AirflowSkipException("nothing new was compacted, derived, applied or propagated; the marts are "
                                       "current")
        result = dbt_build(warehouse_url(), openlineage_parent=airflow_parent_run())
        log.info("%s", result.render())
        return {"passed": result.passed, "warned": result.warned}

    @task(outlets=[RUNS, DATASET_ACCESSES, PENDING_EVENTS, MARTS], trigger_rule=TriggerRule.NONE_FAILED)
    def publish(compacted: dict[str, Any], derived: dict[str, int], applied: dict[str, Any],
                marts: dict[str, int] | None) -> dict[str, Any]:
        from airflow.exceptions import AirflowSkipException

        log.info(
            "SUMMARY batch=%s files=%s late_files=%s events_read=%s compacted=%s duplicates=%s quarantined=%s "
            "runs_updated=%s accesses_added=%s field_records=%s metadata_events=%s metadata_changes=%s "
            "dbt_nodes_passed=%s late_checked=%s",
            compacted["batch_id"], compacted["files"], compacted.get("late_files", 0), compacted["events_read"],
            compacted["events_compacted"],
            compacted["duplicates"], compacted["quarantined"], compacted["runs_touched"], compacted["accesses_added"],
            derived["records"], applied["events"], len(applied["change_ids"]), (marts or {}).get("passed", 0),
            compacted.get("late_checked", True),
        )
        if compacted.get("late_files"):
            log.warning("%s late files (hour partitions older than the lookback) were taken in batch %s",
                        compacted["late_files"], compacted["batch_id"])
        if not compacted["events_compacted"]:
            raise AirflowSkipException("nothing new was compacted; no asset events emitted")
        outlet_events = get_current_context()["outlet_events"]
        for asset in (RUNS, DATASET_ACCESSES, PENDING_EVENTS, MARTS):
            outlet_events[asset].extra = {"batch_id": compacted["batch_id"], "events": compacted["events_compacted"],
                                          "late_files": compacted.get("late_files", 0)}
        return compacted

    @task(outlets=[METADATA_CHANGES], trigger_rule=TriggerRule.NONE_FAILED)
    def notify(compacted: dict[str, Any], applied: dict[str, Any]) -> list[int]:
        """One asset event carrying the ids of the metadata changes this run applied (after the
        marts, so a subscriber's search sees them)."""
        from airflow.exceptions import AirflowSkipException

        change_ids: list[int] = applied["change_ids"]
        if not change_ids:
            raise AirflowSkipException("no metadata changed; no asset event emitted")
        get_current_context()["outlet_events"][METADATA_CHANGES].extra = {
            "change_ids": [*change_ids], "source": "compaction", "batch_id": compacted["batch_id"]}
        return change_ids

    @task(outlets=[DATASET_CHANGES], trigger_rule=TriggerRule.NONE_FAILED)
    def announce_changes() -> int:
        """One asset event per dataset and day whose lineage changed, with the changes in its extra."""
        import psycopg
        from airflow.exceptions import AirflowSkipException

        from warehouse.db.connection import connect
        from warehouse.pipeline.airflow_connection import warehouse_url
        from warehouse.pipeline.change_announcements import due, mark_announced

        context = get_current_context()
        today = (context.get("data_interval_end") or context.get("logical_date") or pendulum.now("UTC")).date()
        with connect(warehouse_url()) as conn:
            try:
                entries = due(conn, today)
            except psycopg.errors.UndefinedTable as error:  # the marts were never built
                raise AirflowSkipException("the marts are not built yet; nothing to announce") from error
            if not entries:
                raise AirflowSkipException("no lineage change is due; no asset event emitted")
            for entry in entries:
                named = assets.dataset_asset(entry.namespace, entry.dataset_type, entry.dataset)
                context["outlet_events"][DATASET_CHANGES].add(Asset(name=named.name, uri=named.uri),
                                                              extra=entry.extra())
            announced = mark_announced(conn, entries)
            conn.commit()
        log.info("announced %s lineage changes of %s datasets", announced, len(entries))
        return announced

    @task(outlets=[BLAST_RADIUS], trigger_rule=TriggerRule.NONE_FAILED)
    def announce_blast_radius() -> int:
        """One asset event per dataset a recent incident's bad writes reached, each once."""
        from airflow.exceptions import AirflowSkipException

        from warehouse.db.connection import connect
        from warehouse.pipeline.airflow_connection import warehouse_url
        from warehouse.pipeline.blast_announcements import due, mark_announced

        context = get_current_context()
        now = context.get("data_interval_end") or context.get("logical_date") or pendulum.now("UTC")
        with connect(warehouse_url()) as conn:
            affected = due(conn, now)
            if not affected:
                raise AirflowSkipException("no incident reached a dataset not announced yet; no asset event emitted")
            for item in affected:
                named = assets.affected_asset(item.dataset.namespace, item.dataset.type, item.dataset.name)
                try:
                    asset = Asset(name=named.name, uri=named.uri)
                except ValueError as error:  # a name Airflow refuses (too long): said, not retried for ever
                    log.warning("dataset %s: no asset event (%s)", item.dataset.id[:200], error)
                    continue
                context["outlet_events"][BLAST_RADIUS].add(asset, extra=item.extra())
            announced = mark_announced(conn, affected)
            conn.commit()
        log.info("announced %s datasets reached by %s incidents", announced,
                 len({item.incident.incident_id for item in affected}))
        return announced

    compacted = compact()
    derived = field_lineage()
    applied = apply_metadata()
    propagated = propagate_tags()
    checks = check(compacted)
    marts = build_marts(compacted, derived, applied, propagated)
    published = publish(compacted, derived, applied, marts)
    compacted >> derived >> applied >> propagated >> checks >> marts >> published
    published >> notify(compacted, applied) >> [announce_changes(), announce_blast_radius()]


lineage_compaction()

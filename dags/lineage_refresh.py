"""
### lineage_refresh

Lineage within a minute of a run's end: runs whenever a new raw log file appears, and compacts
it, checks it and rebuilds the marts in **one task** (`refresh`), without starting Spark for a
small batch. On with `LINEAGE_REFRESH_ON_NEW_FILES=true` (a local or mounted
`LINEAGE_LOG_ROOT`); it needs Airflow's triggerer (`airflow standalone` runs one).

- An AssetWatcher on the asset `lineage_raw_log` lists the current and previous hour partitions
  every second (`warehouse.pipeline.new_files_trigger`); files arriving during a run make one
  more run (`max_active_runs=1`).
- **refresh** (`warehouse.pipeline.refresh`): compaction, field lineage, SYSTEM metadata, the quality gate
  and `dbt build`, one after the other; emits the same assets as `lineage_compaction`'s publish.
  It waits while another compaction holds the warehouse; a batch failing its checks fails it.
- **notify**: emits `lineage_metadata_changes` with the ids of the metadata changes applied;
  skipped when none.

`lineage_compaction` stays on its schedule for late files (its lookback), backlogs too large
for one process, and the marts' own lineage under dbt-ol. This DAG sends no OpenLineage events
of its own: they would be new files, and start it again.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

import pendulum
from airflow.sdk import Asset, AssetWatcher, dag, get_current_context, task

from lineage.settings import Settings
from warehouse.service import assets

log = logging.getLogger(__name__)
SETTINGS = Settings.from_env()

RUNS, DATASET_ACCESSES, PENDING_EVENTS, MARTS, METADATA_CHANGES = (
    Asset(name=asset.name, uri=asset.uri)
    for asset in (assets.RUNS, assets.DATASET_ACCESSES, assets.PENDING_EVENTS, assets.MARTS, assets.METADATA_CHANGES)
)


def raw_log_asset(log_root: str) -> Asset:
    """The raw log root as an asset, watched for new files."""
    from spark_jobs.compaction.listing import local_root
    from warehouse.pipeline.new_files_trigger import NewLogFilesTrigger

    root = local_root(log_root)
    if root is None:
        raise ValueError(f"LINEAGE_REFRESH_ON_NEW_FILES needs a local or mounted LINEAGE_LOG_ROOT, not {log_root!r}: "
                         "on object stores, shorten LINEAGE_SCHEDULE instead")
    return Asset(name="lineage_raw_log", uri=f"file://{root}",
                 watchers=[AssetWatcher(name="lineage_new_log_files", trigger=NewLogFilesTrigger(root))])


def lineage_refresh_dag() -> Any:
    @dag(
        dag_id="lineage_refresh",
        schedule=[raw_log_asset(SETTINGS.log_root)],
        start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
        catchup=False,
        max_active_runs=1,
        tags=["lineage"],
        doc_md=__doc__,
        default_args={"retries": 2, "retry_delay": timedelta(seconds=5)},
    )
    def lineage_refresh() -> None:
        @task(outlets=[RUNS, DATASET_ACCESSES, PENDING_EVENTS, MARTS])
        def refresh() -> dict[str, Any]:
            from airflow.exceptions import AirflowFailException, AirflowSkipException

            from lineage.errors import DataQualityError
            from warehouse.pipeline.airflow_connection import warehouse_url
            from warehouse.pipeline.refresh import refresh as run_refresh

            try:
                summary = run_refresh(warehouse_url(), dag_run_id=get_current_context()["run_id"])
            except DataQualityError as error:  # the data will not change on a retry
                raise AirflowFailException(str(error)) from error
            log.info("%s", summary.render())
            if not summary.changed:
                raise AirflowSkipException("nothing new; no asset events emitted")
            batch = summary.compacted.batch_id if summary.compacted else None
            events = summary.compacted.events_compacted if summary.compacted else 0
            outlet_events = get_current_context()["outlet_events"]
            for asset in (RUNS, DATASET_ACCESSES, PENDING_EVENTS, MARTS):
                outlet_events[asset].extra = {"batch_id": batch, "events": events}
            return {"batch_id": batch, "change_ids": summary.change_ids, "seconds": summary.seconds}

        @task(outlets=[METADATA_CHANGES])
        def notify(refreshed: dict[str, Any]) -> list[int]:
            from airflow.exceptions import AirflowSkipException

            change_ids: list[int] = refreshed["change_ids"]
            if not change_ids:
                raise AirflowSkipException("no metadata changed; no asset event emitted")
            get_current_context()["outlet_events"][METADATA_CHANGES].extra = {
                "change_ids": [*change_ids], "source": "refresh", "batch_id": refreshed["batch_id"]}
            return change_ids

        notify(refresh())  # type: ignore[arg-type]  # an XComArg stands for the dict

    built = lineage_refresh()
    _no_openlineage_events(built)
    return built


def _no_openlineage_events(built: Any) -> None:
    """Airflow's OpenLineage provider (when installed) sends nothing for this DAG."""
    try:
        from airflow.providers.openlineage.api.emission_policy import extend_global_openlineage_emission_policy
    except ImportError:
        return
    extend_global_openlineage_emission_policy(built, emit=False)


if SETTINGS.refresh_on_new_files:
    lineage_refresh_dag()

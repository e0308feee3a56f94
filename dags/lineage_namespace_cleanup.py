"""
### lineage_namespace_cleanup

Removes what a deleted namespace left behind ("Namespace Deletion" and "Scheduling Logic" of
the *System Applications (CDAP 6.0)* design). `DELETE /lineage/v3/namespaces/{ns}` removes the
namespace at once and emits an event of the Asset `lineage_namespace_deletions`; this DAG is
scheduled on that asset:

1. **clean**: for every deletion not cleaned yet (so a missed event is caught by the next),
   one transaction removes the namespace's metadata, change records, schema versions, runs,
   accesses, field lineage and pending events from before the deletion. A namespace
   re-created since keeps what it recorded after.
2. **build_marts**: `dbt build --full-refresh` and the search index rebuilt, so the marts (the
   incremental lineage walk too) no longer hold the removed records. Deletions are rare; a
   full rebuild keeps it simple.
3. **finish**: marks the deletions cleaned, which lifts the race guard (until then, reads of
   a re-created namespace hide what was created before its new creation time), re-derives the
   namespace's search entries and logs the summary. Emits `lineage_marts`.

Skipped when no deletion is pending. The warehouse is reached through the Airflow connection
`lineage_warehouse`.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

import pendulum
from airflow.sdk import Asset, dag, get_current_context, task

from warehouse.service import assets

log = logging.getLogger(__name__)

NAMESPACE_DELETIONS, MARTS = (Asset(name=asset.name, uri=asset.uri)
                              for asset in (assets.NAMESPACE_DELETIONS, assets.MARTS))


@dag(
    schedule=[NAMESPACE_DELETIONS],
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    max_active_runs=1,
    tags=["lineage"],
    doc_md=__doc__,
    default_args={"retries": 2, "retry_delay": timedelta(seconds=30), "retry_exponential_backoff": True,
                  "max_retry_delay": timedelta(minutes=10)},
)
def lineage_namespace_cleanup() -> None:
    @task
    def clean() -> dict[str, Any]:
        from airflow.exceptions import AirflowSkipException

        from warehouse.pipeline import namespace_cleanup
        from warehouse.pipeline.airflow_connection import warehouse_url

        summaries = namespace_cleanup.clean_pending(warehouse_url())
        for summary in summaries:
            log.info("%s", summary.render())
        if not summaries:
            raise AirflowSkipException("no namespace deletion awaits its cleanup")
        # Keyed by deletion id (a string: XCom is JSON), so a namespace deleted twice before one
        # run keeps both summaries.
        return {"deletion_ids": [s.deletion_id for s in summaries],
                "namespaces": {str(s.deletion_id): s.namespace for s in summaries},
                "removed": {str(s.deletion_id): s.removed for s in summaries}}

    @task
    def build_marts(cleaned: dict[str, Any]) -> int:
        from warehouse.pipeline.airflow_connection import warehouse_url
        from warehouse.pipeline.dbt_build import airflow_parent_run
        from warehouse.pipeline.dbt_build import build_marts as dbt_build

        result = dbt_build(warehouse_url(), full_refresh=True, openlineage_parent=airflow_parent_run())
        log.info("%s", result.render())
        return result.passed

    @task(outlets=[MARTS])
    def finish(cleaned: dict[str, Any], passed: int) -> dict[str, Any]:
        from warehouse.pipeline import namespace_cleanup
        from warehouse.pipeline.airflow_connection import warehouse_url

        namespace_cleanup.finish(warehouse_url(), cleaned["deletion_ids"])
        total = sum(sum(per_table.values()) for per_table in cleaned["removed"].values())
        namespaces = sorted(set(cleaned["namespaces"].values()))
        log.info("SUMMARY deletions=%s namespaces=%s rows_removed=%d dbt_nodes_passed=%d",
                 cleaned["deletion_ids"], namespaces, total, passed)
        get_current_context()["outlet_events"][MARTS].extra = {"cleaned_namespaces": namespaces}
        return cleaned

    cleaned = clean()
    finish(cleaned, build_marts(cleaned))


lineage_namespace_cleanup()

"""Namespace lifecycle end to end (seed 003): records in a namespace through the real
compaction, the API and dbt; DELETE emits the asset event; re-created at once, the namespace
shows nothing of before (the race guard); ``airflow dags test lineage_namespace_cleanup``
removes the old records, keeps the new ones and lifts the guard."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from spark_jobs.compaction.job import run_compaction
from spark_jobs.field_lineage.job import run_field_lineage
from tests.airflow_support import airflow_dags_test, airflow_env, ensure_dags_serialized, libpq, logged_in_client
from tests.dags.test_compaction_dag import query
from tests.factories import access, event, write_log
from warehouse.db import namespace_store
from warehouse.db.connection import connect
from warehouse.db.program_metadata_store import apply_program_metadata
from warehouse.pipeline.dbt_build import build_marts

NS = "/v3/namespaces/sales"
WINDOW = {"start": "0", "end": "now"}
RUN = {"application": "Orders", "program_type": "spark", "program": "Load", "run_id": "old-run"}
TABLES = ("lineage.metadata", "lineage.metadata_changes", "lineage.dataset_schema_versions", "lineage.runs",
          "lineage.dataset_accesses", "lineage.programs", "lineage.datasets", "lineage.field_operation_sets",
          "lineage.field_lineage_runs", "lineage.pending_events")


def counts(url: str) -> dict[str, int]:
    found = {}
    for table in TABLES:
        column = "destination_namespace" if "field_operation_sets" in table else "namespace"
        if table in ("lineage.metadata_changes", "lineage.field_lineage_runs"):
            where = ("entity_key like 'namespace=sales,%'" if "changes" in table else
                     "dataset_key in (select dataset_key from lineage.datasets where namespace = 'sales')")
        else:
            where = f"{column} = 'sales'"
        found[table] = query(url, f"select count(*) from {table} where {where}")[0][0]
    return found


def ok(response: Any) -> Any:
    assert response.status_code == 200, response.text
    return response.json()


@pytest.fixture
def api(warehouse_db: str, airflow_api: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    with logged_in_client(warehouse_db, monkeypatch, airflow_api=airflow_api) as client:  # asset events: real API
        yield client


def test_delete_recreate_and_cleanup(warehouse_db: str, log_root: Path, settings_for,  # type: ignore[no-untyped-def]
                                     api: TestClient) -> None:
    ensure_dags_serialized()
    settings = settings_for(warehouse_db)
    ok(api.put(NS, json={"description": "first life"}))
    write_log(log_root, [
        event("run_start", namespace="sales", run=RUN, event_time="2026-11-21T05:00:00Z"),
        access("raw_orders", namespace="sales", run=RUN),
        access("orders", "write", namespace="sales", run=RUN),
        event("field_operations", {"destination": {"name": "orders"}, "operations": [
            {"name": "read", "inputs": [{"source": {"name": "raw_orders"}}], "outputs": ["id"]}],
            "destination_fields": ["id"]}, namespace="sales", run=RUN),
        event("metadata_change", {"entity": [["namespace", "sales"], ["dataset", "orders"]],
                                  "operation": "add_tags", "tags": ["from-a-program"]}, namespace="sales", run=RUN),
        event("run_end", {"status": "completed"}, namespace="sales", run=RUN, event_time="2026-11-21T05:05:00Z"),
    ])
    run_compaction(None, interval_end=datetime(2026, 11, 21, 6, tzinfo=UTC), settings=settings)
    run_field_lineage(None, settings)
    with connect(warehouse_db) as conn:
        apply_program_metadata(conn)
    ok(api.post(f"{NS}/datasets/orders/metadata/properties", json={"owner": "old-team"}))
    ok(api.put(f"{NS}/datasets/orders/properties", json={"schema": {"fields": [{"name": "id", "type": "int"}]}}))
    build_marts(warehouse_db)
    assert query(warehouse_db, "select count(*) from lineage_marts.lineage_walk")[0][0] > 0
    assert ok(api.get(f"{NS}/metadata/search", params={"query": "old*"}))["total"] == 1
    before = counts(warehouse_db)
    assert all(before.values()), before

    # delete: gone at once, search forgets it, the asset event schedules the cleanup
    deleted = ok(api.delete(NS))
    assert deleted["assetEvent"] is True and deleted["namespace"] == "sales"
    assert api.get(NS).status_code == 404
    assert api.get(f"{NS}/datasets/orders/metadata").status_code == 404
    assert ok(api.get("/v3/metadata/search", params={"query": "orders"}))["total"] == 0
    airflow_events = query(airflow_env()["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"],
                           "select e.extra from asset_event e join asset a on a.id = e.asset_id "
                           "where a.name = 'lineage_namespace_deletions' order by e.id desc limit 1")
    assert airflow_events[0][0]["namespace"] == "sales"
    assert airflow_events[0][0]["deletion_id"] == deleted["deletionId"]

    # re-created at once: nothing from before shows, what is new does
    ok(api.put(NS, json={"description": "second life"}))
    metadata = ok(api.get(f"{NS}/datasets/orders/metadata"))["metadata"]
    assert metadata == {"USER": {"tags": [], "properties": {}}, "SYSTEM": {"tags": [], "properties": {}}}
    assert ok(api.get(f"{NS}/datasets/orders/properties")) == {"schema": None, "version": None}
    assert ok(api.get(f"{NS}/datasets/orders/lineage", params=WINDOW))["relations"] == []
    assert ok(api.get(f"{NS}/datasets/orders/metadata/history", params=WINDOW))["changes"] == []
    assert api.get(f"{NS}/apps/Orders/spark/Load/runs/old-run/accesses").status_code == 404
    assert ok(api.get(f"{NS}/metadata/search", params={"query": "old*"}))["total"] == 0
    ok(api.post(f"{NS}/datasets/orders/metadata/properties", json={"owner": "new-team"}))
    assert ok(api.get(f"{NS}/datasets/orders/metadata"))["metadata"]["USER"]["properties"] == {"owner": "new-team"}
    with connect(warehouse_db) as conn:
        assert namespace_store.visible_since(conn, "sales") is not None

    # the cleanup DAG removes the old records, keeps the new, lifts the guard
    completed = subprocess.run(
        [*airflow_dags_test(), "lineage_namespace_cleanup", "2026-11-21T07:00:00+00:00"],
        env=airflow_env(AIRFLOW_CONN_LINEAGE_WAREHOUSE=libpq(warehouse_db), LINEAGE_DATABASE_URL=warehouse_db),
        capture_output=True, text=True, timeout=600, check=False)
    output = completed.stdout + completed.stderr
    assert completed.returncode == 0 and "state=success" in output, output[-4000:]
    assert "SUMMARY deletions=[" in output
    after = counts(warehouse_db)
    assert after["lineage.metadata"] == 1  # owner=new-team, written after the re-creation
    assert after["lineage.metadata_changes"] == 1
    assert {table: n for table, n in after.items() if table not in ("lineage.metadata", "lineage.metadata_changes")
            } == dict.fromkeys(TABLES[2:], 0)
    with connect(warehouse_db) as conn:
        assert namespace_store.visible_since(conn, "sales") is None
        history = namespace_store.deletions(conn, "sales")
    assert history[0].cleaned_at is not None and history[0].removed is not None
    assert history[0].removed["dataset_accesses"] == 2
    assert query(warehouse_db, "select count(*) from lineage_marts.lineage_walk") == [(0,)]  # only sales had lineage
    found = ok(api.get(f"{NS}/metadata/search", params={"query": "new*"}))
    assert [r["entity"]["details"][-1]["value"] for r in found["results"]] == ["orders"]
    assert ok(api.get(f"{NS}/deletions"))[0]["deletionId"] == deleted["deletionId"]


def test_default_cannot_be_deleted_and_unknown_is_404(api: TestClient) -> None:
    refused = api.delete("/v3/namespaces/default")
    assert refused.status_code == 409 and "cannot be deleted" in refused.json()["message"]
    assert api.delete("/v3/namespaces/nowhere").status_code == 404
    assert api.get("/v3/namespaces/default").status_code == 200

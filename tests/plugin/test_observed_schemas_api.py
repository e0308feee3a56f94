"""Observed schemas through the schema versions API (issue 30): a table Airflow's OpenLineage
provider saw recreated with other columns on three days is three observed versions, each with
what it changed; a schema declared through the API is still held to the compatibility rule,
and its version says what it changed too. The events are the provider's recorded ones
(``tests/warehouse/test_observed_schemas.py``), compacted in process into real PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from tests.airflow_support import logged_in_client
from tests.warehouse.test_observed_schemas import DAY, DAYS, TABLE, observe, provider_task_run
from warehouse.db.connection import connect
from warehouse.db.grant_store import put_grant
from warehouse.service.authorization import Privilege

PATH = f"/v3/namespaces/default/datasets/{quote(TABLE, safe='')}"


@pytest.fixture
def api(warehouse_db: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    with logged_in_client(warehouse_db, monkeypatch) as client:
        yield client


def declared(*spec: tuple[str, str]) -> dict[str, Any]:
    return {"schema": {"fields": [{"name": name, "type": kind, "nullable": True} for name, kind in spec]}}


def test_each_observed_change_is_a_version_and_a_declared_one_is_still_checked(
        api: TestClient, warehouse_db: str, log_root: Path, settings_for) -> None:  # type: ignore[no-untyped-def]
    settings = settings_for(warehouse_db)
    for day, columns in enumerate(DAYS):
        observe(warehouse_db, log_root, settings, *provider_task_run(day, columns))
    listed = api.get(f"{PATH}/schemas")
    assert listed.status_code == 200, listed.text
    history = listed.json()["versions"]
    assert [(v["version"], v["source"], [f["name"] for f in v["schema"]["fields"]]) for v in history] == [
        (3, "observed", ["day_of_week", "order_date", "orders_placed"]),
        (2, "observed", ["order_day_of_week", "order_date", "orders_placed"]),
        (1, "observed", ["order_day_of_week", "order_placed_on", "orders_placed"])]
    assert [v["eventTime"] for v in history] == [int((DAY + timedelta(days=day)).timestamp()) for day in (2, 1, 0)]
    assert [v["changes"] for v in history] == [
        {"added": [{"name": "day_of_week", "type": "text", "nullable": True}],
         "removed": [{"name": "order_day_of_week", "type": "varchar", "nullable": True}],
         "retyped": [], "nullability": [], "reordered": False},
        {"added": [{"name": "order_date", "type": "date", "nullable": True}],
         "removed": [{"name": "order_placed_on", "type": "timestamp", "nullable": True}],
         "retyped": [{"name": "orders_placed", "before": "int4", "after": "int8"}], "nullability": [],
         "reordered": False},
        None]
    assert api.get(f"{PATH}/properties").json()["version"] == 3
    assert api.get(f"{PATH}/metadata").json()["links"]["schemas"] == PATH.lstrip("/") + "/schemas"  # the page's

    refused = api.put(f"{PATH}/properties", json=declared(("orders_placed", "int8")))
    assert refused.status_code == 409
    assert refused.json()["incompatibilities"] == ["field 'day_of_week' is removed", "field 'order_date' is removed"]
    assert len(api.get(f"{PATH}/schemas").json()["versions"]) == 3
    grown = api.put(f"{PATH}/properties", json=declared(("day_of_week", "text"), ("order_date", "date"),
                                                        ("orders_placed", "int8"), ("note", "text")))
    assert grown.status_code == 200 and grown.json()["version"] == 4
    latest = api.get(f"{PATH}/schemas").json()["versions"][0]
    assert (latest["source"], latest["updater"], latest["changes"]) == ("declared", "admin", {
        "added": [{"name": "note", "type": "text", "nullable": True}], "removed": [],
        "retyped": [], "nullability": [], "reordered": False})
    assert latest["eventTime"] >= history[0]["eventTime"]
    assert history[0]["updater"].startswith("namespace=default,application=http://airflow-host:8081,")


def test_a_reader_of_the_dataset_but_not_of_the_program_sees_the_updater_hidden(
        warehouse_db: str, log_root: Path, settings_for, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    observe(warehouse_db, log_root, settings_for(warehouse_db), *provider_task_run(0, DAYS[0]))
    with connect(warehouse_db) as conn:
        put_grant(conn, "table-reader", f"namespace=default,dataset={TABLE}", "default", Privilege.READ, "test")
    with logged_in_client(warehouse_db, monkeypatch, username="table-reader", role="viewer") as viewer:
        listed = viewer.get(f"{PATH}/schemas")
    assert listed.status_code == 200, listed.text
    assert [v["updater"] for v in listed.json()["versions"]] == ["hidden"]  # the provider's task run
    assert "airflow-host" not in listed.text

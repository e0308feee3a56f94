"""Metadata through the API on real PostgreSQL: scopes, operations, versions, special
characters, change records, read-your-writes, concurrent writers, errors."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.airflow_support import logged_in_client

DS = "/v3/namespaces/default/datasets/purchases/metadata"


@pytest.fixture
def api(warehouse_db: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    with logged_in_client(warehouse_db, monkeypatch) as client:
        yield client


def ok(response: Any) -> Any:
    assert response.status_code == 200, response.text
    return response.json() if response.content else None


def test_tags_and_properties_are_added_read_and_removed_one_by_one_and_all(api: TestClient) -> None:
    ok(api.post(f"{DS}/properties", json={"owner": "sales", "tier": "gold"}))
    ok(api.post(f"{DS}/tags", json=["PII", "finance"]))
    body = ok(api.get(DS))
    assert body["metadata"]["USER"] == {"tags": ["PII", "finance"], "properties": {"owner": "sales", "tier": "gold"}}
    assert body["metadata"]["SYSTEM"] == {"tags": [], "properties": {}}
    assert ok(api.get(f"{DS}/tags", params={"scope": "user"})) == {"USER": ["PII", "finance"]}
    ok(api.delete(f"{DS}/tags/PII"))
    ok(api.delete(f"{DS}/properties/tier"))
    assert ok(api.get(DS))["metadata"]["USER"] == {"tags": ["finance"], "properties": {"owner": "sales"}}
    ok(api.delete(f"{DS}/properties"))
    assert ok(api.get(f"{DS}/properties"))["USER"] == {}
    ok(api.post(f"{DS}/tags", json=["again"]))
    ok(api.delete(DS))
    assert ok(api.get(DS))["metadata"]["USER"] == {"tags": [], "properties": {}}


def test_every_change_is_recorded_with_its_diff(api: TestClient) -> None:
    ok(api.post(f"{DS}/properties", json={"owner": "sales"}))
    ok(api.post(f"{DS}/properties", json={"owner": "marketing", "sla": "1h"}))
    ok(api.post(f"{DS}/properties", json={"owner": "marketing"}))  # no change: no record
    ok(api.delete(f"{DS}/properties/sla"))
    changes = ok(api.get(f"{DS}/history"))["changes"]
    assert [(c["additions"], c["deletions"]) for c in changes] == [
        ({"tags": [], "properties": {"owner": "sales"}}, {"tags": [], "properties": {}}),
        ({"tags": [], "properties": {"owner": "marketing", "sla": "1h"}},
         {"tags": [], "properties": {"owner": "sales"}}),
        ({"tags": [], "properties": {}}, {"tags": [], "properties": {"sla": "1h"}}),
    ]
    assert changes[1]["previous"]["properties"] == {"owner": "sales"}
    assert changes[1]["updated"]["properties"] == {"owner": "marketing", "sla": "1h"}
    assert {c["updater"] for c in changes} == {"admin"}


def test_special_characters_round_trip_in_entities_values_and_tags(api: TestClient) -> None:
    value = "a, b: 'c' \"d\" % _ \\ é 数据 <script>alert(1)</script>"
    field = "/v3/namespaces/default/datasets/purchases/field/emp%2Cname/metadata"
    ok(api.post(f"{field}/properties", json={"note": value}))
    ok(api.post(f"{field}/tags", json=[value]))
    body = ok(api.get(field))
    assert body["entity"] == {"type": "field", "details": [
        {"key": "namespace", "value": "default"}, {"key": "dataset", "value": "purchases"},
        {"key": "field", "value": "emp,name"}]}
    assert body["metadata"]["USER"] == {"tags": [value], "properties": {"note": value}}


def test_application_metadata_without_a_version_applies_to_every_version(api: TestClient) -> None:
    app = "/v3/namespaces/default/apps/PurchaseHistory/metadata"
    ok(api.post(f"{app}/tags", json=["all-versions"]))
    ok(api.post(f"{app}/tags", params={"version": "2.0"}, json=["dev"]))
    assert ok(api.get(f"{app}/tags", params={"version": "2.0"}))["USER"] == ["all-versions", "dev"]
    assert ok(api.get(f"{app}/tags", params={"version": "1.0"}))["USER"] == ["all-versions"]
    assert ok(api.get(f"{app}/tags"))["USER"] == ["all-versions"]


def test_programs_custom_and_external_entities(api: TestClient) -> None:
    program = "/v3/namespaces/default/apps/PurchaseHistory/spark/Builder/metadata"
    ok(api.post(f"{program}/tags", json=["nightly"]))
    assert ok(api.get(program))["entity"]["type"] == "program"
    file = "/v3/namespaces/default/datasets/fs/partition/p1/file/f1/metadata"
    ok(api.post(f"{file}/properties", json={"rows": "10"}))
    assert ok(api.get(file))["entity"]["type"] == "file"
    external = "/v3/external/database/myDatabase/table/myTable/metadata"
    ok(api.post(f"{external}/tags", json=["mysql"]))
    assert ok(api.get(external))["metadata"]["USER"]["tags"] == ["mysql"]


def test_concurrent_writers_lose_nothing(api: TestClient) -> None:
    def add(index: int) -> None:
        ok(api.post(f"{DS}/tags", json=[f"t{index}"]))

    threads = [threading.Thread(target=add, args=(index,)) for index in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert ok(api.get(f"{DS}/tags"))["USER"] == sorted(f"t{index}" for index in range(12))
    assert len(ok(api.get(f"{DS}/history"))["changes"]) == 12


@pytest.mark.parametrize(("method", "path", "body", "status", "message"), [
    ("post", f"{DS}/tags", {"not": "a list"}, 400, "tags must be a JSON list"),
    ("post", f"{DS}/properties", ["x"], 400, "properties must be a JSON object"),
    ("post", f"{DS}/properties", {"k": 1}, 400, "must have a string value"),
    ("post", f"{DS}/properties", {"k": "v" * 10_001}, 400, "over the limit of 10000"),
    ("post", f"{DS}/tags", ["t" * 257], 400, "over the limit of 256"),
    ("post", f"{DS}/tags", [""], 400, "must not be empty"),
    ("get", f"{DS}", None, 400, None),
    ("get", "/v3/namespaces/nowhere/datasets/d/metadata", None, 404, "namespace 'nowhere' not found"),
    ("get", "/v3/namespaces/default/datasets/d/field/metadata", None, 400, "has no name"),
    ("get", "/v3/external/database/metadata", None, 400, "has no name"),
])
def test_malformed_requests_are_400_and_unknown_namespaces_404(
    api: TestClient, method: str, path: str, body: Any, status: int, message: str | None
) -> None:
    if message is None:  # a bad scope
        response = api.get(path, params={"scope": "everyone"})
        message = "scope 'everyone' is not one of USER, SYSTEM"
    else:
        response = api.request(method.upper(), path, json=body)
    assert response.status_code == status, response.text
    assert message in response.json()["message"]
    assert ok(api.get(DS))["metadata"]["USER"] == {"tags": [], "properties": {}}  # nothing stored


def test_each_api_change_emits_an_asset_event_with_its_change_id(warehouse_db: str, airflow_api: str,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Through Airflow's REST API (a real api-server), as the caller."""
    import sqlalchemy

    from tests.airflow_support import airflow_env, ensure_dags_serialized

    ensure_dags_serialized()
    with logged_in_client(warehouse_db, monkeypatch, airflow_api=airflow_api) as api:
        added = ok(api.post(f"{DS}/tags", json=["notify-me"]))
        assert added["assetEvent"] is True
        unchanged = ok(api.post(f"{DS}/tags", json=["notify-me"]))
    assert unchanged == {"changeId": None, "assetEvent": False}  # nothing changed, nothing announced
    engine = sqlalchemy.create_engine(airflow_env()["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"])
    with engine.connect() as conn:
        extras = conn.execute(sqlalchemy.text(
            "select e.extra from asset_event e join asset a on a.id = e.asset_id "
            "where a.name = 'lineage_metadata_changes' order by e.id desc limit 1")).scalar_one()
    engine.dispose()
    # Airflow's REST API marks the events it records (from_rest_api)
    assert extras == {"change_ids": [added["changeId"]], "source": "api", "updater": "admin", "from_rest_api": True}


def test_without_airflow_the_change_is_stored_and_no_asset_event_is_claimed(api: TestClient) -> None:
    added = ok(api.post(f"{DS}/tags", json=["quiet"]))  # the fixture's client has no Airflow API
    assert added["assetEvent"] is False and added["changeId"] is not None
    assert ok(api.get(f"{DS}/tags"))["USER"] == ["quiet"]

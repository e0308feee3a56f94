"""Dataset schemas through the API on real PostgreSQL (seed 002 "Updatable Datasets"): versions,
409 listing every incompatibility with nothing changed, bad bodies, fields without lineage."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from fastapi.testclient import TestClient

from tests.airflow_support import logged_in_client

DS = "/v3/namespaces/default/datasets/orders"


@pytest.fixture
def api(warehouse_db: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    with logged_in_client(warehouse_db, monkeypatch) as client:
        yield client


def fields(*spec: tuple[str, str, bool]) -> dict[str, Any]:
    return {"schema": {"fields": [{"name": n, "type": t, "nullable": nullable} for n, t, nullable in spec]}}


V1 = fields(("id", "int", False), ("amount", "float", True))
V2 = fields(("id", "long", False), ("amount", "double", True), ("coupon", "string", True))


def test_compatible_updates_are_versioned_and_the_schema_is_the_system_property(api: TestClient) -> None:
    first = api.put(f"{DS}/properties", json=V1)
    assert first.status_code == 200, first.text
    assert first.json()["version"] == 1 and first.json()["changeId"] is not None
    assert api.put(f"{DS}/properties", json=V2).json()["version"] == 2
    again = api.put(f"{DS}/properties", json={"schema": orjson.dumps(V2["schema"]).decode()}).json()
    assert again["version"] == 2 and again["changeId"] is None  # the same schema, as a JSON string: no change
    assert api.get(f"{DS}/properties").json() == {"schema": V2["schema"], "version": 2}
    history = api.get(f"{DS}/schemas").json()["versions"]
    assert [(v["version"], v["schema"], v["updater"]) for v in history] == [
        (2, V2["schema"], "admin"), (1, V1["schema"], "admin")]
    system = api.get(f"{DS}/metadata", params={"scope": "system"}).json()["metadata"]["SYSTEM"]["properties"]
    assert orjson.loads(system["schema"]) == V2["schema"]


def test_an_incompatible_update_is_a_409_listing_each_problem_and_changes_nothing(api: TestClient) -> None:
    api.put(f"{DS}/properties", json=V2)
    response = api.put(f"{DS}/properties", json=fields(("id", "int", False), ("amount", "double", False),
                                                       ("added", "int", False)))
    assert response.status_code == 409
    assert response.json()["incompatibilities"] == [
        "field 'id' narrows its type from long to int", "field 'amount' becomes required (it was optional)",
        "field 'coupon' is removed", "new field 'added' is required (a new field must be optional)"]
    assert "field 'coupon' is removed" in response.json()["message"]
    assert api.get(f"{DS}/properties").json() == {"schema": V2["schema"], "version": 1}
    assert len(api.get(f"{DS}/schemas").json()["versions"]) == 1
    assert len(api.get(f"{DS}/metadata/history").json()["changes"]) == 1


@pytest.mark.parametrize(("body", "message"), [
    ({"fields": []}, "the body is"),
    ({"schema": {"fields": []}, "owner": "x"}, "the body is"),
    ({"schema": {"fields": []}}, "at least one field"),
    ({"schema": "{not json"}, "not JSON"),
    ({"schema": {"fields": [{"name": "a", "type": "int"}, {"name": "a", "type": "int"}]}}, "appears twice"),
    ({"schema": {"fields": [{"name": "a", "type": "int", "nullable": "yes"}]}}, "nullable must be"),
    ({"schema": {"fields": [{"name": "<script>", "type": ""}]}}, "needs a type name"),
    (["schema"], "the body is"),
])
def test_bad_schemas_are_400_and_store_nothing(api: TestClient, body: Any, message: str) -> None:
    api.put(f"{DS}/properties", json=V1)
    response = api.put(f"{DS}/properties", json=body)
    assert response.status_code == 400
    assert message in response.json()["message"]
    assert api.get(f"{DS}/properties").json() == {"schema": V1["schema"], "version": 1}


def test_unknown_namespace_is_404(api: TestClient) -> None:
    assert api.put("/v3/namespaces/nowhere/datasets/orders/properties", json=V1).status_code == 404
    assert api.get("/v3/namespaces/nowhere/datasets/orders/schemas").status_code == 404


def test_schema_fields_are_field_entities_without_lineage(api: TestClient) -> None:
    assert api.get(f"{DS}/lineage/fields").status_code == 404  # nothing known of the dataset yet
    api.put(f"{DS}/properties", json=V2)
    listed = api.get(f"{DS}/lineage/fields", params={"prefix": "co"}).json()["fields"]
    links = listed[0].pop("links")
    assert listed == [{"name": "coupon", "hasLineage": False, "inSchema": True}]
    field = "v3/namespaces/default/datasets/orders/field/coupon"
    assert links == {"metadata": f"{field}/metadata", "tags": f"{field}/metadata/tags",
                     "properties": f"{field}/metadata/properties", "history": f"{field}/metadata/history",
                     "page": "ui/entity?ns=default&target=datasets%2Forders%2Ffield%2Fcoupon",
                     "lineage": "v3/namespaces/default/datasets/orders/fields/coupon/lineage",
                     "provenancePage": "ui/fields?ns=default&dataset=orders&field=coupon"}
    tagged = api.post(f"/{links['tags']}", json=["marketing"])  # the field's link leads to its tags
    assert tagged.status_code == 200
    assert api.get(f"{DS}/field/coupon/metadata/tags").json()["USER"] == ["marketing"]

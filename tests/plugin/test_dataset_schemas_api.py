"""Dataset schemas through the API on real PostgreSQL (seed 002 "Updatable Datasets"): versions,
409 listing every incompatibility with nothing changed, bad bodies, fields without lineage, and
404 for a dataset the warehouse does not know (403 first for a caller who may not read it)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from fastapi.testclient import TestClient

from spark_jobs.compaction.job import run_compaction
from tests.airflow_support import jwt, logged_in_client
from tests.factories import access, write_log

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


def test_an_unknown_dataset_is_404_like_every_dataset_route(api: TestClient) -> None:
    """Issue 30, item 6: before, ``GET .../properties`` of a dataset nobody ever recorded answered
    200 ``{"schema": null}`` (and ``.../schemas`` 200 with no versions), as if it existed."""
    for path in (f"{DS}/properties", f"{DS}/schemas", f"{DS}/lineage/fields"):
        missing = api.get(path)
        assert missing.status_code == 404, (path, missing.text)
        assert missing.json()["message"] == "dataset 'orders' not found in namespace 'default'"
    assert api.put(f"{DS}/properties", json=V1).status_code == 200  # a declared schema makes it known
    assert api.get(f"{DS}/properties").json() == {"schema": V1["schema"], "version": 1}
    assert [v["version"] for v in api.get(f"{DS}/schemas").json()["versions"]] == [1]


def test_a_dataset_known_by_its_lineage_alone_has_no_schema(api: TestClient, warehouse_db: str, log_root: Path,
                                                           settings_for: Any) -> None:
    write_log(log_root, [access("purchases", "write")])
    run_compaction(None, interval_end=datetime(2026, 11, 21, 6, tzinfo=UTC), settings=settings_for(warehouse_db))
    known = "/v3/namespaces/default/datasets/purchases"
    assert api.get(f"{known}/properties").json() == {"schema": None, "version": None}
    assert api.get(f"{known}/schemas").json() == {"dataset": "purchases", "versions": []}


def test_an_unreadable_dataset_answers_403_the_same_whether_it_exists_or_not(api: TestClient) -> None:
    """The existence check comes after the READ check: a caller without READ learns nothing of
    whether the dataset exists (tests/reliability/test_hidden_leaks.py asks the same of a namespace)."""
    api.put(f"{DS}/properties", json=V1)
    viewer = {"Authorization": f"Bearer {jwt('viewer')}"}
    for route in ("properties", "schemas"):
        existing = api.get(f"{DS}/{route}", headers=viewer)
        missing = api.get(f"/v3/namespaces/default/datasets/nothing/{route}", headers=viewer)
        assert existing.status_code == missing.status_code == 403, existing.text
        assert existing.text.replace("orders", "X") == missing.text.replace("nothing", "X")


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
                     "lineageDiff": "v3/namespaces/default/datasets/orders/fields/coupon/lineage/diff",
                     "provenancePage": "ui/fields?ns=default&dataset=orders&field=coupon"}
    tagged = api.post(f"/{links['tags']}", json=["marketing"])  # the field's link leads to its tags
    assert tagged.status_code == 200
    assert api.get(f"{DS}/field/coupon/metadata/tags").json()["USER"] == ["marketing"]

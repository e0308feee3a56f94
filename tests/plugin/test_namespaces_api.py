"""Namespaces through the API on real PostgreSQL: list, read, create (idempotent), bad names."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from tests.airflow_support import logged_in_client


@pytest.fixture
def api(warehouse_db: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    with logged_in_client(warehouse_db, monkeypatch) as client:
        yield client


def test_default_exists_and_a_new_namespace_is_created_once(api: TestClient) -> None:
    assert [n["name"] for n in api.get("/v3/namespaces").json()] == ["default"]
    first = api.put("/v3/namespaces/sales", json={"description": "Sales team's data"})
    assert first.status_code == 200, first.text
    assert first.json()["created"] is True and first.json()["description"] == "Sales team's data"
    again = api.put("/v3/namespaces/sales").json()
    assert again["created"] is False and again["createdAt"] == first.json()["createdAt"]
    assert again["description"] == "Sales team's data"  # kept when no new one is given
    assert api.get("/v3/namespaces/sales").json()["name"] == "sales"
    assert [n["name"] for n in api.get("/v3/namespaces").json()] == ["default", "sales"]
    # the new namespace is usable at once
    assert api.post("/v3/namespaces/sales/datasets/orders/metadata/tags", json=["x"]).status_code == 200


@pytest.mark.parametrize(("method", "path", "body", "code", "message"), [
    ("get", "/v3/namespaces/nowhere", None, 404, "namespace 'nowhere' not found"),
    ("put", "/v3/namespaces/bad-name", None, 400, "must be 1-64 letters"),
    ("put", "/v3/namespaces/" + "x" * 65, None, 400, "must be 1-64 letters"),
    ("put", "/v3/namespaces/ok", ["not", "an", "object"], 400, "the body is optional"),
    ("put", "/v3/namespaces/ok", {"description": 5}, 400, "description is text"),
])
def test_bad_namespace_requests_get_clear_errors_and_store_nothing(api: TestClient, method: str, path: str,
                                                                   body: object, code: int, message: str) -> None:
    response = api.request(method.upper(), path, json=body)
    assert response.status_code == code, response.text
    assert message in response.json()["message"]
    assert [n["name"] for n in api.get("/v3/namespaces").json()] == ["default"]

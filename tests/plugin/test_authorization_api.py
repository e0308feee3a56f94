"""Authorization through the plugin's app with real Airflow tokens (seed 000; the wiring into a
real ``airflow api-server`` is tests/plugin/test_api_auth.py's): 401 without login, 403
without the privilege, 200 with it, over privilege x operation x entity type; grants managed
through the API; search, suggest and lineage show only what the caller may read.

Users (tests/conftest.py): ``admin`` (an Airflow admin: an instance admin) and ``viewer``
(no privilege until granted one)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from lineage.settings import Settings
from spark_jobs.compaction.job import run_compaction
from tests.airflow_support import app_path, jwt, plugin_app
from tests.conftest import create_scratch_db, drop_scratch_db
from tests.factories import access, event, write_log
from warehouse.pipeline.dbt_build import build_marts

SHOP = {"application": "Shop", "program_type": "spark", "program": "Load", "run_id": "r1"}
PAYROLL = {"application": "Payroll", "program_type": "spark", "program": "Pay", "run_id": "p1"}
SALES = "/lineage/v3/namespaces/sales"
SCHEMA = {"schema": {"fields": [{"name": "id", "type": "long", "nullable": False}]}}


class Client:
    def __init__(self, base: TestClient, user: str | None) -> None:
        self.base = base
        self.headers = {}
        if user:
            self.headers["Authorization"] = f"Bearer {jwt(user)}"

    def call(self, method: str, path: str, body: Any = None, **params: Any) -> httpx.Response:
        return self.base.request(method, app_path(path), json=body, params=params, headers=self.headers)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    url = create_scratch_db("wh_authz")
    log_root = tmp_path_factory.mktemp("authz-events")
    with plugin_app(url) as base:
        admin = Client(base, "admin")
        for namespace in ("sales", "hr", "doomed"):
            assert admin.call("PUT", f"/lineage/v3/namespaces/{namespace}").status_code == 200
        write_log(Path(log_root), [
            event("run_start", namespace="sales", run=SHOP),
            access("raw", namespace="sales", run=SHOP),
            access("orders", "write", namespace="sales", run=SHOP),
            event("run_end", {"status": "completed"}, namespace="sales", run=SHOP, event_time="2026-11-21T05:05:00Z"),
            event("run_start", namespace="hr", run=PAYROLL, event_time="2026-11-21T05:10:00Z"),
            {**access("orders", namespace="hr", run=PAYROLL, event_time="2026-11-21T05:10:00Z"),
             "payload": {"dataset": {"namespace": "sales", "name": "orders"}, "access": "read"}},
            access("salaries", "write", namespace="hr", run=PAYROLL, event_time="2026-11-21T05:11:00Z"),
            event("run_end", {"status": "completed"}, namespace="hr", run=PAYROLL, event_time="2026-11-21T05:15:00Z"),
        ])
        settings = Settings.from_env({**os.environ, "LINEAGE_LOG_ROOT": str(log_root), "LINEAGE_DATABASE_URL": url})
        run_compaction(None, interval_end=datetime(2026, 11, 21, 6, tzinfo=UTC), settings=settings)
        assert admin.call("PUT", f"{SALES}/datasets/orders/properties", SCHEMA).status_code == 200
        assert admin.call("POST", f"{SALES}/datasets/ops_secret/metadata/tags", ["secret-stuff"]).status_code == 200
        assert admin.call("POST", f"{SALES}/datasets/orders/metadata/tags", ["orders-public"]).status_code == 200
        build_marts(url)
        yield base
    drop_scratch_db(url)


def grant(base: TestClient, entity: str, privilege: str | None) -> None:
    """As admin, make viewer hold exactly ``privilege`` on ``entity`` (None: nothing)."""
    admin = Client(base, "admin")
    admin.call("DELETE", "/lineage/v3/grants", principal="viewer", entity=entity)
    if privilege:
        done = admin.call("PUT", "/lineage/v3/grants", {"principal": "viewer", "entity": entity,
                                                        "privilege": privilege})
        assert done.status_code == 200, done.text


LEVELS = {None: 0, "READ": 1, "WRITE": 2, "ADMIN": 3}
WINDOW = {"start": "0", "end": "now"}
# (entity type, method, path, body, params, privilege needed)
OPERATIONS = [
    ("dataset", "GET", f"{SALES}/datasets/orders/metadata", None, {}, "READ"),
    ("dataset", "GET", f"{SALES}/datasets/orders/lineage", None, WINDOW, "READ"),
    ("dataset", "GET", f"{SALES}/datasets/orders/properties", None, {}, "READ"),
    ("dataset", "GET", f"{SALES}/datasets/orders/lineage/fields", None, {}, "READ"),
    ("dataset", "POST", f"{SALES}/datasets/orders/metadata/tags", ["checked"], {}, "WRITE"),
    ("dataset", "DELETE", f"{SALES}/datasets/orders/metadata/tags/checked", None, {}, "WRITE"),
    ("dataset", "PUT", f"{SALES}/datasets/orders/properties", SCHEMA, {}, "WRITE"),
    ("field", "GET", f"{SALES}/datasets/orders/field/id/metadata", None, {}, "READ"),
    ("field", "POST", f"{SALES}/datasets/orders/field/id/metadata/properties", {"pii": "no"}, {}, "WRITE"),
    ("program", "GET", f"{SALES}/apps/Shop/spark/Load/metadata", None, {}, "READ"),
    ("program", "GET", f"{SALES}/apps/Shop/spark/Load/runs", None, WINDOW, "READ"),
    ("program", "POST", f"{SALES}/apps/Shop/spark/Load/metadata/tags", ["etl"], {}, "WRITE"),
    ("run", "GET", f"{SALES}/apps/Shop/spark/Load/runs/r1/accesses", None, {}, "READ"),
    ("application", "GET", f"{SALES}/apps/Shop/metadata", None, {}, "READ"),
    ("namespace", "GET", SALES, None, {}, "READ"),  # any privilege in the namespace, in fact: see below
    ("namespace", "PUT", SALES, {"description": "the sales team"}, {}, "ADMIN"),
    ("namespace", "GET", "/lineage/v3/grants", None, {"namespace": "sales"}, "ADMIN"),
    ("namespace", "PUT", "/lineage/v3/grants", {"principal": "someone", "entity": "namespaces/sales",
                                                "privilege": "READ"}, {}, "ADMIN"),
]


@pytest.mark.parametrize("privilege", [None, "READ", "WRITE", "ADMIN"])
def test_matrix_of_namespace_grants(server: TestClient, privilege: str | None) -> None:
    grant(server, "namespaces/sales", privilege)
    viewer, anonymous = Client(server, "viewer"), Client(server, None)
    seen = []
    for entity_type, method, path, body, params, _needed in OPERATIONS:
        assert anonymous.call(method, path, body, **params).status_code == 401
        status = viewer.call(method, path, body, **params).status_code
        seen.append((entity_type, method, path, status))
    assert seen == [(t, m, p, 200 if LEVELS[privilege] >= LEVELS[needed] else 403)
                    for t, m, p, _, _, needed in OPERATIONS]


@pytest.mark.parametrize("privilege", ["READ", "WRITE"])
def test_a_dataset_grant_covers_the_dataset_and_its_fields_only(server: TestClient, privilege: str) -> None:
    grant(server, "namespaces/sales", None)
    grant(server, "namespaces/sales/datasets/orders", privilege)
    viewer = Client(server, "viewer")
    seen = [(t, m, p, viewer.call(m, p, b, **q).status_code) for t, m, p, b, q, _ in OPERATIONS]
    visible = ("namespace", "GET", SALES)  # a namespace is visible to whoever holds anything in it
    expected = [(t, m, p, 200 if (t in ("dataset", "field") and LEVELS[privilege] >= LEVELS[needed])
                 or (t, m, p) == visible else 403) for t, m, p, _, _, needed in OPERATIONS]
    assert seen == expected
    grant(server, "namespaces/sales/datasets/orders", None)


def test_external_resources_are_checked_on_the_instance(server: TestClient) -> None:
    path = "/lineage/v3/external/database/db/table/t/metadata"
    viewer = Client(server, "viewer")
    grant(server, "namespaces/sales", "ADMIN")  # a namespace admin is not an instance admin
    assert viewer.call("GET", path).status_code == 403
    grant(server, "instance", "READ")
    assert viewer.call("GET", path).status_code == 200
    assert viewer.call("POST", path + "/tags", ["x"]).status_code == 403
    assert viewer.call("PUT", "/lineage/v3/namespaces/newone").status_code == 403  # creating needs instance ADMIN
    grant(server, "instance", None)
    grant(server, "namespaces/sales", None)


def test_namespace_deletion_needs_admin_on_it(server: TestClient) -> None:
    viewer = Client(server, "viewer")
    grant(server, "namespaces/doomed", "WRITE")
    assert viewer.call("DELETE", "/lineage/v3/namespaces/doomed").status_code == 403
    grant(server, "namespaces/doomed", "ADMIN")
    assert viewer.call("DELETE", "/lineage/v3/namespaces/doomed").status_code == 200
    assert Client(server, "admin").call("GET", "/lineage/v3/namespaces/doomed").status_code == 404


def test_grant_requests_are_checked(server: TestClient) -> None:
    admin = Client(server, "admin")
    for body, message in [
        ({"principal": "v", "entity": "namespaces/sales", "privilege": "EXECUTE"}, "is not one of READ"),
        ({"principal": "", "entity": "namespaces/sales", "privilege": "READ"}, "a principal is"),
        ({"principal": "v", "entity": "sales", "privilege": "READ"}, "the entity is 'instance' or a path"),
        ({"principal": "v", "entity": "namespaces/sales/datasets/orders/field/id", "privilege": "READ"},
         "grants are given on"),
        ({"principal": "v", "entity": "namespaces/sales"}, "the body is"),
    ]:
        response = admin.call("PUT", "/lineage/v3/grants", body)
        assert response.status_code == 400 and message in response.json()["message"], response.text
    unknown = admin.call("PUT", "/lineage/v3/grants", {"principal": "v", "entity": "namespaces/nowhere",
                                                       "privilege": "READ"})
    assert unknown.status_code == 404
    assert admin.call("DELETE", "/lineage/v3/grants", principal="nobody", entity="namespaces/sales").status_code == 404
    assert Client(server, "viewer").call("GET", "/lineage/v3/grants/mine").json() == {
        "principal": "viewer", "instanceAdmin": False, "grants": {}}


def test_search_suggest_and_namespaces_show_only_what_the_caller_may_read(server: TestClient) -> None:
    grant(server, "namespaces/sales/datasets/orders", "READ")
    viewer, admin = Client(server, "viewer"), Client(server, "admin")
    everywhere = {"query": "o*"}
    assert {r["entity"]["details"][-1]["value"] for r in admin.call(
        "GET", "/lineage/v3/metadata/search", **everywhere).json()["results"]} >= {"orders", "ops_secret"}
    found = viewer.call("GET", "/lineage/v3/metadata/search", **everywhere).json()
    shown = {r["entity"]["details"][-1]["value"] for r in found["results"]}
    assert shown == {"orders"} and found["total"] == 1
    assert viewer.call("GET", f"{SALES}/metadata/search", query="secret*").json()["total"] == 0
    assert admin.call("GET", f"{SALES}/metadata/search", query="secret*").json()["total"] == 1
    assert viewer.call("GET", "/lineage/v3/metadata/suggest", prefix="secret").json()["suggestions"] == []
    assert [s["text"] for s in admin.call("GET", "/lineage/v3/metadata/suggest", prefix="secret").json()[
        "suggestions"]] == ["secret-stuff"]
    assert [n["name"] for n in viewer.call("GET", "/lineage/v3/namespaces").json()] == ["sales"]
    grant(server, "namespaces/sales/datasets/orders", None)


def test_lineage_shows_unreadable_nodes_as_hidden(server: TestClient) -> None:
    grant(server, "namespaces/sales/datasets/orders", "READ")
    viewer, admin = Client(server, "viewer"), Client(server, "admin")
    full = admin.call("GET", f"{SALES}/datasets/orders/lineage", **WINDOW).json()
    seen = viewer.call("GET", f"{SALES}/datasets/orders/lineage", **WINDOW)
    assert seen.status_code == 200
    body = seen.json()
    assert len(body["relations"]) == len(full["relations"]) == 4
    assert set(body["data"]) == {"dataset.sales.orders", "hidden..1", "hidden..2"}
    assert set(body["programs"]) == {"hidden...1", "hidden...2"}
    for secret in ("Payroll", "Shop", "salaries", "raw", "p1", "r1"):
        assert secret not in seen.text
    grant(server, "namespaces/sales/datasets/orders", None)

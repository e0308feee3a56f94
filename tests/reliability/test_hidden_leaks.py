"""Nothing hidden leaks (issue 17), through the plugin's app with real Airflow tokens on real PostgreSQL, with
lineage recorded through the real compaction, field lineage job and metadata stage.

The warehouse: ``hr``'s Payroll writes ``hr.salaries`` (pay, bonus); ``sales``' Shop (run r1)
reads it and ``sales.raw``, writes ``sales.orders.total`` from them, and tags ``orders`` from
the program. ``viewer`` holds READ on ``sales.orders`` and ``sales.raw`` only: nothing on
``hr``, on the Shop program or on the warehouse as a whole."""

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
from spark_jobs.field_lineage.job import run_field_lineage
from tests.airflow_support import app_path, jwt, plugin_app
from tests.conftest import create_scratch_db, drop_scratch_db
from tests.factories import access, event, write_log
from warehouse.db.connection import connect
from warehouse.db.program_metadata_store import apply_program_metadata
from warehouse.pipeline.dbt_build import build_marts

SHOP = {"application": "Shop", "program_type": "spark", "program": "Load", "run_id": "r1"}
PAYROLL = {"application": "Payroll", "program_type": "spark", "program": "Pay", "run_id": "p1"}
V3 = "/lineage/v3"
SALES = f"{V3}/namespaces/sales"
ORDERS = f"{SALES}/datasets/orders"
WINDOW = {"start": "0", "end": "now"}
SHOP_RUN = "namespace=sales,application=Shop,type=spark,program=Load,run=r1"
# names of what viewer may not read: none may appear in anything viewer gets
SECRETS = ("salaries", "pay", "bonus", "raw_pay", "hr", "Payroll", "Shop", "p1")


class Client:
    def __init__(self, base: TestClient, user: str) -> None:
        self.base = base
        self.headers = {"Authorization": f"Bearer {jwt(user)}"}

    def call(self, method: str, path: str, body: Any = None, **params: Any) -> httpx.Response:
        return self.base.request(method, app_path(path), json=body, params=params, headers=self.headers)

    def ok(self, method: str, path: str, body: Any = None, **params: Any) -> Any:
        response = self.call(method, path, body, **params)
        assert response.status_code == 200, response.text
        return response.json() if "json" in response.headers.get("content-type", "") else response.text


def in_hr(**overrides: Any) -> dict[str, Any]:
    return {"namespace": "hr", "run": PAYROLL, "event_time": "2026-11-21T05:01:00Z", **overrides}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    url = create_scratch_db("wh_leaks")
    log_root = tmp_path_factory.mktemp("leak-events")
    with plugin_app(url) as base:
        admin = Client(base, "admin")
        for namespace in ("sales", "hr"):
            admin.ok("PUT", f"{V3}/namespaces/{namespace}")
        write_log(Path(log_root), [
            event("run_start", **in_hr()),
            access("raw_pay", **in_hr()),
            access("salaries", "write", **in_hr()),
            event("field_operations", {"destination": {"name": "salaries"}, "operations": [
                {"name": "read raw_pay", "inputs": [{"source": {"name": "raw_pay"}}], "outputs": ["pay", "bonus"]},
                {"type": "write", "name": "write", "inputs": [{"field": "pay"}, {"field": "bonus"}]}]}, **in_hr()),
            event("run_end", {"status": "completed"}, **in_hr(event_time="2026-11-21T05:02:00Z")),
            event("run_start", namespace="sales", run=SHOP, event_time="2026-11-21T05:10:00Z"),
            {**access("salaries", namespace="sales", run=SHOP, event_time="2026-11-21T05:10:00Z"),
             "payload": {"dataset": {"namespace": "hr", "name": "salaries"}, "access": "read"}},
            access("raw", namespace="sales", run=SHOP, event_time="2026-11-21T05:10:00Z"),
            access("orders", "write", namespace="sales", run=SHOP, event_time="2026-11-21T05:11:00Z"),
            event("field_operations", {"destination": {"name": "orders"}, "operations": [
                {"name": "read salaries", "inputs": [{"source": {"namespace": "hr", "name": "salaries"}}],
                 "outputs": ["pay", "bonus"], "description": "payroll of the shop staff"},
                {"name": "read raw", "inputs": [{"source": {"name": "raw"}}], "outputs": ["amount"]},
                {"name": "total", "inputs": [{"field": "pay"}, {"field": "bonus"}, {"field": "amount"}],
                 "outputs": ["total"]},
                {"type": "write", "name": "write", "inputs": [{"field": "total"}]}]},
                  namespace="sales", run=SHOP, event_time="2026-11-21T05:11:00Z"),
            event("metadata_change", {"entity": [["namespace", "sales"], ["dataset", "orders"]],
                                      "operation": "add_tags", "tags": ["loaded"]},
                  namespace="sales", run=SHOP, event_time="2026-11-21T05:11:00Z"),
            event("run_end", {"status": "completed"}, namespace="sales", run=SHOP,
                  event_time="2026-11-21T05:15:00Z"),
        ])
        settings = Settings.from_env({**os.environ, "LINEAGE_LOG_ROOT": str(log_root), "LINEAGE_DATABASE_URL": url})
        run_compaction(None, interval_end=datetime(2026, 11, 21, 6, tzinfo=UTC), settings=settings)
        run_field_lineage(None, settings)
        with connect(url) as conn:
            apply_program_metadata(conn)
            conn.execute("""insert into lineage.dataset_aliases (namespace, alias, alias_type, dataset_key,
                                                               event_time, batch_id)
                            select 'sales', 'payroll_link', 'TABLE', dataset_key, now(), 'test'
                            from lineage.datasets where namespace = 'hr' and dataset = 'salaries'""")
            conn.commit()
        admin.ok("POST", f"{SALES}/datasets/ops_secret/metadata/tags", ["secret-stuff"])
        build_marts(url)
        for dataset in ("orders", "raw"):
            admin.ok("PUT", f"{V3}/grants", {"principal": "viewer", "entity": f"namespaces/sales/datasets/{dataset}",
                                             "privilege": "READ"})
        yield base
    drop_scratch_db(url)


def assert_nothing_secret(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text, (secret, text)


@pytest.mark.parametrize("view", [None, "simple", "detailed"])
def test_field_lineage_names_nothing_of_an_unreadable_dataset(server: TestClient, view: str | None) -> None:
    """Before: ``hr.salaries`` itself was blanked, but its fields (pay, bonus) stayed in the
    operations' outputs and inputs, the read's name and description named it, and the drawings'
    nodes were ``read salaries:pay``. Now the read is ``hidden:1`` with one output ``hidden``."""
    params = {**WINDOW, "levels": 3, **({"view": view} if view else {})}
    admin, viewer = Client(server, "admin"), Client(server, "viewer")
    full = admin.ok("GET", f"{ORDERS}/fields/total/lineage", **params)
    assert "salaries" in str(full) and "bonus" in str(full)  # the admin sees it all
    seen = viewer.call("GET", f"{ORDERS}/fields/total/lineage", **params)
    assert seen.status_code == 200, seen.text
    assert_nothing_secret(seen.text)
    (path,) = seen.json()["paths"]
    hidden = [op for op in path["operations"] if op["id"] == "hidden:1"]
    assert hidden == [{"id": "hidden:1", "type": "read", "name": "hidden", "description": "", "outputs": ["hidden"],
                       "inputs": [], "sources": [{"namespace": "", "type": "hidden", "name": ""}]}]
    (total,) = [op for op in path["operations"] if op["name"] == "total"]
    assert {(i["field"], i["origin"]) for i in total["inputs"]} == {("hidden", "hidden:1"), ("amount", "read raw")}
    assert {"namespace": "sales", "type": "dataset", "name": "raw", "field": "amount"} in path["sources"]
    assert path["fingerprint"] != full["paths"][0]["fingerprint"]  # the fingerprint of what is shown
    upstream = seen.json()["upstream"]
    assert [(u["dataset"], u["paths"]) for u in upstream] == [("hidden", []), ("hidden", [])]


def test_last_updated_by_and_history_updater_hide_an_unreadable_program(server: TestClient) -> None:
    """Before: viewer, who may read ``orders`` but not the Shop program, saw ``last-updated-by``
    and the history's ``updater`` name the program and its run. Now both read ``hidden``, as the
    lineage graph shows that program."""
    admin, viewer = Client(server, "admin"), Client(server, "viewer")
    system = admin.ok("GET", f"{ORDERS}/metadata", scope="SYSTEM")["metadata"]["SYSTEM"]["properties"]
    assert system["last-updated-by"] == SHOP_RUN
    assert [c["updater"] for c in admin.ok("GET", f"{ORDERS}/metadata/history", **WINDOW)["changes"]] == [SHOP_RUN]
    seen = viewer.call("GET", f"{ORDERS}/metadata")
    assert seen.status_code == 200
    assert seen.json()["metadata"]["SYSTEM"]["properties"]["last-updated-by"] == "hidden"
    assert "last-update-time" in seen.json()["metadata"]["SYSTEM"]["properties"]  # the dataset's own
    history = viewer.call("GET", f"{ORDERS}/metadata/history", **WINDOW)
    assert [c["updater"] for c in history.json()["changes"]] == ["hidden"]
    assert_nothing_secret(seen.text + history.text)
    lineage = viewer.ok("GET", f"{ORDERS}/lineage", **WINDOW)
    assert set(lineage["programs"]) == {"hidden...1", "hidden...2"}  # Shop and Payroll, hidden the same way
    assert {r["runCount"] for r in lineage["relations"]} == {None}  # a hidden program's runs are not counted
    changed = viewer.call("GET", f"{ORDERS}/lineage/diff", **WINDOW)  # the diff hides them the same way
    assert changed.status_code == 200, changed.text
    assert set(changed.json()["programs"]) == {"hidden...1", "hidden...2"}
    assert {r["current"]["latestRun"] for r in changed.json()["relations"] if r["current"]} == {None}
    assert_nothing_secret(changed.text)


def same(first: httpx.Response, second: httpx.Response, first_name: str, second_name: str) -> None:
    assert (first.status_code, first.text.replace(first_name, "X")) == (
        second.status_code, second.text.replace(second_name, "X"))


@pytest.mark.parametrize(("method", "path", "body", "params"), [
    ("GET", "{ns}", None, {}),
    ("GET", "{ns}/datasets/salaries/metadata", None, {}),
    ("POST", "{ns}/datasets/salaries/metadata/tags", ["x"], {}),
    ("GET", "{ns}/datasets/salaries/lineage", None, WINDOW),
    ("GET", "{ns}/datasets/salaries/lineage/diff", None, WINDOW),
    ("GET", "{ns}/datasets/salaries/fields/pay/lineage/diff", None, WINDOW),
    ("GET", "{ns}/datasets/salaries/properties", None, {}),
    ("GET", "{ns}/apps/Payroll/spark/Pay/runs/p1", None, {}),
    ("GET", "{ns}/metadata/search", None, {"query": "sal*"}),
    ("PUT", "{ns}", None, {}),
    ("DELETE", "{ns}", None, {}),
])
def test_an_existing_namespace_and_a_missing_one_answer_the_same(server: TestClient, method: str, path: str, body: Any,
                                                                 params: dict[str, Any]) -> None:
    """Before: viewer got 403 for ``hr`` (it exists) and 404 for ``nowhere`` (or a 403 naming a
    different privilege, or a 200 for a search): an existence oracle. Now 403 with the same
    message for both; an admin still gets 404 for a namespace that does not exist."""
    viewer = Client(server, "viewer")
    existing = viewer.call(method, path.format(ns=f"{V3}/namespaces/hr"), body, **params)
    missing = viewer.call(method, path.format(ns=f"{V3}/namespaces/nowhere"), body, **params)
    assert existing.status_code == 403, existing.text
    same(existing, missing, "hr", "nowhere")
    if method == "GET":
        assert Client(server, "admin").call(method, path.format(ns=f"{V3}/namespaces/nowhere"),
                                            **params).status_code == 404


def test_grants_on_an_existing_and_a_missing_namespace_answer_the_same(server: TestClient) -> None:
    viewer = Client(server, "viewer")
    answers = [viewer.call("PUT", f"{V3}/grants", {"principal": "viewer", "entity": f"namespaces/{ns}",
                                                   "privilege": "ADMIN"}) for ns in ("hr", "nowhere")]
    assert answers[0].status_code == 403
    same(*answers, "hr", "nowhere")
    listed = [viewer.call("GET", f"{V3}/grants", namespace=ns) for ns in ("hr", "nowhere")]
    same(*listed, "hr", "nowhere")


def test_entities_in_a_visible_namespace_answer_the_same_existing_or_not(server: TestClient) -> None:
    """Inside ``sales``, which viewer sees: an unreadable dataset, run or program that exists and
    one that does not are both 403 naming what was asked (as they were already); and an alias
    of an unreadable dataset answers as a name that is nothing. Before, its 403 named the dataset
    it stands for (``needs READ on namespace=hr,dataset=salaries``)."""
    viewer = Client(server, "viewer")
    alias = viewer.call("GET", f"{SALES}/datasets/payroll_link/lineage", **WINDOW)
    nothing = viewer.call("GET", f"{SALES}/datasets/payroll_nolink/lineage", **WINDOW)
    assert alias.status_code == 403
    same(alias, nothing, "payroll_link", "payroll_nolink")
    assert "salaries" in Client(server, "admin").ok("GET", f"{SALES}/datasets/payroll_link/lineage", **WINDOW)[
        "data"].__repr__()
    for exists, missing in [("datasets/ops_secret/lineage", "datasets/ops_nothing/lineage"),
                            ("apps/Shop/spark/Load/runs/r1", "apps/Shop/spark/Load/runs/r9"),
                            ("apps/Shop/spark/Load/runs", "apps/Shoq/spark/Load/runs")]:
        first = viewer.call("GET", f"{SALES}/{exists}", **WINDOW)
        second = viewer.call("GET", f"{SALES}/{missing}", **WINDOW)
        assert first.status_code == second.status_code == 403, (first.text, second.text)


def test_warehouse_wide_counts_and_batch_ids_need_read_on_the_instance(server: TestClient) -> None:
    """Before: any logged-in user saw every table's row count and every compaction batch id, on
    the status routes and the home page. Now they need READ on the instance."""
    admin, viewer = Client(server, "admin"), Client(server, "viewer")
    batches = admin.ok("GET", "/lineage/api/v1/compactions")["compactions"]
    assert batches
    batch_id = batches[0]["batch_id"]
    assert batch_id in admin.ok("GET", "/lineage/")
    for route in ("/lineage/api/v1/summary", "/lineage/api/v1/compactions"):
        refused = viewer.call("GET", route)
        assert refused.status_code == 403 and "needs READ on instance" in refused.json()["message"], refused.text
    home = viewer.ok("GET", "/lineage/")
    assert batch_id not in home and "dataset accesses" not in home and "need READ on the instance" in home
    admin.ok("PUT", f"{V3}/grants", {"principal": "viewer", "entity": "instance", "privilege": "READ"})
    try:
        assert viewer.ok("GET", "/lineage/api/v1/compactions")["compactions"][0]["batch_id"] == batch_id
        assert batch_id in viewer.ok("GET", "/lineage/")
    finally:
        admin.call("DELETE", f"{V3}/grants", principal="viewer", entity="instance")

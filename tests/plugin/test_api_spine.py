"""The API's spine on real PostgreSQL and Airflow: the OpenAPI document (every operation's
bodies, 400 not 422), one pooled connection per request, a warehouse that is down or slow
(503 with a message naming the problem), the warehouse connection inside Airflow (no silent
fallback), and the links pages follow."""

from __future__ import annotations

import importlib.util
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from fastapi.testclient import TestClient

from harness.ports import free_port
from lineage.errors import WarehouseConnectionError
from lineage.settings import Settings
from tests.airflow_support import AIRFLOW, airflow_env, ensure_airflow_db, libpq, logged_in_client
from tests.conftest import ROOT
from warehouse.pipeline.airflow_connection import warehouse_url

ERROR_BODY = {"$ref": "#/components/schemas/ErrorBody"}


@pytest.fixture
def api(warehouse_db: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    with logged_in_client(warehouse_db, monkeypatch) as client:
        yield client


def operations(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(path, method, operation) for path, methods in document["paths"].items()
            for method, operation in methods.items()]


def test_the_openapi_document_lists_400_not_422_and_a_body_for_every_answer(api: TestClient) -> None:
    document = api.get("/openapi.json").json()
    assert api.app.openapi() == document  # type: ignore[attr-defined]  # what scripts/api_docs.py renders
    found = operations(document)
    assert len(found) >= 35
    for path, method, operation in found:
        responses = operation["responses"]
        assert "422" not in responses, (method, path)
        success = next(status for status in ("200", "201") if status in responses)  # 201: created (a key, events)
        ok = responses[success]["content"]["application/json"]["schema"]
        assert ok.get("$ref") or ok.get("type") or ok.get("anyOf"), (method, path, ok)
        if path == "/health":
            continue
        for status in ("400", "401", "403", "503"):
            assert responses[status]["content"]["application/json"]["schema"] == ERROR_BODY, (method, path, status)
        if ("{namespace}/" in path and not path.endswith("/deletions")) or path.startswith("/v3/external"):
            assert "404" in responses, (method, path)  # unknown namespace, entity, run or grant
    assert {"HTTPValidationError", "ValidationError"}.isdisjoint(document["components"]["schemas"])
    schemas = document["components"]["schemas"]
    update = document["paths"]["/v3/namespaces/{namespace}/datasets/{dataset}/properties"]["put"]
    assert update["responses"]["409"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/SchemaConflictBody"}
    assert update["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/SchemaUpdate"}
    tags = document["paths"]["/v3/namespaces/{namespace}/{target}/metadata/tags"]["post"]
    assert tags["requestBody"]["content"]["application/json"]["schema"]["type"] == "array"
    assert set(schemas["GrantRequest"]["required"]) == {"principal", "entity", "privilege"}
    assert set(schemas["LineageAnswer"]["properties"]) == {"start", "end", "relations", "programs", "data", "links",
                                                           "truncated"}


def test_docs_api_md_is_what_scripts_api_docs_renders_now(api: TestClient) -> None:
    """docs/api.md is generated from the served document: regenerate it after changing a route
    or a model (``PYTHONPATH=.:plugins .venv/bin/python scripts/api_docs.py > docs/api.md``)."""
    spec = importlib.util.spec_from_file_location("api_docs", ROOT / "scripts" / "api_docs.py")
    assert spec is not None and spec.loader is not None
    api_docs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(api_docs)
    rendered = api_docs.render(api.app)
    assert (ROOT / "docs" / "api.md").read_text() == rendered, "docs/api.md is stale: regenerate it"
    assert "seed 00" not in rendered.lower()  # the CDAP designs are named by title


def test_the_docs_page_serves_the_document_to_a_logged_in_user(api: TestClient) -> None:
    page = api.get("/docs")
    assert page.status_code == 200
    assert "swagger" in page.text.lower() and "openapi.json" in page.text


def test_authorization_and_the_route_read_through_one_pooled_connection(warehouse_db: str,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    with logged_in_client(warehouse_db, monkeypatch, username="viewer", role="viewer") as viewer:
        pool = viewer.app.state.warehouse  # type: ignore[attr-defined]
        before = pool.stats()["requests_num"] if "requests_num" in pool.stats() else 0
        for _ in range(5):  # the viewer's grants are read, then the namespaces
            assert viewer.get("/v3/namespaces").status_code == 200
        assert viewer.get("/v3/namespaces/default/datasets/d/metadata").status_code == 403
        stats = pool.stats()
    assert stats["requests_num"] - before == 6
    assert stats["pool_size"] <= 2  # one request at a time needs one connection


def test_a_warehouse_that_is_down_answers_503_naming_its_connection_id_only(monkeypatch: pytest.MonkeyPatch) -> None:
    closed = free_port()
    monkeypatch.setenv("LINEAGE_API_CONNECT_TIMEOUT_S", "1")
    with logged_in_client(f"postgresql://postgres@127.0.0.1:{closed}/lineage", monkeypatch) as api:
        began = time.monotonic()
        response = api.get("/v3/namespaces")
        waited = time.monotonic() - began
        health = api.get("/health")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == 503
    assert ("the warehouse (Airflow connection 'lineage_warehouse') gave no connection within 1 s: "
            "it refuses connections") in body["message"]
    assert str(closed) not in body["message"] and "127.0.0.1" not in body["message"]  # no host, port, database
    assert waited < 10
    assert health.json() == {"status": "ok", "warehouse": "unreachable"}


def test_a_slow_statement_is_cut_by_the_statement_timeout_and_answers_503(warehouse_db: str,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LINEAGE_API_STATEMENT_TIMEOUT_MS", "300")
    with logged_in_client(warehouse_db, monkeypatch) as api, psycopg.connect(libpq(warehouse_db)) as locker:
        locker.execute("lock table lineage.namespaces in access exclusive mode")  # until this transaction ends
        began = time.monotonic()
        response = api.get("/v3/namespaces")
        waited = time.monotonic() - began
        locker.rollback()
        after = api.get("/v3/namespaces")  # the connection went back to the pool, usable
    assert response.status_code == 503
    assert "statement timeout" in response.json()["message"]
    assert waited < 5
    assert after.status_code == 200


def test_a_pooled_connection_plans_each_summary_for_its_values(warehouse_db: str) -> None:
    """psycopg prepares a query on its 5th execution, and PostgreSQL may then keep a generic plan
    after five more: the summaries' optional filters (a field or none, a window) made a dataset's
    field summary 2-3x slower from its 11th call on a pooled connection. They are never
    prepared, so each execution is planned for its values."""
    from datetime import UTC, datetime

    from lineage_api.warehouse_pool import WarehousePool

    from warehouse.db.field_lineage_summaries import _INCOMING, incoming_relations, outgoing_relations

    pool = WarehousePool(Settings.from_env(), url=lambda: warehouse_db)
    with pool.connection() as conn:
        for call in range(15):
            for relations in (incoming_relations, outgoing_relations):
                relations(conn, "default", f"dataset_{call}", datetime(2026, 11, 1, tzinfo=UTC),
                          datetime(2026, 11, 2, tzinfo=UTC), None if call % 2 else "id")
        prepared = conn.execute("select statement, generic_plans from pg_prepared_statements "
                                "where statement like '%%field_path_sources%%'").fetchall()
        # the control: the same query, run as psycopg runs any other, is prepared and seen here
        window = {"start": datetime(2026, 11, 1, tzinfo=UTC), "end": datetime(2026, 11, 2, tzinfo=UTC)}
        for _ in range(6):
            conn.execute(_INCOMING, {"namespace": "default", "dataset": "d", "field": None, **window})
        control = conn.execute("select count(*) from pg_prepared_statements "
                               "where statement like '%%field_path_sources%%'").fetchone()
    assert prepared == []
    assert control == (1,)


def test_inside_airflow_an_unreadable_connection_fails_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AIRFLOW_CONN_LINEAGE_WAREHOUSE")
    with pytest.raises(WarehouseConnectionError, match="'lineage_warehouse' cannot be read"):
        warehouse_url(inside_airflow=True)
    assert warehouse_url() == Settings.from_env().database_url  # a plain process, outside any task


def test_routes_answer_503_naming_the_connection_until_it_can_be_read(warehouse_db: str,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    client = logged_in_client(warehouse_db, monkeypatch)
    monkeypatch.delenv("AIRFLOW_CONN_LINEAGE_WAREHOUSE")
    with client:
        missing = client.get("/v3/namespaces")
        monkeypatch.setenv("AIRFLOW_CONN_LINEAGE_WAREHOUSE", libpq(warehouse_db))
        defined = client.get("/v3/namespaces")
    assert missing.status_code == 503
    assert "the Airflow connection 'lineage_warehouse' cannot be read" in missing.json()["message"]
    assert defined.status_code == 200


PROBE_DAG = """
from __future__ import annotations

import os

import pendulum
from airflow.sdk import dag, task


@dag(schedule=None, start_date=pendulum.datetime(2026, 1, 1, tz="UTC"), catchup=False)
def lineage_probe_warehouse_url() -> None:
    @task
    def resolve() -> None:
        from warehouse.pipeline.airflow_connection import warehouse_url

        url = warehouse_url()
        with open(os.environ["PROBE_OUT"], "w") as out:
            out.write(url)

    resolve()


lineage_probe_warehouse_url()
"""


def test_a_task_reads_the_airflow_connection_and_fails_without_it(tmp_path: Path) -> None:
    """``airflow dags test`` runs a task calling ``warehouse_url()``: inside the task it is the
    connection's URL, never the settings' one, and without the connection the task fails."""
    ensure_airflow_db()
    dags = tmp_path / "dags"
    dags.mkdir()
    (dags / "lineage_probe_warehouse_url.py").write_text(PROBE_DAG)
    resolved = tmp_path / "url"
    given = "postgresql://someone@warehouse.example:5432/lineage"

    def probe(**connection: str) -> subprocess.CompletedProcess[str]:
        env = {key: value for key, value in airflow_env(AIRFLOW__CORE__DAGS_FOLDER=str(dags),
                                                        PROBE_OUT=str(resolved), **connection).items()
               if key != "AIRFLOW_CONN_LINEAGE_WAREHOUSE" or connection}
        return subprocess.run([AIRFLOW, "dags", "test", "lineage_probe_warehouse_url"], env=env, text=True,
                              capture_output=True, timeout=300, check=False)

    probe(AIRFLOW_CONN_LINEAGE_WAREHOUSE=given)
    assert resolved.read_text() == given  # the Airflow connection, not LINEAGE_DATABASE_URL
    resolved.unlink()
    failed = probe()
    assert not resolved.exists()  # no fallback to the settings URL
    output = failed.stdout + failed.stderr
    assert "WarehouseConnectionError" in output and "'lineage_warehouse' cannot be read" in output, output[-3000:]


def metadata_links(path: str) -> dict[str, str]:
    """The metadata, tags, properties and history links of the entity at ``path``."""
    return {"metadata": f"{path}/metadata", "tags": f"{path}/metadata/tags",
            "properties": f"{path}/metadata/properties", "history": f"{path}/metadata/history"}


def test_answers_carry_the_links_pages_follow(api: TestClient) -> None:
    assert api.put("/v3/namespaces/default/datasets/orders/properties",
                   json={"schema": {"fields": [{"name": "id", "type": "long"}]}}).status_code == 200
    dataset = api.get("/v3/namespaces/default/datasets/orders/metadata").json()["links"]
    assert dataset == {**metadata_links("v3/namespaces/default/datasets/orders"),
                       "page": "ui/entity?ns=default&target=datasets%2Forders",
                       "lineage": "v3/namespaces/default/datasets/orders/lineage",
                       "lineageDiff": "v3/namespaces/default/datasets/orders/lineage/diff",
                       "lineagePage": "ui/lineage?ns=default&type=dataset&name=orders",
                       "fields": "v3/namespaces/default/datasets/orders/lineage/fields",
                       "schemas": "v3/namespaces/default/datasets/orders/schemas",
                       "incidents": "v3/namespaces/default/datasets/orders/incidents",
                       "blastRadius": "v3/namespaces/default/datasets/orders/blast-radius"}
    run = api.get("/v3/namespaces/default/apps/Shop/spark/Load/runs/r1/metadata").json()["links"]
    assert run == {**metadata_links("v3/namespaces/default/apps/Shop/spark/Load/runs/r1"),
                   "page": "ui/run?ns=default&target=apps%2FShop%2Fspark%2FLoad%2Fruns%2Fr1",
                   "run": "v3/namespaces/default/apps/Shop/spark/Load/runs/r1",
                   "accesses": "v3/namespaces/default/apps/Shop/spark/Load/runs/r1/accesses",
                   "lineage": "v3/namespaces/default/apps/Shop/spark/Load/runs/r1/lineage"}
    spaced = api.get("/v3/namespaces/default/datasets/my orders/field/a,b/metadata").json()["links"]
    assert spaced == {**metadata_links("v3/namespaces/default/datasets/my%20orders/field/a%2Cb"),
                      "page": "ui/entity?ns=default&target=datasets%2Fmy%2520orders%2Ffield%2Fa%252Cb",
                      "lineage": "v3/namespaces/default/datasets/my%20orders/fields/a%2Cb/lineage",
                      "lineageDiff": "v3/namespaces/default/datasets/my%20orders/fields/a%2Cb/lineage/diff",
                      "provenancePage": "ui/fields?ns=default&dataset=my+orders&field=a%2Cb"}
    versioned = api.get("/v3/namespaces/default/apps/Shop/metadata", params={"version": "1.0"}).json()["links"]
    assert versioned == {**metadata_links("v3/namespaces/default/apps/Shop"),
                         "page": "ui/entity?ns=default&target=apps%2FShop&version=1.0"}
    program = api.get("/v3/namespaces/default/apps/Shop/spark/Load/metadata").json()["links"]
    assert program["runs"] == "v3/namespaces/default/apps/Shop/spark/Load/runs"
    external = api.get("/v3/external/database/crm/table/customers/metadata").json()["links"]
    assert external == {**metadata_links("v3/external/database/crm/table/customers"),
                        "page": "ui/entity?target=database%2Fcrm%2Ftable%2Fcustomers&external=1"}
    for links in (dataset, versioned, program, external, spaced):  # each link leads to the entity's resource
        version = {"version": "1.0"} if links is versioned else {}
        for kind in ("metadata", "tags", "properties", "history"):
            assert api.get("/" + links[kind], params=version).status_code == 200, (kind, links[kind])
    assert api.post("/" + spaced["tags"], json=["pii"]).status_code == 200
    assert api.get("/" + spaced["tags"]).json()["USER"] == ["pii"]
    assert api.delete(f"/{spaced['tags']}/pii").status_code == 200  # a tag appended to the tags link removes it
    assert api.get("/" + spaced["tags"]).json()["USER"] == []


def test_a_page_starts_from_the_links_of_what_its_url_names(api: TestClient) -> None:
    """``/links`` turns a page's URL parameters into the links every answer carries."""
    for named in ({"ns": "default", "target": "datasets/orders"},
                  {"ns": "default", "type": "dataset", "name": "orders"}):
        assert api.get("/links", params=named).json() == api.get(
            "/v3/namespaces/default/datasets/orders/metadata").json()["links"]
    assert api.get("/links", params={"ns": "default", "target": "datasets/my%20orders/field/a%2Cb"}).json() == \
        api.get("/links", params={"ns": "default", "dataset": "my orders", "field": "a,b"}).json()
    stream = api.get("/links", params={"ns": "default", "type": "stream", "name": "clicks"}).json()
    assert stream["lineage"] == "v3/namespaces/default/streams/clicks/lineage"
    versioned = api.get("/links", params={"ns": "default", "target": "apps/Shop", "version": "1.0"}).json()
    assert versioned["page"] == "ui/entity?ns=default&target=apps%2FShop&version=1.0"
    external = api.get("/links", params={"external": "1", "target": "database/crm/table/customers"}).json()
    assert external["metadata"] == "v3/external/database/crm/table/customers/metadata"
    namespace = api.get("/links", params={"ns": "default"}).json()
    assert (namespace["search"], namespace["suggest"]) == ("v3/namespaces/default/metadata/search",
                                                           "v3/namespaces/default/metadata/suggest")
    assert api.get("/" + namespace["suggest"]).status_code == 503  # the suggest route: no index before dbt builds it
    for bad in ({}, {"ns": "default", "type": "program", "name": "x"}, {"ns": "default", "dataset": "orders"},
                {"external": "1", "target": "database"}, {"ns": "default", "external": "1", "target": "a/b"}):
        answer = api.get("/links", params=bad)
        assert answer.status_code == 400 and "a page names an entity by" in answer.json()["message"], bad



@pytest.mark.parametrize("start", ["now-999999999d", "999999999999"])
def test_times_out_of_range_answer_400_naming_the_range_not_500(api: TestClient, start: str) -> None:
    response = api.get("/v3/namespaces/default/datasets/purchases/lineage", params={"start": start})
    assert response.status_code == 400
    assert response.json()["message"] == (f"start {start!r} is out of range: times run from year 1 to year 9999")

"""Metadata search and suggest through the API, over the real search index (rebuilt from dbt's
terms view after the marts build) on real PostgreSQL: query terms, ranking, pagination, targets,
scopes, literal metacharacters, read-your-writes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from fastapi.testclient import TestClient

from lineage.model.dataset_schema import schema
from lineage.model.metadata_entity import entity
from lineage.settings import Settings
from tests.airflow_support import libpq, logged_in_client
from tests.conftest import create_scratch_db, drop_scratch_db
from warehouse.db import entity_keys, metadata_store
from warehouse.pipeline.dbt_build import build_marts

NS = "/v3/namespaces/default"


def dataset(name: str, namespace: str = "default") -> str:
    return f"/v3/namespaces/{namespace}/datasets/{name}/metadata"


@pytest.fixture(scope="module")
def search_db() -> Iterator[str]:
    """One warehouse for the module: lineage entities, USER metadata through the API, SYSTEM
    schemas through the store, then the marts build (dbt's terms view, the index rebuilt from it)."""
    url = create_scratch_db("search_api")
    with psycopg.connect(libpq(url), autocommit=True) as conn:
        conn.execute("insert into lineage.namespaces (namespace) values ('other')")
        conn.execute("""insert into lineage.datasets (namespace, dataset_type, dataset) values
                        ('default', 'dataset', 'purchases'), ('default', 'dataset', 'purchase_archive'),
                        ('default', 'stream', 'purchaseStream'), ('default', 'dataset', 'employees'),
                        ('other', 'dataset', 'purchases_eu'),
                        ('default', 'dataset', 'postgres://db:5432/analytics.public.invoices'),
                        ('default', 'dataset', 's3://lake/billing/2026/invoices'),
                        ('default', 'dataset', 'invoices_archive')""")
        conn.execute("""insert into lineage.programs (namespace, application, program_type, program) values
                        ('default', 'PurchaseHistory', 'mapreduce', 'PurchaseHistoryBuilder')""")
        # OpenLineage jobs whose jobType facets said what they are (the compaction keeps it: migration 0040)
        conn.execute("""insert into lineage.programs (namespace, application, program_type, program, job_type)
                        values ('default', 'airflow', 'openlineage', 'shipping', 'airflow_dag'),
                               ('default', 'airflow', 'openlineage', 'shipping.load', 'airflow_task')""")
        entity_keys.fill_missing(conn)
        metadata_store.change(conn, entity([("namespace", "default"), ("dataset", "employees")]), "SYSTEM", "test",
                              add_properties={"schema": schema([("empName", "string"), ("empId", "long"),
                                                                ("salary", "double")]).to_json()})
    yield url
    drop_scratch_db(url)


@pytest.fixture(scope="module")
def marts_built(search_db: str) -> str:
    build_marts(search_db, Settings.from_env(), command="run", select="+metadata_search_terms")
    return search_db


@pytest.fixture
def api(marts_built: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    with logged_in_client(marts_built, monkeypatch) as client:
        yield client


def ok(response: Any) -> Any:
    assert response.status_code == 200, response.text
    return response.json()


def search(api: TestClient, query: str, namespace: str | None = "default", **params: Any) -> dict[str, Any]:
    path = f"/v3/namespaces/{namespace}/metadata/search" if namespace else "/v3/metadata/search"
    return ok(api.get(path, params={"query": query, **params}))


def names(body: dict[str, Any]) -> list[str]:
    return [r["entity"]["details"][-1]["value"] for r in body["results"]]


def test_lineage_entities_are_found_by_name_prefix_without_any_metadata(api: TestClient) -> None:
    body = search(api, "purchase*")
    assert sorted(names(body)) == ["PurchaseHistory", "PurchaseHistoryBuilder", "purchaseStream",
                                   "purchase_archive", "purchases"]
    assert body["total"] == 5
    builder = next(r for r in body["results"] if r["entity"]["type"] == "program")
    assert builder["entity"]["details"] == [
        {"key": "namespace", "value": "default"}, {"key": "application", "value": "PurchaseHistory"},
        {"key": "type", "value": "mapreduce"}, {"key": "program", "value": "PurchaseHistoryBuilder"}]
    assert builder["matches"] == [{"scope": "SYSTEM", "kind": "name", "key": None,
                                   "value": "PurchaseHistoryBuilder"}]


def test_value_key_value_tag_and_schema_field_terms(api: TestClient) -> None:
    ok(api.post(f"{dataset('purchases')}/properties", json={"owner": "Sales Team", "tier": "gold"}))
    ok(api.post(f"{dataset('purchases')}/tags", json=["PII", "finance"]))
    ok(api.post(f"{dataset('purchase_archive')}/properties", json={"owner": "salesforce-sync"}))
    assert names(search(api, "owner:sales")) == ["purchase_archive", "purchases"]
    assert names(search(api, "owner:\"sales team\"")) == ["purchases"]
    assert names(search(api, "tags:pii")) == ["purchases"]
    assert names(search(api, "gold")) == ["purchases"]
    assert names(search(api, "tier:")) == ["purchases"]
    employees = search(api, "field:emp*")
    assert names(employees) == ["employees"]
    assert employees["results"][0]["matches"] == [
        {"scope": "SYSTEM", "kind": "field", "key": "field", "value": "empId"},
        {"scope": "SYSTEM", "kind": "field", "key": "field", "value": "empName"}]
    assert names(search(api, "field:empname")) == ["employees"]
    assert search(api, "field:salaryX")["total"] == 0
    assert search(api, "tags:gold")["total"] == 0  # a property value is not a tag


def test_ranking_puts_more_matched_terms_then_exact_matches_first(api: TestClient) -> None:
    ok(api.post(f"{dataset('rank_exact')}/tags", json=["orders"]))
    ok(api.post(f"{dataset('rank_prefix')}/tags", json=["orders_daily"]))
    ok(api.post(f"{dataset('rank_both')}/tags", json=["orders_daily", "eu"]))
    body = search(api, "orders tags:eu")
    assert names(body) == ["rank_both", "rank_exact", "rank_prefix"]
    assert [r["score"] for r in body["results"]] == [
        {"matchedTerms": 2, "nameMatches": 0, "exactMatches": 1},
        {"matchedTerms": 1, "nameMatches": 0, "exactMatches": 1},
        {"matchedTerms": 1, "nameMatches": 0, "exactMatches": 0}]
    assert names(search(api, "orders +tags:eu")) == ["rank_both"]  # a required term filters


def test_openlineage_datasets_are_found_by_the_names_people_know_and_a_name_ranks_first(api: TestClient) -> None:
    table, path = "postgres://db:5432/analytics.public.invoices", "s3://lake/billing/2026/invoices"
    for query in ("analytics.public.invoices", "public.invoices", '"postgres://db:5432/analytics.public.invoices"'):
        found = search(api, query)
        assert names(found)[0] == table and found["results"][0]["score"]["nameMatches"] == 1, query
    for query in ("billing/2026/invoices", "2026/invoices"):
        assert names(search(api, query)) == [path], query
    # An exact name first (the OpenLineage name's last segment counts), then an exact tag, then prefixes.
    ok(api.post(f"{dataset('billing_report')}/tags", json=["invoices"]))
    ranked = search(api, "invoices")
    assert names(ranked) == [table, path, "billing_report", "invoices_archive"]
    assert [r["score"]["nameMatches"] for r in ranked["results"]] == [1, 1, 0, 0]
    assert [r["score"]["exactMatches"] for r in ranked["results"]] == [1, 1, 1, 0]
    assert search(api, "public.invoice")["total"] == 1  # a prefix of an OpenLineage name still matches
    assert search(api, "lic.invoices")["total"] == 0  # not the middle of a segment


def test_an_openlineage_job_is_found_by_its_job_type_a_dag_apart_from_its_tasks(api: TestClient) -> None:
    assert names(search(api, "jobType:airflow_dag")) == ["shipping"]
    tasks = search(api, "jobType:airflow_task")
    assert names(tasks) == ["shipping.load"]
    assert tasks["results"][0]["matches"] == [{"scope": "SYSTEM", "kind": "property", "key": "jobType",
                                               "value": "airflow_task"}]
    assert names(search(api, "airflow_")) == ["shipping", "shipping.load"]  # a prefix of either
    assert search(api, "jobType:dbt_model")["total"] == 0


def test_pagination_gives_a_stable_order_and_the_total(api: TestClient) -> None:
    for number in range(7):
        ok(api.post(f"{dataset(f'paged_{number}')}/tags", json=["paginated"]))
    pages = [search(api, "tags:paginated", limit=3, offset=offset) for offset in (0, 3, 6, 9)]
    assert [page["total"] for page in pages] == [7, 7, 7, 7]
    assert [names(page) for page in pages] == [
        ["paged_0", "paged_1", "paged_2"], ["paged_3", "paged_4", "paged_5"], ["paged_6"], []]


def test_targets_and_scopes_filter(api: TestClient) -> None:
    ok(api.post("/v3/namespaces/default/datasets/purchases/field/customer/metadata/tags", json=["targeted"]))
    ok(api.post("/v3/namespaces/default/streams/purchaseStream/metadata/tags", json=["targeted"]))
    ok(api.post("/v3/external/database/crm/table/customers/metadata/tags", json=["targeted"]))
    assert sorted(r["entity"]["type"] for r in search(api, "tags:targeted")["results"]) == ["field", "stream"]
    assert names(search(api, "tags:targeted", target="field")) == ["customer"]
    assert names(search(api, "tags:targeted", target=["stream", "field"])) == ["customer", "purchaseStream"]
    everywhere = search(api, "tags:targeted", namespace=None, target="external")
    assert everywhere["results"][0]["entity"]["details"] == [{"key": "database", "value": "crm"},
                                                            {"key": "table", "value": "customers"}]
    assert search(api, "purchase*", scope="USER")["total"] == 0  # names are SYSTEM
    assert search(api, "tags:targeted", scope="SYSTEM")["total"] == 0


def test_cross_namespace_search_sees_every_namespace_and_a_namespace_only_its_own(api: TestClient) -> None:
    assert "purchases_eu" not in names(search(api, "purchases"))
    assert {"purchases", "purchases_eu"} <= set(names(search(api, "purchases", namespace=None, limit=100)))
    assert names(search(api, "purchases", namespace="other")) == ["purchases_eu"]


@pytest.mark.parametrize(("stored", "query", "unrelated"), [
    ("100% organic", "100%", "1000 organic"),
    ("a_b", "a_b", "axb"),
    ("o'brien", "o'brien", "obrien"),
    ("back\\slash", "back\\slash", "back-slash"),
])
def test_metacharacters_are_searched_literally(api: TestClient, stored: str, query: str, unrelated: str) -> None:
    subject = f"literal_{abs(hash(stored)) % 10_000}"
    ok(api.post(f"{dataset(subject)}/properties", json={"note": stored}))
    ok(api.post(f"{dataset(subject + '_other')}/properties", json={"note": unrelated}))
    body = search(api, f"note:\"{query}\"" if " " in query else f"note:{query}")
    assert names(body) == [subject]
    assert body["results"][0]["matches"][0]["value"] == stored


def test_writes_are_searchable_at_once_and_removals_too(api: TestClient) -> None:
    assert search(api, "tags:fresh")["total"] == 0
    ok(api.post(f"{dataset('fresh')}/tags", json=["fresh"]))
    assert names(search(api, "tags:fresh")) == ["fresh"]
    assert names(search(api, "fresh")) == ["fresh"]  # a metadata-only entity is known by its name too
    ok(api.delete(f"{dataset('fresh')}/tags/fresh"))
    assert search(api, "tags:fresh")["total"] == 0


def test_suggest_shows_keys_then_values_and_after_a_colon_the_keys_values(api: TestClient) -> None:
    ok(api.post(f"{dataset('suggested')}/properties", json={"region": "Europe", "retention": "30d"}))
    ok(api.post(f"{dataset('suggested_too')}/properties", json={"region": "EU-west"}))
    body = ok(api.get(f"{NS}/metadata/suggest", params={"prefix": "re"}))
    assert [s["text"] for s in body["suggestions"]] == ["region:", "retention:"]
    body = ok(api.get(f"{NS}/metadata/suggest", params={"prefix": "region:e"}))
    assert [s["text"] for s in body["suggestions"]] == ["region:EU-west", "region:Europe"]  # as stored
    body = ok(api.get(f"{NS}/metadata/suggest", params={"prefix": "Eur"}))
    assert body["suggestions"] == [{"type": "value", "key": None, "text": "Europe"}]
    every_key = ok(api.get(f"{NS}/metadata/suggest", params={"prefix": "", "limit": 100}))
    keys = [s["text"] for s in every_key["suggestions"] if s["type"] == "key"]
    assert {"field:", "owner:", "region:", "retention:", "tags:", "tier:"} <= set(keys)
    assert keys == sorted(keys)
    assert len(ok(api.get(f"{NS}/metadata/suggest", params={"prefix": "p", "limit": 2}))["suggestions"]) == 2


@pytest.mark.parametrize(("path", "params", "code", "message"), [
    (f"{NS}/metadata/search", {"query": "  "}, 400, "the query is empty"),
    (f"{NS}/metadata/search", {"query": "a", "target": "table"}, 400, "unknown target 'table'"),
    (f"{NS}/metadata/search", {"query": "a", "scope": "ALL"}, 400, "scope 'ALL'"),
    (f"{NS}/metadata/search", {"query": "a", "limit": 0}, 400, "limit must be"),
    (f"{NS}/metadata/search", {"query": "a", "offset": -1}, 400, "offset 0-"),
    (f"{NS}/metadata/search", {"query": " ".join("t" * 11)}, 400, "at most 10 terms"),
    (f"{NS}/metadata/search", {}, 400, "query"),
    ("/v3/namespaces/nowhere/metadata/search", {"query": "a"}, 404, "namespace 'nowhere' not found"),
    (f"{NS}/metadata/suggest", {"prefix": "a", "limit": 1000}, 400, "limit must be 1-100"),
    ("/v3/namespaces/nowhere/metadata/suggest", {"prefix": "a"}, 404, "not found"),
])
def test_bad_search_requests_get_clear_errors(api: TestClient, path: str, params: dict[str, Any], code: int,
                                              message: str) -> None:
    response = api.get(path, params=params)
    assert response.status_code == code, response.text
    assert message in response.json()["message"]


def test_search_before_the_index_is_built_is_503_and_writes_still_work(warehouse_db: str,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    with logged_in_client(warehouse_db, monkeypatch) as client:
        ok(client.post(f"{dataset('early')}/tags", json=["early"]))
        for path, params in ((f"{NS}/metadata/search", {"query": "early"}),
                             (f"{NS}/metadata/suggest", {"prefix": "e"})):
            response = client.get(path, params=params)
            assert response.status_code == 503, response.text
            assert "search index" in response.json()["message"]
            assert "lineage_compaction" in response.json()["message"]
        build_marts(warehouse_db, Settings.from_env(), command="run", select="+metadata_search_terms")
        assert names(ok(client.get(f"{NS}/metadata/search", params={"query": "tags:early"}))) == ["early"]
        assert ok(client.get(f"{NS}/metadata/search", params={"query": "nothing-like-it"}))["total"] == 0
        assert ok(client.get(f"{NS}/metadata/suggest", params={"prefix": "zz"}))["suggestions"] == []

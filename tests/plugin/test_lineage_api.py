"""Dataset lineage through the API, on data compacted by the real job into real PostgreSQL."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

import psycopg
import pytest
from fastapi.testclient import TestClient

from lineage.naming.identity import NamespaceMap
from lineage.openlineage.mapping import wrap
from lineage.settings import Settings
from spark_jobs.compaction.job import run_compaction
from tests.airflow_support import libpq, logged_in_client
from tests.conftest import create_scratch_db, drop_scratch_db
from tests.factories import D1, D2, run_events, shop_history, write_log
from warehouse.db import entity_keys
from warehouse.pipeline.dbt_build import build_marts

T0 = datetime(2026, 11, 20, 0, 0, tzinfo=UTC)
T1 = datetime(2026, 11, 21, 0, 0, tzinfo=UTC)
END = datetime(2026, 11, 21, 6, 0, tzinfo=UTC)
FLOW = "flow.default.PurchaseHistory.PurchaseFlow"
BUILDER = "mapreduce.default.PurchaseHistory.PurchaseHistoryBuilder"
SERVICE = "service.default.PurchaseHistory.PurchaseHistoryService"


def purchase_history_events() -> list[dict[str, Any]]:
    """Seed 001's PurchaseHistory example, with the seed's run ids."""
    at = T0 + timedelta(hours=1)
    done = at + timedelta(minutes=10)
    return [
        *run_events("flow", "PurchaseFlow", "283-afsd032-adsf90", at, done,
                    [("stream.purchaseStream", "read", "reader"), ("dataset.purchases", "write", "collector")]),
        *run_events("flow", "PurchaseFlow", "283-0rwedfk-09wrff", at, done,
                    [("stream.purchaseStream", "read", "reader"), ("dataset.purchases", "write", "collector"),
                     ("dataset.frequentCustomers", "write", "collector"), ("dataset.purchases", "read", "collector")]),
        *run_events("mapreduce", "PurchaseHistoryBuilder", "283-afsd032-adsf90", at, done,
                    [("dataset.purchases", "read", "")]),
        *[e for run_id in ("283-99sd032-adsf90", "283-88wedfk-09wrff") for e in run_events(
            "mapreduce", "PurchaseHistoryBuilder", run_id, at, done,
            [("dataset.history", "write", ""), ("dataset.frequentCustomers", "write", "")])],
        *run_events("service", "PurchaseHistoryService", "283-zsed032-adsf90", at, None,
                    [("dataset.history", "unknown", "")]),
    ]


class Warehouse:
    """One warehouse database for the module, fed by the real compaction job and dbt. Each test
    adds its events on datasets of its own, so the tests share it without seeing each other."""

    def __init__(self, url: str, log_root: Path) -> None:
        self.url, self.log_root = url, log_root
        self.settings = Settings.from_env({**os.environ, "LINEAGE_LOG_ROOT": str(log_root),
                                           "LINEAGE_DATABASE_URL": url})

    def compact(self, events: list[dict[str, Any]]) -> None:
        """Compact the events with the real job, then build the walk's mart (incrementally)."""
        write_log(self.log_root, events)
        run_compaction(None, interval_end=END, settings=self.settings)
        build_marts(self.url, self.settings, command="run", select="+lineage_walk")


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Warehouse]:
    url = create_scratch_db("lineage_api")
    log_root = tmp_path_factory.mktemp("raw-events")
    shared = Warehouse(url, log_root)
    shared.compact(purchase_history_events())
    yield shared
    drop_scratch_db(url)


@pytest.fixture
def api(warehouse: Warehouse, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    """A client of the plugin app, logged in with a real Airflow JWT, over the seed 001 data."""
    with logged_in_client(warehouse.url, monkeypatch) as client:
        client.compact = warehouse.compact  # type: ignore[attr-defined]
        yield client


COUNTS = ("runCount", "firstRun", "lastRun", "latestRun")


def lineage(api: TestClient, path: str, **params: Any) -> dict[str, Any]:
    """The answer; each time, the same answer with runs=count counts every relation's runs as the
    ids do (counted from the mart's rows where it can: every test's history checks that path)."""
    query = {key: value for key, value in {"start": str(int(T0.timestamp())), "end": str(int(T1.timestamp())),
                                           **params}.items() if value is not None}
    response = api.get(f"/v3/namespaces/default/{path}/lineage", params=query)
    assert response.status_code == 200, response.text
    body = response.json()
    if "runs" not in params:
        counted = api.get(f"/v3/namespaces/default/{path}/lineage", params={**query, "runs": "count"}).json()
        assert [[r[k] for k in COUNTS] + [r["components"]] for r in counted["relations"]] == [
            [r[k] for k in COUNTS] + [r["components"]] for r in body["relations"]]
        for relation in body["relations"]:
            if "rollup" not in params:
                assert relation["runCount"] == len(relation["runs"])
    return body


def triples(body: dict[str, Any]) -> list[tuple[str, str, str, list[str], list[str]]]:
    return [(r["data"], r["program"], r["access"], r["runs"], r["components"]) for r in body["relations"]]


def test_seed_001_purchase_history_gives_the_seeds_relations_with_runs_grouped(api: TestClient) -> None:
    body = lineage(api, "datasets/purchases")
    assert triples(body) == [
        ("dataset.default.frequentCustomers", FLOW, "write", ["283-0rwedfk-09wrff"], ["collector"]),
        ("dataset.default.frequentCustomers", BUILDER, "write", ["283-88wedfk-09wrff", "283-99sd032-adsf90"], []),
        ("dataset.default.history", BUILDER, "write", ["283-88wedfk-09wrff", "283-99sd032-adsf90"], []),
        ("dataset.default.history", SERVICE, "unknown", ["283-zsed032-adsf90"], []),
        ("dataset.default.purchases", FLOW, "read", ["283-0rwedfk-09wrff"], ["collector"]),
        ("dataset.default.purchases", FLOW, "write", ["283-0rwedfk-09wrff", "283-afsd032-adsf90"], ["collector"]),
        ("dataset.default.purchases", BUILDER, "read", ["283-afsd032-adsf90"], []),
        ("stream.default.purchaseStream", FLOW, "read", ["283-0rwedfk-09wrff", "283-afsd032-adsf90"], ["reader"]),
    ]
    assert (body["start"], body["end"]) == (int(T0.timestamp()), int(T1.timestamp()))
    assert set(body["programs"]) == {FLOW, BUILDER, SERVICE}
    assert body["data"]["stream.default.purchaseStream"] == {
        "id": {"namespace": "default", "type": "stream", "id": "purchaseStream"}}
    assert lineage(api, "streams/purchaseStream")["relations"] == body["relations"]


def test_levels_bound_the_walk_from_data_to_programs_to_all_their_data(api: TestClient) -> None:
    # Level 1: the programs that accessed purchases, then everything those programs accessed
    # in the window (CDAP's walk is by program: the builder's runs that wrote history count).
    one = {(data, program) for data, program, *_ in triples(lineage(api, "datasets/purchases", levels=1))}
    assert one == {("dataset.default.frequentCustomers", FLOW), ("dataset.default.purchases", FLOW),
                   ("dataset.default.purchases", BUILDER), ("stream.default.purchaseStream", FLOW),
                   ("dataset.default.frequentCustomers", BUILDER), ("dataset.default.history", BUILDER)}
    two = {(data, program) for data, program, *_ in triples(lineage(api, "datasets/purchases", levels=2))}
    assert two == one | {("dataset.default.history", SERVICE)}
    # an answer cut by its levels says so: the service lay beyond level 1, nothing beyond level 2
    assert lineage(api, "datasets/purchases", levels=1)["truncated"] is True
    assert lineage(api, "datasets/purchases", levels=2)["truncated"] is False


def test_collapse_access_merges_reads_and_writes(api: TestClient) -> None:
    body = lineage(api, "datasets/purchases", collapse="access")
    flow_on_purchases = [
        r for r in body["relations"] if r["data"] == "dataset.default.purchases" and r["program"] == FLOW]
    at = int((T0 + timedelta(hours=1)).timestamp())
    assert flow_on_purchases == [{"data": "dataset.default.purchases", "program": FLOW, "access": "read,write",
                                  "runs": ["283-0rwedfk-09wrff", "283-afsd032-adsf90"], "components": ["collector"],
                                  "runCount": 2, "firstRun": at, "lastRun": at, "latestRun": "283-afsd032-adsf90",
                                  "declared": False}]


def test_the_window_includes_runs_that_overlap_it_exactly_as_seed_001_scans(api: TestClient) -> None:
    api.compact([  # type: ignore[attr-defined]
        *run_events("spark", "Edges", "stops-at-start", T0 - timedelta(hours=2), T0, [("dataset.w", "read", "")],
                    application="A"),
        *run_events("spark", "Edges", "starts-at-end", T1, T1 + timedelta(hours=1), [("dataset.w", "read", "")],
                    application="A"),
        *run_events("spark", "Edges", "still-running", T0 - timedelta(days=3), None, [("dataset.w", "read", "")],
                    application="A"),
        *run_events("spark", "Edges", "stopped-before", T0 - timedelta(hours=2), T0 - timedelta(seconds=1),
                    [("dataset.w", "read", "")], application="A"),
    ])
    assert triples(lineage(api, "datasets/w")) == [
        ("dataset.default.w", "spark.default.A.Edges", "read", ["still-running", "stops-at-start"], [])]


def test_a_known_access_shadows_unknown_for_the_same_run(api: TestClient) -> None:
    api.compact(run_events("spark", "P", "r1", T0 + timedelta(hours=2), T0 + timedelta(hours=3),  # type: ignore[attr-defined]
                           [("dataset.u", "unknown", ""), ("dataset.u", "read", "")], application="A"))
    assert [r["access"] for r in lineage(api, "datasets/u")["relations"]] == ["read"]


def test_a_run_started_in_one_compaction_and_stopped_in_the_next_is_listed_once(api: TestClient) -> None:
    long = "spark.default.A.Long"
    started = T0 + timedelta(hours=2)
    events = run_events("spark", "Long", "long-1", started, started + timedelta(days=2), [("dataset.l", "write", "")],
                        application="A")
    api.compact(events[:-1])  # type: ignore[attr-defined]  # start and access: still running
    after_stop = {"start": str(int((started + timedelta(days=3)).timestamp())),
                  "end": str(int((started + timedelta(days=4)).timestamp()))}
    assert triples(lineage(api, "datasets/l")) == [("dataset.default.l", long, "write", ["long-1"], [])]
    assert len(lineage(api, "datasets/l", **after_stop)["relations"]) == 1  # running: in every later window
    api.compact(events[-1:])  # type: ignore[attr-defined]  # the stop, two days later
    assert triples(lineage(api, "datasets/l")) == [("dataset.default.l", long, "write", ["long-1"], [])]
    assert lineage(api, "datasets/l", **after_stop)["relations"] == []
    stopping_day = {"start": str(int((started + timedelta(days=1, hours=23)).timestamp())),
                    "end": str(int((started + timedelta(days=2, hours=1)).timestamp()))}
    assert [r["runs"] for r in lineage(api, "datasets/l", **stopping_day)["relations"]] == [["long-1"]]


def job_event(name: str, at: datetime, inputs: list[str], outputs: list[str]) -> dict[str, Any]:
    """An OpenLineage JobEvent (a dbt manifest's model, say): the job's declared inputs and outputs."""
    def datasets(names: list[str]) -> list[dict[str, str]]:
        return [{"namespace": "postgres://db:5432", "name": f"shop.public.{table}"} for table in names]
    return wrap({"eventTime": at.isoformat(), "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.40.0/"
                 "integration/dbt", "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent",
                 "job": {"namespace": "dbt", "name": name}, "inputs": datasets(inputs), "outputs": datasets(outputs)},
                NamespaceMap())


def test_a_job_event_is_declared_lineage_beside_runs_never_a_run_and_its_latest_declaration_holds(
        api: TestClient, warehouse: Warehouse) -> None:
    def table(name: str) -> str:
        return quote(f"postgres://db:5432/shop.public.{name}", safe="")

    model = "openlineage.dbt.dbt.shop.clean_orders"
    declared_at = T0 + timedelta(hours=2)
    assert api.put("/v3/namespaces/dbt").status_code in (200, 201)  # the job's namespace
    # the job declares it reads raw_orders and writes clean_orders; a Spark run reads clean_orders
    api.compact([job_event("shop.clean_orders", declared_at, ["raw_orders"], ["clean_orders"]),  # type: ignore[attr-defined]
                 *[{**e, "schema_version": 2} for e in run_events(  # v2: names that keep an outside identity
                     "spark", "Report", "rep-1", T0 + timedelta(hours=1), T0 + timedelta(hours=1, minutes=30),
                     [("dataset.postgres://db:5432/shop.public.clean_orders", "read", "")], application="A")]])
    body = lineage(api, f"datasets/{table('clean_orders')}")
    relations = {(r["data"].rsplit(".", 1)[-1], r["program"], r["access"]): r for r in body["relations"]}
    assert sorted(relations) == [("clean_orders", model, "write"), ("clean_orders", "spark.default.A.Report", "read"),
                                 ("raw_orders", model, "read")]
    declared = relations[("raw_orders", model, "read")]
    assert (declared["declared"], declared["runs"], declared["runCount"], declared["latestRun"]) == (True, [], 0, None)
    assert relations[("clean_orders", "spark.default.A.Report", "read")]["declared"] is False
    assert body["programs"][model]["id"] == {"namespace": "dbt", "application": "dbt", "type": "openlineage",
                                             "id": "shop.clean_orders"}
    # never a run: the program has none, and a window ending before the declaration shows none of it
    with psycopg.connect(libpq(warehouse.url)) as conn:
        assert conn.execute("""select count(*) from lineage.runs r join lineage.programs p using (program_key)
                               where p.program = 'shop.clean_orders'""").fetchone() == (0,)
    before = lineage(api, f"datasets/{table('clean_orders')}", end=str(int(declared_at.timestamp())))
    assert [r["program"] for r in before["relations"]] == ["spark.default.A.Report"]
    # a run of the same job (dbt-ol's RunEvent) reading what it declared: one relation, run and declared
    ran = T0 + timedelta(hours=3)
    api.compact([wrap({"eventType": "COMPLETE", "eventTime": ran.isoformat(), "producer": "dbt-ol",  # type: ignore[attr-defined]
                       "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
                       "run": {"runId": "01934a6e-0000-7000-8000-000000000001"},
                       "job": {"namespace": "dbt", "name": "shop.clean_orders", "facets": {"jobType": {
                           "_producer": "dbt-ol", "_schemaURL": "https://openlineage.io/spec/facets/2-0-3/"
                           "JobTypeJobFacet.json", "integration": "DBT", "jobType": "MODEL",
                           "processingType": "BATCH"}}},
                       "inputs": [{"namespace": "postgres://db:5432", "name": "shop.public.raw_orders"}]},
                      NamespaceMap())])
    body = lineage(api, f"datasets/{table('clean_orders')}")
    read = next(r for r in body["relations"] if r["program"] == model and r["access"] == "read")
    assert body["programs"][model]["jobType"] == "dbt_model"  # its jobType facet: the page tells a model apart
    assert body["programs"]["spark.default.A.Report"]["jobType"] is None
    assert (read["runs"], read["runCount"], read["declared"]) == (["01934a6e-0000-7000-8000-000000000001"], 1, True)
    # a later declaration replaces the earlier, whatever the order they arrive in; the run's read stays
    api.compact([job_event("shop.clean_orders", declared_at + timedelta(hours=1), ["orders_v2"],  # type: ignore[attr-defined]
                           ["clean_orders"])])
    api.compact([job_event("shop.clean_orders", declared_at - timedelta(hours=1), ["legacy_orders"],  # type: ignore[attr-defined]
                           ["clean_orders"])])  # older, arriving last: changes nothing
    now = {(r["data"].rsplit(".", 1)[-1], r["access"], r["declared"], r["runCount"])
           for r in lineage(api, f"datasets/{table('clean_orders')}")["relations"] if r["program"] == model}
    assert now == {("orders_v2", "read", True, 0), ("clean_orders", "write", True, 0), ("raw_orders", "read", False, 1)}
    # sent again later, the same declaration still shows in a window ending before the re-send
    api.compact([job_event("shop.clean_orders", declared_at + timedelta(hours=5), ["orders_v2"],  # type: ignore[attr-defined]
                           ["clean_orders"])])
    earlier = lineage(api, f"datasets/{table('clean_orders')}", end=str(int((declared_at + timedelta(hours=2)
                                                                             ).timestamp())))
    assert {(r["data"].rsplit(".", 1)[-1], r["declared"]) for r in earlier["relations"] if r["program"] == model} == {
        ("orders_v2", True), ("clean_orders", True), ("raw_orders", False)}
    # what changed compares what ran: declared lineage is in neither walk
    diff = api.get(f"/v3/namespaces/default/datasets/{table('clean_orders')}/lineage/diff",
                   params={"start": str(int(T0.timestamp())), "end": str(int(T1.timestamp()))}).json()
    assert [(r["program"], r["change"]) for r in diff["relations"]] == [("spark.default.A.Report", "added")]


def test_a_job_event_of_no_dataset_ends_the_declaration_and_an_older_one_arriving_after_adds_nothing(
        api: TestClient, warehouse: Warehouse) -> None:
    """Before: a JobEvent listing no dataset (a dbt model removed from the manifest's lineage, a
    view dropped) changed nothing, and a declaration older than it, compacted after it, came back
    (the latest declaration was the latest access kept). A declaration is now the whole of it."""
    model = "openlineage.dbt.dbt.shop.audit_orders"
    declared_at = T0 + timedelta(hours=2)
    assert api.put("/v3/namespaces/dbt").status_code in (200, 201)

    def declared() -> set[tuple[str, str]]:
        with psycopg.connect(libpq(warehouse.url)) as conn:
            return set(conn.execute(
                """select d.dataset, a.access from lineage.declared_accesses a
                   join lineage.programs p using (program_key) join lineage.datasets d using (dataset_key)
                   where p.program = 'shop.audit_orders'""").fetchall())

    api.compact([job_event("shop.audit_orders", declared_at, ["raw_orders"], ["audit_orders"])])  # type: ignore[attr-defined]
    assert declared() == {("postgres://db:5432/shop.public.raw_orders", "read"),
                          ("postgres://db:5432/shop.public.audit_orders", "write")}
    api.compact([job_event("shop.audit_orders", declared_at + timedelta(hours=1), [], [])])  # type: ignore[attr-defined]
    assert declared() == set()
    api.compact([job_event("shop.audit_orders", declared_at + timedelta(minutes=30), ["legacy_orders"],  # type: ignore[attr-defined]
                           ["audit_orders"])])  # older than the empty one, arriving after it
    assert declared() == set()
    body = lineage(api, f"datasets/{quote('postgres://db:5432/shop.public.raw_orders', safe='')}")
    assert [r for r in body["relations"] if r["program"] == model] == []
    # declared again later: it holds
    api.compact([job_event("shop.audit_orders", declared_at + timedelta(hours=2), ["orders_v2"], [])])  # type: ignore[attr-defined]
    assert declared() == {("postgres://db:5432/shop.public.orders_v2", "read")}


def test_run_accesses_and_program_runs(api: TestClient) -> None:
    response = api.get("/v3/namespaces/default/apps/PurchaseHistory/mapreduce/PurchaseHistoryBuilder/runs/"
                       "283-99sd032-adsf90/accesses")
    assert response.status_code == 200
    body = response.json()
    assert (body["run_id"], body["status"], body["started_at"]) == (
        "283-99sd032-adsf90", "completed", int((T0 + timedelta(hours=1)).timestamp()))
    assert [(a["type"], a["name"], a["access"]) for a in body["accesses"]] == [
        ("dataset", "frequentCustomers", "write"), ("dataset", "history", "write")]
    runs = api.get("/v3/namespaces/default/apps/PurchaseHistory/mapreduce/PurchaseHistoryBuilder/runs",
                   params={"start": str(int(T0.timestamp())), "end": str(int(T1.timestamp()))}).json()["runs"]
    assert sorted(run["run_id"] for run in runs) == ["283-88wedfk-09wrff", "283-99sd032-adsf90", "283-afsd032-adsf90"]


@pytest.mark.parametrize(
    ("path", "params", "status", "message"),
    [
        ("datasets/purchases/lineage", {"start": "now", "end": "now-1h"}, 400, "start 'now' is after end 'now-1h'"),
        ("datasets/purchases/lineage", {"start": "yesterday"}, 400, "start 'yesterday' is not epoch seconds"),
        ("datasets/purchases/lineage", {"levels": "0"}, 400,
         "levels must be between 1 and 100 (LINEAGE_LIMIT_LEVELS), got 0"),
        ("datasets/purchases/lineage", {"levels": "101"}, 400,
         "levels must be between 1 and 100 (LINEAGE_LIMIT_LEVELS), got 101"),
        ("datasets/purchases/lineage", {"levels": "ten"}, 400, "levels"),
        ("datasets/purchases/lineage", {"collapse": "program"}, 400, "collapse 'program' is not one of"),
        ("apps/PurchaseHistory/flow/PurchaseFlow/runs/nope/accesses", {}, 404, "run 'nope' of flow"),
        ("apps/PurchaseHistory/flow/Nope/runs", {}, 404, "flow PurchaseHistory.Nope not found"),
    ],
)
def test_bad_requests_get_json_errors_with_a_message(
    api: TestClient, path: str, params: dict[str, str], status: int, message: str
) -> None:
    response = api.get(f"/v3/namespaces/default/{path}", params=params)
    assert response.status_code == status
    assert message in response.json()["message"]


def test_unknown_namespace_is_404_and_unknown_dataset_is_empty(api: TestClient) -> None:
    missing = api.get("/v3/namespaces/nowhere/datasets/purchases/lineage")
    assert (missing.status_code, missing.json()["message"]) == (404, "namespace 'nowhere' not found")
    body = lineage(api, "datasets/never_seen")
    assert (body["relations"], body["programs"], body["data"]) == ([], {}, {})


def test_external_sources_appear_once_per_stream_source_and_day(api: TestClient) -> None:
    from lineage.client.external import external_stream_events

    writes = [external_stream_events("default", "clickStream", "web-shop", T0 + timedelta(hours=hour))
              for hour in (1, 5, 23)]
    api.compact([e for batch in writes for e in batch])  # type: ignore[attr-defined]
    external = [r for r in lineage(api, "streams/clickStream")["relations"] if r["program"].startswith("external.")]
    assert external == [{"data": "stream.default.clickStream", "program": "external.default._external.web-shop",
                         "access": "write", "runs": ["2026-11-20"], "components": [], "runCount": 1,
                         "firstRun": int(T0.timestamp()), "lastRun": int(T0.timestamp()), "latestRun": "2026-11-20",
                         "declared": False}]


def test_lineage_before_the_marts_are_built_is_503_with_a_hint(warehouse_db: str,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import psycopg

    with psycopg.connect(libpq(warehouse_db), autocommit=True) as conn:  # compacted, but no dbt build yet
        conn.execute("insert into lineage.datasets (namespace, dataset_type, dataset) "
                     "values ('default', 'dataset', 'd')")
        entity_keys.fill_missing(conn)
    with logged_in_client(warehouse_db, monkeypatch) as api:  # the app's pool reads its warehouse once
        response = api.get("/v3/namespaces/default/datasets/d/lineage")
    assert response.status_code == 503
    assert "lineage_marts.lineage_walk does not exist yet" in response.json()["message"]


def diff(api: TestClient, path: str, **params: Any) -> dict[str, Any]:
    query = {"start": str(int(D2.timestamp())), "end": str(int((D2 + timedelta(days=1)).timestamp())), **params}
    response = api.get(f"/v3/namespaces/default/{path}/lineage/diff", params=query)
    assert response.status_code == 200, response.text
    return response.json()


@pytest.fixture(scope="module")
def shop(warehouse: Warehouse) -> None:
    warehouse.compact(shop_history())


def test_the_diff_of_a_day_against_the_day_before_names_the_new_consumer_and_what_stopped(
        api: TestClient, shop: None) -> None:
    body = diff(api, "datasets/dx_orders")
    assert (body["baseStart"], body["baseEnd"]) == (int(D1.timestamp()), int(D2.timestamp()))
    changes = {(r["data"], r["program"], r["access"]): r for r in body["relations"]}
    assert {key: r["change"] for key, r in changes.items()} == {
        ("dataset.default.dx_orders", "spark.default.Shop.Audit", "read"): "added",
        ("dataset.default.dx_orders", "spark.default.Shop.Feed", "write"): "unchanged",
        ("dataset.default.dx_orders", "spark.default.Shop.Report", "read"): "removed",
        ("dataset.default.dx_report", "spark.default.Shop.Report", "write"): "removed",
    }
    feed = changes[("dataset.default.dx_orders", "spark.default.Shop.Feed", "write")]
    assert (feed["current"]["runCount"], feed["current"]["latestRun"], feed["base"]["runCount"]) == (2, "feed-3", 1)
    assert feed["current"]["firstRun"] == int((D2 + timedelta(hours=1)).timestamp())
    assert changes[("dataset.default.dx_orders", "spark.default.Shop.Audit", "read")]["base"] is None
    assert body["data"]["dataset.default.dx_report"]["change"] == "removed"
    assert body["programs"]["spark.default.Shop.Report"]["change"] == "removed"
    assert body["summary"]["relations"] == {"added": 1, "removed": 2, "unchanged": 1}
    assert body["summary"]["programs"] == {"added": 1, "removed": 1, "unchanged": 1}
    assert "spark.default.Shop.Audit" in body["links"]


def test_changed_true_leaves_out_what_did_not_change(api: TestClient, shop: None) -> None:
    body = diff(api, "datasets/dx_orders", changed="true")
    assert {r["change"] for r in body["relations"]} == {"added", "removed"}
    assert "spark.default.Shop.Feed" not in body["programs"]
    assert body["summary"]["relations"]["unchanged"] == 1


def test_an_explicit_base_window_and_levels(api: TestClient, shop: None) -> None:
    # the day against itself: nothing changed
    same = diff(api, "datasets/dx_orders", baseStart=str(int(D2.timestamp())),
                baseEnd=str(int((D2 + timedelta(days=1)).timestamp())))
    assert {r["change"] for r in same["relations"]} == {"unchanged"}
    # against an empty day long before: everything is added
    empty = diff(api, "datasets/dx_orders", baseStart=str(int((D1 - timedelta(days=30)).timestamp())))
    assert empty["summary"]["relations"] == {"added": 2, "removed": 0, "unchanged": 0}
    assert empty["baseEnd"] - empty["baseStart"] == 86_400


def test_a_bad_diff_request_is_a_clear_400(api: TestClient) -> None:
    path = "/v3/namespaces/default/datasets/dx_orders/lineage/diff"
    for params, message in (({"baseStart": "yesterday"}, "baseStart 'yesterday' is not epoch seconds"),
                            ({"baseStart": "now-1d", "baseEnd": "now-2d"}, "baseStart 'now-1d' is after baseEnd"),
                            ({"levels": "0"}, "levels must be between 1 and 100")):
        response = api.get(path, params=params)
        assert response.status_code == 400, response.text
        assert message in response.text


def test_runs_count_and_latest_give_counts_without_every_run_id(api: TestClient, shop: None) -> None:
    window = {"start": str(int(D2.timestamp())), "end": str(int((D2 + timedelta(days=1)).timestamp()))}
    by_ids, by_count, by_latest = (
        {r["program"]: r for r in lineage(api, "datasets/dx_orders", runs=shape, **window)["relations"]}
        for shape in ("ids", "count", "latest"))
    feed = "spark.default.Shop.Feed"
    assert by_ids[feed]["runs"] == ["feed-2", "feed-3"]
    assert by_count[feed]["runs"] == [] and by_latest[feed]["runs"] == ["feed-3"]
    for answer in (by_ids, by_count, by_latest):
        assert (answer[feed]["runCount"], answer[feed]["latestRun"]) == (2, "feed-3")
    response = api.get("/v3/namespaces/default/datasets/dx_orders/lineage", params={"runs": "all"})
    assert response.status_code == 400 and "runs 'all' is not one of ids, count, latest" in response.text


def test_at_gives_the_lineage_as_it_stood_then(api: TestClient, shop: None) -> None:
    """at= is the lookback window ending then: on the base day, Report still read the orders."""
    end_of_d1 = str(int(D2.timestamp()))
    as_of = lineage(api, "datasets/dx_orders", at=end_of_d1, lookback="1d", start=None, end=None)
    window = lineage(api, "datasets/dx_orders", start=str(int(D1.timestamp())), end=end_of_d1)
    assert as_of["relations"] == window["relations"] and as_of["start"] == int(D1.timestamp())
    assert {r["program"] for r in as_of["relations"]} == {"spark.default.Shop.Feed", "spark.default.Shop.Report"}
    path = "/v3/namespaces/default/datasets/dx_orders/lineage"
    for params, message in (({"at": end_of_d1, "start": "0"}, "give at (with lookback) or start and end, not both"),
                            ({"lookback": "1d"}, "lookback is the length of the window before at: give at too"),
                            ({"at": end_of_d1, "lookback": "a week"}, "lookback 'a week' is not a duration")):
        response = api.get(path, params=params)
        assert response.status_code == 400 and message in response.text, response.text


# Run-level lineage: raw is written twice, each version cleaned once, the report reads the
# second clean and a reference table nobody writes.
D3 = datetime(2026, 11, 15, 0, 0, tzinfo=UTC)


def at(hour: int, minute: int = 0) -> datetime:
    return D3 + timedelta(hours=hour, minutes=minute)


@pytest.fixture(scope="module")
def overwritten(warehouse: Warehouse) -> None:
    warehouse.compact([
        *run_events("spark", "Ingest", "ingest-1", at(1), at(1, 10), [("dataset.rl_raw", "write", "")],
                    application="Runs"),
        *run_events("spark", "Ingest", "ingest-2", at(3), at(3, 10), [("dataset.rl_raw", "write", "")],
                    application="Runs"),
        *run_events("spark", "Clean", "clean-1", at(2), at(2, 20),
                    [("dataset.rl_raw", "read", ""), ("dataset.rl_clean", "write", "")], application="Runs"),
        *run_events("spark", "Clean", "clean-2", at(4), at(4, 20),
                    [("dataset.rl_raw", "read", ""), ("dataset.rl_clean", "write", "")], application="Runs"),
        *run_events("spark", "Report", "report-1", at(5), at(5, 5),
                    [("dataset.rl_clean", "read", ""), ("dataset.rl_ref", "read", "")], application="Runs"),
        # a backfill running three days, its write (accessed at its start) done when it ends at 04:30
        *run_events("spark", "Backfill", "backfill-1", at(-72), at(4, 30), [("dataset.rl_raw", "write", "")],
                    application="Runs"),
        *run_events("spark", "Audit", "audit-1", at(6), at(6, 5), [("dataset.rl_raw", "read", "")],
                    application="Runs"),
        # three days later, the clean table (last written by clean-2) read again
        *run_events("spark", "Audit", "audit-2", at(72), at(72, 5), [("dataset.rl_clean", "read", "")],
                    application="Runs"),
    ])


def run_lineage(api: TestClient, program: str, run_id: str, **params: Any) -> dict[str, Any]:
    response = api.get(f"/v3/namespaces/default/apps/Runs/spark/{program}/runs/{run_id}/lineage", params=params)
    assert response.status_code == 200, response.text
    return response.json()


def test_upstream_runs_are_the_writers_of_the_versions_read(api: TestClient, overwritten: None) -> None:
    body = run_lineage(api, "Report", "report-1", levels=3)
    assert (body["run"]["run_id"], body["run"]["status"], body["run"]["level"]) == ("report-1", "completed", 0)
    assert [(r["program"], r["run_id"], r["level"]) for r in body["runs"]] == [("Clean", "clean-2", 1),
                                                                               ("Ingest", "ingest-2", 2)]
    assert [(e["writer"].rsplit(".", 1)[1], e["dataset"]["name"], e["reader"].rsplit(".", 1)[1])
            for e in body["edges"]] == [("clean-2", "rl_clean", "report-1"), ("ingest-2", "rl_raw", "clean-2")]
    assert [(e["dataset"]["name"], e["reason"]) for e in body["ends"]] == [
        ("rl_ref", "no run wrote it before this run")]
    assert body["truncated"] is False and body["runs"][0]["links"]
    # clean-1 ran between the two ingests: it read the first version
    first = run_lineage(api, "Clean", "clean-1")
    assert [r["run_id"] for r in first["runs"]] == ["ingest-1"]


def test_downstream_runs_read_a_version_before_the_next_write_replaced_it(api: TestClient, overwritten: None
                                                                          ) -> None:
    first = run_lineage(api, "Ingest", "ingest-1", direction="downstream", levels=5)
    assert [r["run_id"] for r in first["runs"]] == ["clean-1"]  # clean-2 read ingest-2's version
    assert [(e["run"].rsplit(".", 1)[1], e["dataset"]["name"], e["reason"]) for e in first["ends"]] == [
        ("clean-1", "rl_clean", "no run read it before the next write")]
    second = run_lineage(api, "Ingest", "ingest-2", direction="downstream", levels=2)
    assert [(r["run_id"], r["level"]) for r in second["runs"]] == [("clean-2", 1), ("report-1", 2), ("audit-2", 2)]
    assert second["truncated"] is False
    cut = run_lineage(api, "Ingest", "ingest-2", direction="downstream", levels=1)
    assert [r["run_id"] for r in cut["runs"]] == ["clean-2"]
    assert (cut["truncated"], cut["truncatedBy"]) == (True, "levels")


def test_a_long_run_writes_when_it_ends(api: TestClient, overwritten: None) -> None:
    """The backfill accessed rl_raw three days before its end: its version is the one read after
    04:30 (audit-1), not by clean-2 at 04:00; and it replaced ingest-2's version."""
    assert [r["run_id"] for r in run_lineage(api, "Audit", "audit-1")["runs"]] == ["backfill-1"]
    assert [r["run_id"] for r in run_lineage(api, "Backfill", "backfill-1", direction="downstream")["runs"]] == [
        "audit-1"]
    assert [r["run_id"] for r in run_lineage(api, "Ingest", "ingest-2", direction="downstream", levels=1)["runs"]
            ] == ["clean-2"]
    # a version read long after it was written (no write within the day before the read)
    assert [r["run_id"] for r in run_lineage(api, "Audit", "audit-2", levels=1)["runs"]] == ["clean-2"]


def test_run_lineage_bad_requests(api: TestClient, overwritten: None) -> None:
    base = "/v3/namespaces/default/apps/Runs/spark"
    for path, params, status, message in (
            (f"{base}/Report/runs/nope/lineage", {}, 404, "run 'nope' of spark Runs.Report not found"),
            (f"{base}/Report/runs/report-1/lineage", {"direction": "sideways"}, 400,
             "direction 'sideways' is not one of upstream, downstream"),
            (f"{base}/Report/runs/report-1/lineage", {"levels": "0"}, 400, "levels must be between 1 and 100")):
        response = api.get(path, params=params)
        assert response.status_code == status and message in response.text, response.text


def test_the_diff_lists_the_schema_changes_of_the_datasets_in_it(api: TestClient, warehouse: Warehouse,
                                                                 shop: None) -> None:
    """dx_report lost its email column on the second day; dx_orders kept its schema."""
    from lineage.model.dataset_schema import schema
    from lineage.model.metadata_entity import dataset_entity
    from warehouse.db import schema_store

    report, orders = (dataset_entity("default", "dataset", name) for name in ("dx_report", "dx_orders"))
    v1 = schema([{"name": "id", "type": "long"}, {"name": "email", "type": "string"}])
    v2 = schema([{"name": "id", "type": "long"}, {"name": "country", "type": "string"}])
    with psycopg.connect(libpq(warehouse.url), autocommit=True) as conn:
        for entity, previous, proposed, moment in ((report, None, v1, D1), (report, v1, v2, D2 + timedelta(hours=2)),
                                                   (orders, None, v1, D1 - timedelta(days=3))):
            schema_store.record_version(conn, entity, schema_store.SchemaUpdate(proposed, previous, "observed", moment),
                                        "test")
    body = diff(api, "datasets/dx_orders")
    assert list(body["schemas"]) == ["dataset.default.dx_report"]
    change = body["schemas"]["dataset.default.dx_report"]
    assert (change["baseVersion"], change["currentVersion"]) == (1, 2)
    assert ([f["name"] for f in change["added"]], [f["name"] for f in change["removed"]]) == (["country"], ["email"])
    assert body["summary"]["schemas"] == 1

"""The plugin's pages in a real browser (Playwright + Debian's headless Chromium) against a real
``airflow api-server`` running the plugin, logged in with a token from Airflow's own auth, over
data compacted by the real job and marts built by dbt. Screenshots go to test-artifacts/pages."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from playwright import sync_api as playwright_api

from lineage.settings import Settings
from spark_jobs.compaction.job import run_compaction
from spark_jobs.field_lineage.job import run_field_lineage
from tests.airflow_support import api_server, token
from tests.conftest import ROOT, create_scratch_db, drop_scratch_db
from tests.factories import declared_access, event, write_log
from warehouse.db.connection import connect
from warehouse.db.program_metadata_store import apply_program_metadata
from warehouse.pipeline.dbt_build import build_marts

ARTIFACTS = ROOT / "test-artifacts" / "pages"
CHROMIUM = "/usr/bin/chromium"
HOSTILE = "<script>alert(1)</script> & <b>bold</b>"
NOW = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
AT = NOW - timedelta(hours=20)


def iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def run(program_type: str, program: str, run_id: str, accesses: list[tuple[str, str, str]],
        field_operations: dict[str, Any] | None = None, *, schema_version: int = 1) -> list[dict[str, Any]]:
    ids = {"application": "PurchaseHistory", "program_type": program_type, "program": program, "run_id": run_id}
    events = [event("run_start", run=ids, event_time=iso(AT))]
    for data_type, name, access in accesses:
        events.append(event("dataset_access", {"dataset": {"type": data_type, "name": name}, "access": access},
                            run=ids, event_time=iso(AT + timedelta(minutes=1))))
    if field_operations:
        events.append(event("field_operations", field_operations, run=ids, event_time=iso(AT + timedelta(minutes=2)),
                            schema_version=schema_version))
    events.append(event("run_end", {"status": "completed"}, run=ids, event_time=iso(AT + timedelta(minutes=10))))
    return events


HISTORY_OPERATIONS = {"destination": {"name": "history"}, "operations": [
    {"id": "read", "type": "read", "name": "read", "inputs": [{"source": {"name": "purchases"}}],
     "outputs": ["customer", "quantity", "price"], "description": "read purchases"},
    {"id": "spend", "type": "transform", "name": "spend", "inputs": [{"field": "quantity", "origin": "read"},
                                                                     {"field": "price", "origin": "read"}],
     "outputs": ["total_spent"], "description": "sum of quantity * price"},
    {"id": "write", "type": "write", "name": "write", "inputs": [{"field": "customer", "origin": "read"},
                                                                 {"field": "total_spent", "origin": "spend"}],
     "outputs": ["customer", "total_spent"]}]}

SUM = {"type": "DIRECT", "subtype": "AGGREGATION", "description": "sum(amount)"}
# Format v2 records each input's transformation (OpenLineage's vocabulary): orders -> totals.
TOTALS_OPERATIONS = {"destination": {"name": "totals"}, "operations": [
    {"id": "read", "type": "read", "name": "read", "inputs": [{"source": {"name": "orders"}}],
     "outputs": ["customer", "amount", "email"]},
    {"id": "sum", "type": "transform", "name": "aggregation", "outputs": ["total"], "inputs": [
        {"field": "amount", "origin": "read", "transformation": SUM},
        {"field": "customer", "origin": "read", "transformation": {"type": "INDIRECT", "subtype": "GROUP_BY"}}]},
    {"id": "hash", "type": "transform", "name": "transformation", "outputs": ["email_hash"], "inputs": [
        {"field": "email", "origin": "read",
         "transformation": {"type": "DIRECT", "subtype": "TRANSFORMATION", "masking": True}}]},
    {"id": "write", "type": "write", "name": "write", "outputs": ["total", "email_hash"],
     "inputs": [{"field": "total", "origin": "sum"}, {"field": "email_hash", "origin": "hash"}]}]}


RUN_IDS = {"application": "PurchaseHistory", "program_type": "mapreduce", "program": "PurchaseHistoryBuilder"}
WEEKLY = {"application": "Reports", "program_type": "openlineage", "program": "weekly_report"}
NIGHTLY = {"application": "Nightly", "program_type": "workflow", "program": "NightlyWorkflow", "run_id": "nightly-1"}


def schema_event(operation: str, run_ids: dict[str, str], moment: datetime,
                 *fields: tuple[str, str, bool]) -> dict[str, Any]:
    """A schema change of ``purchases`` (format v2): ``set_schema`` declares, ``observe_schema`` observes."""
    return event("metadata_change", {"entity": [["namespace", "default"], ["dataset", "purchases"]],
                                     "operation": operation, "schema": {"fields": [
                                         {"name": name, "type": kind, "nullable": nullable}
                                         for name, kind, nullable in fields]}},
                 schema_version=2, run=run_ids, event_time=iso(moment))


def parent_of(run_id: str) -> dict[str, Any]:
    """A run_parent event (format v2): the builder run ``run_id`` ran inside the nightly workflow run."""
    return event("run_parent", {"parent": {"namespace": "default", **NIGHTLY}}, schema_version=2,
                 run={**RUN_IDS, "run_id": run_id}, event_time=iso(AT))


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    url = create_scratch_db("pages")
    log_root = tmp_path_factory.mktemp("raw-events")
    settings = Settings.from_env({**os.environ, "LINEAGE_LOG_ROOT": str(log_root), "LINEAGE_DATABASE_URL": url})
    write_log(log_root, [
        *run("flow", "PurchaseFlow", "flow-1", [("stream", "purchaseStream", "read"),
                                                ("dataset", "purchases", "write")]),
        *run("mapreduce", "PurchaseHistoryBuilder", "builder-1", [("dataset", "purchases", "read"),
                                                                  ("dataset", "history", "write")], HISTORY_OPERATIONS),
        *run("mapreduce", "PurchaseHistoryBuilder", "builder-2", [("dataset", "purchases", "read"),
                                                                  ("dataset", "history", "write")], HISTORY_OPERATIONS),
        *run("service", "PurchaseHistoryService", "service-1", [("dataset", "history", "unknown")]),
        declared_access("history", "read", WEEKLY, event_time=iso(AT)),  # declared lineage, no run
        *run("mapreduce", "TotalsBuilder", "totals-1", [], TOTALS_OPERATIONS, schema_version=2),
        event("run_start", run=NIGHTLY, event_time=iso(AT)), parent_of("builder-1"), parent_of("builder-2"),
        event("run_end", {"status": "completed"}, run=NIGHTLY, event_time=iso(AT + timedelta(minutes=30))),
        # purchases' schema: declared by the builder, then observed changed (as an OpenLineage schema facet is)
        schema_event("set_schema", {**RUN_IDS, "run_id": "builder-1"}, AT, ("customer", "string", False),
                     ("quantity", "int", True)),
        schema_event("observe_schema", {**RUN_IDS, "program": "PurchaseFlow", "program_type": "flow",
                                        "run_id": "flow-1"}, AT + timedelta(minutes=5),
                     ("customer", "string", False), ("price", "double", True)),
    ], hour=NOW.strftime("dt=%Y-%m-%d/hour=%H"))
    run_compaction(None, interval_end=NOW + timedelta(hours=1), settings=settings)
    run_field_lineage(None, settings)
    with connect(url) as conn:
        assert apply_program_metadata(conn).quarantined == 0
    build_marts(url, settings, command="run", select="+lineage_walk +metadata_search_terms")
    with api_server(url) as base:
        bearer = token(base, "admin", "admin").json()["access_token"]
        headers = {"Authorization": f"Bearer {bearer}"}
        purchases = f"{base}/lineage/v3/namespaces/default/datasets/purchases/metadata"
        for body, kind in (({"owner": "sales", "note": HOSTILE}, "properties"), (["PII", "finance"], "tags")):
            assert httpx.post(f"{purchases}/{kind}", json=body, headers=headers, timeout=10).status_code == 200
        yield {"base": base, "token": bearer}
    drop_scratch_db(url)


@pytest.fixture(scope="module")
def browser(site: dict[str, str]) -> Iterator[Any]:
    with playwright_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync"])
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Any, site: dict[str, str], request: pytest.FixtureRequest) -> Iterator[Any]:
    """A logged-in page (Airflow's ``_token`` cookie, as the UI sets it) that records console
    errors, failed requests and dialogs; each must stay empty."""
    context = browser.new_context(viewport={"width": 1400, "height": 900}, base_url=site["base"])
    context.add_cookies([{"name": "_token", "value": site["token"], "url": site["base"]}])
    opened = context.new_page()
    problems: list[str] = []
    opened.on("console", lambda message: problems.append(f"console {message.type}: {message.text}")
              if message.type == "error" else None)
    opened.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    opened.on("response", lambda response: problems.append(f"{response.status} {response.url}")
              if response.status >= 400 else None)
    opened.on("dialog", lambda dialog: (problems.append(f"dialog: {dialog.message}"), dialog.dismiss()))
    yield opened
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    opened.screenshot(path=str(ARTIFACTS / f"{request.node.name}.png"), full_page=True)
    context.close()
    assert problems == []


def shoot(page: Any, name: str) -> None:
    """A named screenshot of the page as it is now (the README shows these)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def api(site: dict[str, str], path: str, **params: Any) -> Any:
    response = httpx.get(f"{site['base']}/lineage/{path}", params=params,
                         headers={"Authorization": f"Bearer {site['token']}"}, timeout=10)
    assert response.status_code == 200, response.text
    return response.json()


def test_search_autocompletes_keys_then_values_and_opens_the_entity(page: Any) -> None:
    page.goto("/lineage/ui/search")
    assert "owner:" in page.locator("#keys").inner_text()  # an empty query lists the keys in use
    page.locator("#query").fill("own")
    page.locator("#suggestions li", has_text="owner:").click()
    assert page.locator("#query").input_value() == "owner:"
    page.locator("#suggestions li", has_text="owner:sales").click()
    assert page.locator("#query").input_value() == "owner:sales"
    page.locator("#search-form button[type=submit]").click()
    page.locator("#total").wait_for()
    assert page.locator("#total").inner_text() == "1\u20131 of 1 entities"
    assert "owner: sales" in page.locator("#result-list").inner_text()
    shoot(page, "search")
    page.locator("#result-list a.entity-link", has_text="purchases").click()
    page.wait_for_url("**/ui/entity?**")
    assert page.locator("h1").inner_text().endswith("purchases")


def test_entity_page_shows_scopes_apart_and_adds_and_removes_a_tag(page: Any, site: dict[str, str]) -> None:
    page.goto("/lineage/ui/entity?ns=default&target=datasets/purchases")
    user, system = page.locator("#scope-user"), page.locator("#scope-system")
    user.locator(".tags").wait_for()
    assert user.locator(".tags .value").all_inner_texts() == ["PII", "finance"]
    assert "creation-time" in system.inner_text() and "last-updated-by" in system.inner_text()
    assert page.locator("#schema tbody tr").count() == 2
    versions = page.locator("#schema-versions tbody tr")  # newest first, each with what it changed
    assert versions.count() == 2
    observed, declared = versions.nth(0).inner_text(), versions.nth(1).inner_text()
    assert "observed" in observed and "+ price double" in observed and "\u2212 quantity int" in observed
    assert "declared" in declared and "first version" in declared
    shoot(page, "entity")
    page.locator("#new-tag").fill("from-the-browser")
    page.locator("#add-tag button").click()
    user.locator(".tags .value", has_text="from-the-browser").wait_for()
    assert "from-the-browser" in api(site, "v3/namespaces/default/datasets/purchases/metadata/tags")["USER"]
    page.get_by_label("remove tags from-the-browser").click()
    user.locator(".tags .value", has_text="from-the-browser").wait_for(state="detached")
    assert "from-the-browser" not in api(site, "v3/namespaces/default/datasets/purchases/metadata/tags")["USER"]


def test_a_hostile_metadata_value_is_shown_as_text(page: Any) -> None:
    page.goto("/lineage/ui/entity?ns=default&target=datasets/purchases")
    cell = page.locator("#scope-user table.properties td.value", has_text="alert(1)")
    cell.wait_for()
    assert cell.inner_text() == HOSTILE
    assert page.locator("main script, main b").count() == 0  # no element was made from the value


def test_lineage_graph_has_the_apis_nodes_and_edges_and_leads_to_a_run(page: Any, site: dict[str, str]) -> None:
    page.goto("/lineage/ui/lineage?ns=default&type=dataset&name=purchases&range=7d&levels=10")
    page.wait_for_function("window.cy && window.cy.nodes().length > 0")
    body = api(site, "v3/namespaces/default/datasets/purchases/lineage", start="now-7d", end="now", levels=10)
    expected_nodes = sorted({r["data"] for r in body["relations"]} | {r["program"] for r in body["relations"]})
    expected_edges = sorted((r["program"], r["data"], r["access"]) if r["access"] == "write"
                            else (r["data"], r["program"], r["access"]) for r in body["relations"])
    assert sorted(page.evaluate("cy.nodes().map(n => n.id())")) == expected_nodes
    assert sorted(tuple(e) for e in page.evaluate(
        "cy.edges().map(e => [e.data('source'), e.data('target'), e.data('access')])")) == expected_edges
    assert len(expected_nodes) == 7  # purchaseStream, purchases, history, three programs and the declared one
    declared = "openlineage.default.Reports.weekly_report"
    assert page.evaluate("cy.edges('.declared').map(e => e.data('target'))") == [declared]  # drawn dashed
    assert page.evaluate("cy.edges('.declared').style('line-style')") == "dashed"
    assert "1 declared" in page.locator("#summary").inner_text()
    xs = page.evaluate("Object.fromEntries(cy.nodes().map(n => [n.id(), n.position('x')]))")
    assert xs["stream.default.purchaseStream"] < xs["dataset.default.purchases"] < xs["dataset.default.history"]
    page.evaluate("cy.$id('mapreduce.default.PurchaseHistory.PurchaseHistoryBuilder').emit('tap')")
    page.locator("#runs li").first.wait_for()
    assert sorted(page.locator("#runs a").all_inner_texts()) == ["builder-1", "builder-2"]
    shoot(page, "lineage")
    page.locator("#runs a", has_text="builder-1").click()
    page.wait_for_url("**/ui/run?**")
    page.locator("#accesses tbody tr").first.wait_for()
    assert page.locator("#run-status").inner_text() == "completed"
    shoot(page, "run")
    assert [row.split("\t")[:3] for row in page.locator("#accesses tbody tr").all_inner_texts()] == [
        ["history", "dataset", "write"], ["purchases", "dataset", "read"]]


def test_lineage_compared_with_the_window_before_colours_what_was_added(page: Any, site: dict[str, str]) -> None:
    """Everything ran in the last day: against the day before, every relation and node is added."""
    page.goto("/lineage/ui/lineage?ns=default&type=dataset&name=purchases&range=1d&levels=10&compare=1")
    page.wait_for_function("window.cy && window.cy.nodes().length > 0")
    body = api(site, "v3/namespaces/default/datasets/purchases/lineage/diff", start="now-1d", end="now", levels=10)
    assert body["summary"]["relations"]["added"] == len(body["relations"]) > 0
    assert page.evaluate("cy.edges('.added').length") == page.evaluate("cy.edges().length") == len(body["relations"])
    assert page.evaluate("cy.nodes('.added').length") == len(body["programs"]) + len(body["data"])
    assert page.locator("#compare").is_checked()
    assert f"{len(body['relations'])} added, 0 removed, 0 unchanged" in page.locator("#summary").inner_text()
    shoot(page, "lineage-compare")
    page.locator("#compare").uncheck()
    page.locator("#lineage-form button[type=submit]").click()
    page.wait_for_function("window.cy && window.cy.edges('.added').length === 0 && window.cy.edges().length > 0")
    assert "added" not in page.locator("#summary").inner_text()


def test_the_field_page_compared_with_the_window_before_lists_what_changed(page: Any, site: dict[str, str]) -> None:
    page.goto("/lineage/ui/fields?ns=default&dataset=totals&field=email_hash&range=1d&compare=1")
    page.locator("#change-summary").wait_for()
    diff = api(site, "v3/namespaces/default/datasets/totals/fields/email_hash/lineage/diff", start="now-1d", end="now")
    assert diff["summary"]["paths"]["new"] == 1 and diff["summary"]["sources"]["added"] == 1
    assert page.locator("#change-summary").inner_text() == (
        "sources: 1 added, 0 removed; paths: 1 new, 0 gone, 0 unchanged; 0 newly masked")
    assert page.locator("#changed-fields li").all_inner_texts() == ["added: orders.email"]
    assert page.locator("#changed-paths li").all_inner_texts() == ["new: read > transformation > write"]
    shoot(page, "fields-compare")
    page.locator("#compare").uncheck()
    page.wait_for_function("document.querySelector('#field-changes').children.length === 0")


def test_a_run_page_lists_the_runs_upstream_and_downstream(page: Any, site: dict[str, str]) -> None:
    """All the site's runs start at the same time, before any of their writes ended: the builder
    read versions of purchases nobody had written yet, and nobody read what flow-1 wrote."""
    builder = api(site, "v3/namespaces/default/apps/PurchaseHistory/mapreduce/PurchaseHistoryBuilder/runs/builder-1")
    page.goto("/lineage/" + builder["links"]["page"])
    page.locator("#run-upstream .ends li").first.wait_for()
    upstream = api(site, builder["links"]["run"] + "/lineage", direction="upstream")
    assert page.locator("#run-upstream .ends li").all_inner_texts() == [
        f"{end['dataset']['name']}: {end['reason']}" for end in upstream["ends"]] == [
        "purchases: no run wrote it before this run"]
    assert page.locator("#run-downstream").inner_text().count("no run read it before the next write") == 1
    shoot(page, "run-lineage")


def test_a_run_page_links_to_its_parent_whose_page_lists_its_children(page: Any, site: dict[str, str]) -> None:
    builder = api(site, "v3/namespaces/default/apps/PurchaseHistory/mapreduce/PurchaseHistoryBuilder/runs/builder-1")
    page.goto("/lineage/" + builder["links"]["page"])
    parent = page.locator("#run-parent a")
    parent.wait_for()
    assert parent.inner_text() == "Nightly.NightlyWorkflow · nightly-1"
    assert page.locator("#run-root").inner_text() == "Root: none"
    parent.click()
    page.wait_for_url("**/ui/run?**nightly-1")
    page.locator("#run-children li").first.wait_for()
    nightly = api(site, builder["parent"]["links"]["run"])
    assert page.locator("#run-children a").all_inner_texts() == [
        f"{c['application']}.{c['program']} · {c['run_id']}" for c in nightly["children"]] == [
        "PurchaseHistory.PurchaseHistoryBuilder · builder-1", "PurchaseHistory.PurchaseHistoryBuilder · builder-2"]
    assert page.locator("#run-status").inner_text() == "completed"
    assert page.locator("#run-parent").inner_text() == "Parent: none"
    assert "null" not in page.locator("main").inner_text()
    shoot(page, "run-hierarchy")
    page.locator("#run-children a", has_text="builder-2").click()
    page.wait_for_url("**/ui/run?**builder-2")
    page.locator("#accesses tbody tr").first.wait_for()
    assert page.locator("h1").inner_text() == "Run builder-2"
    assert page.locator("#run-parent a").inner_text() == "Nightly.NightlyWorkflow · nightly-1"


def test_field_provenance_switches_views_and_direction(page: Any) -> None:
    page.goto("/lineage/ui/fields?ns=default&dataset=history&field=total_spent&view=simple")
    page.wait_for_function("window.cy && window.cy.nodes().length > 0")
    simple = sorted(page.evaluate("cy.nodes().map(n => n.data('label'))"))
    assert simple == ["history.total_spent", "purchases.price", "purchases.quantity"]
    assert "2 runs" in page.locator("#path-list").inner_text()
    shoot(page, "fields-simple")
    page.locator("#view-detailed").check()
    page.wait_for_function("window.cy && window.cy.nodes('.intermediate').length > 0")
    detailed = page.evaluate("cy.edges().map(e => e.data('label'))")
    assert sorted(detailed) == ["spend", "spend", "write"]
    shoot(page, "fields-detailed")
    page.goto("/lineage/ui/fields?ns=default&dataset=purchases&field=price&direction=outgoing")
    page.locator("#impact-list li").first.wait_for()
    assert page.locator("#impact-list").inner_text() == "level 1: history.total_spent"


def test_field_page_shows_each_edges_transformation_and_a_direct_only_switch(page: Any, site: dict[str, str]) -> None:
    page.goto("/lineage/ui/fields?ns=default&dataset=totals&field=total&view=detailed")
    page.wait_for_function("window.cy && window.cy.edges().length > 0")
    edges = "cy.edges().map(e => [e.data('source'), e.data('label')]).sort()"
    assert page.evaluate(edges) == [["operation.read.amount", "aggregation\nDIRECT \u00b7 AGGREGATION"],
                                    ["operation.read.customer", "aggregation\nINDIRECT \u00b7 GROUP_BY"],
                                    ["operation.sum.total", "write"]]
    dashed = page.evaluate("cy.edges('.indirect').map(e => e.data('source'))")
    assert dashed == ["operation.read.customer"]
    badges = page.locator("#path-list .badge.transformation")
    assert badges.all_inner_texts() == ["DIRECT \u00b7 AGGREGATION", "INDIRECT \u00b7 GROUP_BY"]
    assert badges.first.get_attribute("title") == "sum(amount)"
    shoot(page, "fields-transformations")

    page.locator("#direct-only").check()
    page.wait_for_function("window.cy && window.cy.edges().length === 2")
    assert page.evaluate(edges) == [["operation.read.amount", "aggregation\nDIRECT \u00b7 AGGREGATION"],
                                    ["operation.sum.total", "write"]]
    direct = api(site, "v3/namespaces/default/datasets/totals/fields/total/lineage", start="now-7d", end="now",
                 view="detailed", transformations="direct")
    assert sorted(page.evaluate("cy.nodes().map(n => n.id())")) == sorted(
        n["id"] for n in direct["paths"][0]["graph"]["nodes"])
    assert "direct only" in page.locator("#summary").inner_text()
    assert "transformations=direct" in page.url  # the switch is kept in the page's address

    page.goto("/lineage/ui/fields?ns=default&dataset=totals&field=email_hash&view=simple&transformations=direct")
    page.wait_for_function("window.cy && window.cy.edges().length > 0")
    assert page.locator("#direct-only").is_checked()
    assert page.evaluate("cy.edges().map(e => e.data('label'))") == [
        "transformation \u2192 write\nDIRECT \u00b7 TRANSFORMATION \u00b7 masked"]


def test_field_impact_shows_transformations_and_direct_only_leaves_out_indirect_fields(page: Any) -> None:
    page.goto("/lineage/ui/fields?ns=default&dataset=orders&field=customer&direction=outgoing")
    page.locator("#impact-list li").first.wait_for()
    item = page.locator("#impact-list li")
    assert item.locator("a").inner_text() == "totals.total"
    # The list shows how the field reaches totals.total; the graph draws all of total's sources.
    assert item.locator(".badge.transformation").all_inner_texts() == ["INDIRECT \u00b7 GROUP_BY"]
    # (nodes are keyed by namespace, dataset and field; drawn with their labels)
    assert page.evaluate("cy.edges().map(e => [e.source().data('label'), e.data('label')]).sort()") == [
        ["orders.amount", "level 1\nDIRECT \u00b7 AGGREGATION"],
        ["orders.customer", "level 1\nINDIRECT \u00b7 GROUP_BY"]]
    page.locator("#direct-only").check()
    page.locator("#summary", has_text="0 downstream fields of orders.customer, direct only").wait_for()
    assert page.locator("#impact-list li").count() == 0


@pytest.mark.parametrize("path", ["/lineage/ui/search", "/lineage/ui/lineage", "/lineage/ui/fields"])
def test_pages_need_an_airflow_login(site: dict[str, str], path: str) -> None:
    assert httpx.get(f"{site['base']}{path}", timeout=10).status_code == 401
    assert httpx.get(f"{site['base']}{path}", cookies={"_token": site["token"]}, timeout=10).status_code == 200


def test_search_results_page_through_with_filters(page: Any) -> None:
    page.goto("/lineage/ui/search?query=purchase*")
    page.locator("#total").wait_for()
    assert page.locator("#total").inner_text() == "1\u20136 of 6 entities"
    assert sorted(page.locator("#result-list a.entity-link").all_inner_texts()) == [
        "PurchaseFlow", "PurchaseHistory", "PurchaseHistoryBuilder", "PurchaseHistoryService", "purchaseStream",
        "purchases"]
    page.locator("#target").select_option("stream")
    page.locator("#search-form button[type=submit]").click()
    page.locator("#total", has_text="1\u20131 of 1").wait_for()
    assert page.locator("#result-list a.entity-link").all_inner_texts() == ["purchaseStream"]


def test_where_pii_goes_shows_the_fields_carrying_it_the_stops_and_a_csv(page: Any, site: dict[str, str]) -> None:
    headers = {"Authorization": f"Bearer {site['token']}"}
    for dataset, field in (("purchases", "customer"), ("orders", "email"), ("orders", "amount")):
        tagged = httpx.post(f"{site['base']}/lineage/v3/namespaces/default/datasets/{dataset}/field/{field}"
                            "/metadata/tags", json=["PII"], headers=headers, timeout=10)
        assert tagged.status_code == 200, tagged.text
    page.goto("/lineage/ui/tags?tag=PII&range=7d")
    page.wait_for_selector("#fields tbody tr")
    rows = [row.inner_text().split("\t") for row in page.locator("#fields tbody tr").all()]
    assert [(r[1], r[2], r[3].split(" (")[0]) for r in rows] == [
        ("history", "customer", "from purchases.customer"), ("orders", "amount", "assigned"),
        ("orders", "email", "assigned"), ("purchases", "customer", "assigned")]
    stops = page.locator("#stops tbody tr").all_inner_texts()
    assert [stop.split("\t")[0] for stop in stops] == ["orders.amount → totals.total",
                                                       "orders.email → totals.email_hash"]
    assert "aggregated by sum(amount)" in stops[0] and "masked by transformation" in stops[1]
    graph = page.locator("#graph")
    assert [graph.get_attribute(f"data-{what}") for what in ("nodes", "edges", "stops")] == ["6", "1", "2"]
    href = page.locator("#csv").get_attribute("href")
    download = httpx.get(f"{site['base']}{href}", headers=headers, timeout=10)
    assert download.status_code == 200 and download.text.splitlines()[0].startswith("tag,status,namespace")
    assert sum(line.startswith("PII,stopped,") for line in download.text.splitlines()) == 2
    shoot(page, "tag-map")


def test_a_datasets_page_shows_its_incidents_and_what_their_bad_writes_reached(page: Any, site: dict[str, str]) -> None:
    incident = httpx.post(f"{site['base']}/lineage/v3/namespaces/default/datasets/purchases/incidents",
                          json={"from": str(int((AT - timedelta(minutes=1)).timestamp())),
                                "until": str(int((AT + timedelta(minutes=30)).timestamp())),
                                "reason": "<b>prices</b> in cents"},
                          headers={"Authorization": f"Bearer {site['token']}"}, timeout=10)
    assert incident.status_code == 201, incident.text
    page.goto("/lineage/ui/entity?ns=default&target=datasets/purchases")
    section = page.locator("#incidents")
    section.locator("#blast-radius").wait_for()
    assert section.locator("table.incidents td.value").inner_text() == "<b>prices</b> in cents"  # text, not markup
    assert section.locator("main b, #incidents b").count() == 0
    first = section.locator("table.blast tbody tr").first.inner_text()
    assert "flow-1" in first and "purchases" in first  # the bad write, level 0
    answer = api(site, "v3/namespaces/default/datasets/purchases/blast-radius")
    assert section.locator("table.blast tbody tr").count() == 1 + sum(
        max(1, len(level["datasets"])) for level in answer["levels"])  # a row per level's dataset, as answered
    assert page.locator("#still-affected").inner_text() == "Still affected: " + (
        ", ".join(d["name"] for d in answer["stillAffected"]) or "none")
    shoot(page, "incidents")
    page.goto("/lineage/ui/entity?ns=default&target=datasets/history")
    page.locator("#incidents").wait_for()
    assert page.locator("#incidents").inner_text().split() == ["Incidents", "none"]

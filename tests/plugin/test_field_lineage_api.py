"""Field lineage end to end: raw events -> real compaction -> Spark field lineage job -> API.

Besides the design's own example (no transformations recorded), runs of format v2 record each
input's transformation (OpenLineage's column lineage vocabulary), as any producer may."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from fastapi.testclient import TestClient

from lineage import ids
from lineage.settings import Settings
from spark_jobs.compaction.job import run_compaction
from spark_jobs.examples.user_profiles import DESTINATION_FIELDS, field_operations
from spark_jobs.field_lineage.job import run_field_lineage
from tests.airflow_support import admin_client, jwt, libpq
from tests.conftest import create_scratch_db, drop_scratch_db
from tests.factories import event, write_log

T0 = datetime(2026, 11, 20, 0, 0, tzinfo=UTC)
END = datetime(2026, 11, 21, 6, 0, tzinfo=UTC)
WINDOW = {"start": str(int(T0.timestamp())), "end": str(int((T0 + timedelta(days=1)).timestamp()))}
SEED_OPERATIONS = [operation.to_dict() for operation in field_operations()]
CHANGED_OPERATIONS = [*SEED_OPERATIONS[:-1], {"name": "create", "inputs": [{"field": "name"}, {"field": "age"}],
                                              "outputs": ["id"], "description": "id from name and age"}]


def run(program: str, run_id: str, hour: int, records: list[dict[str, Any]], version: int = 1
        ) -> list[dict[str, Any]]:
    """A run's start, its field operation records (of format ``version``), its end."""
    ids = {"application": "UserProfiles", "program_type": "mapreduce", "program": program, "run_id": run_id}
    at = T0 + timedelta(hours=hour)

    def stamp(moment: datetime) -> str:
        return moment.isoformat().replace("+00:00", "Z")

    return [event("run_start", run=ids, event_time=stamp(at), namespace="myns"),
            *[event("field_operations", record, run=ids, event_time=stamp(at + timedelta(seconds=1)),
                    namespace="myns", schema_version=version) for record in records],
            event("run_end", {"status": "completed"}, run=ids, event_time=stamp(at + timedelta(minutes=5)),
                  namespace="myns")]


def profiles(operations: list[dict[str, Any]]) -> dict[str, Any]:
    return {"destination": {"name": "mytableds"}, "operations": operations,
            "destination_fields": list(DESTINATION_FIELDS)}


SCORES = {"destination": {"name": "scores"}, "operations": [
    {"name": "read", "inputs": [{"source": {"name": "mytableds"}}], "outputs": ["id", "age"]},
    {"name": "hash", "inputs": [{"field": "id"}], "outputs": ["uid"]},
    {"type": "write", "name": "write", "inputs": [{"field": "uid"}]},
]}
NO_READ = {"destination": {"name": "broken"}, "destination_fields": ["x"],
           "operations": [{"name": "invent", "inputs": [], "outputs": ["x"]}]}

SUM = {"type": "DIRECT", "subtype": "AGGREGATION", "description": "sum(amount)", "masking": False}
GROUP = {"type": "INDIRECT", "subtype": "GROUP_BY", "masking": False}
PAID = {"type": "INDIRECT", "subtype": "FILTER", "description": "status = 'paid'", "masking": False}
HASH = {"type": "DIRECT", "subtype": "TRANSFORMATION", "description": "sha256(email)", "masking": True}
SORT = {"type": "INDIRECT", "subtype": "SORT", "description": "order by total desc", "masking": False}
COPY = {"type": "DIRECT", "subtype": "IDENTITY", "masking": False}
# orders -> totals: total = sum(amount) group by customer where status = 'paid'; email masked; customer
# written as read (no transformation recorded). totals -> report: the customers ordered by total.
TOTALS = {"destination": {"name": "totals"}, "operations": [
    {"name": "read", "inputs": [{"source": {"name": "orders"}}], "outputs": ["customer", "amount", "status", "email"]},
    {"name": "aggregation", "outputs": ["total"], "inputs": [
        {"field": "amount", "transformation": SUM}, {"field": "customer", "transformation": GROUP},
        {"field": "status", "transformation": PAID}]},
    {"name": "transformation", "outputs": ["email_hash"], "inputs": [{"field": "email", "transformation": HASH}]},
    {"type": "write", "name": "write", "inputs": [{"field": "customer"}, {"field": "total"}, {"field": "email_hash"}]},
]}
REPORT = {"destination": {"name": "report"}, "operations": [
    {"name": "read", "inputs": [{"source": {"name": "totals"}}], "outputs": ["customer", "total"]},
    {"name": "identity", "outputs": ["top_customer"], "inputs": [
        {"field": "customer", "transformation": COPY}, {"field": "total", "transformation": SORT}]},
    {"type": "write", "name": "write", "inputs": [{"field": "top_customer"}]},
]}



def contacts(source: str, transformation: dict[str, Any]) -> dict[str, Any]:
    """contacts.email_out from ``source``.email, through ``transformation``."""
    return {"destination": {"name": "contacts"}, "operations": [
        {"name": "read", "inputs": [{"source": {"name": source}}], "outputs": ["email"]},
        {"name": "sha2" if transformation.get("masking") else "copy", "outputs": ["email_out"],
         "inputs": [{"field": "email", "transformation": transformation}]},
        {"type": "write", "name": "write", "inputs": [{"field": "email_out"}]},
    ]}


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:

    url = create_scratch_db("field_lineage")
    log_root = tmp_path_factory.mktemp("raw-events")
    settings = Settings.from_env({**os.environ, "LINEAGE_LOG_ROOT": str(log_root), "LINEAGE_DATABASE_URL": url,
                                  "LINEAGE_AUTO_CREATE_NAMESPACES": "true"})  # 'myns' is created on first use
    write_log(log_root, [
        *run("ETLMapReduce", "r1", 1, [profiles(SEED_OPERATIONS)]),
        *run("ETLMapReduce", "r2", 2, [profiles(SEED_OPERATIONS)]),
        *run("ETLMapReduce", "r3", 3, [profiles(SEED_OPERATIONS)]),
        *run("ETLMapReduce", "r4", 4, [profiles(CHANGED_OPERATIONS)]),
        *run("Scoring", "s1", 5, [SCORES, NO_READ]),
        *run("Totals", "t1", 6, [TOTALS, REPORT], version=2),
        # contacts.email_out: copied from crm.email in the morning, hashed from crm_v2.email at night
        *run("Contacts", "c1", 8, [contacts("crm", COPY)], version=2),
        *run("Contacts", "c2", 20, [contacts("crm_v2", HASH)], version=2),
    ])
    run_compaction(None, interval_end=END, settings=settings)
    summary = run_field_lineage(None, settings, chunk_records=2)  # four chunks, one transaction each
    assert (summary.records, summary.sets_added, summary.runs_recorded, summary.quarantined) == (9, 7, 9, 0)
    again = run_field_lineage(None, settings)
    assert again.records == 0  # processed records are not read twice
    with admin_client(url) as client:
        yield client
    drop_scratch_db(url)


def lineage(api: TestClient, dataset: str, field: str, **params: Any) -> dict[str, Any]:
    response = api.get(f"/v3/namespaces/myns/datasets/{dataset}/fields/{field}/lineage", params={**WINDOW, **params})
    assert response.status_code == 200, response.text
    return response.json()


def test_identical_runs_group_into_one_path_and_a_changed_pipeline_adds_a_second(api: TestClient) -> None:
    body = lineage(api, "mytableds", "id")
    assert (body["fieldName"], body["startTimeInSeconds"]) == ("id", int(T0.timestamp()))
    assert [(p["runs"], p["runCount"]) for p in body["paths"]] == [(["r1", "r2", "r3"], 3), (["r4"], 1)]
    assert [op["name"] for op in body["paths"][0]["operations"]] == ["read", "parse", "concat", "create"]
    assert body["paths"][0]["operations"][3]["description"] == "creating unique id from the name field"
    assert body["paths"][1]["operations"][-1]["inputs"] == [{"field": "name", "origin": "concat"},
                                                           {"field": "age", "origin": "parse"}]
    assert body["paths"][0]["firstSeenInSeconds"] == int((T0 + timedelta(hours=1)).timestamp())
    # Unchanged fields keep one path across the change: city was produced the same way by all four runs.
    assert [p["runs"] for p in lineage(api, "mytableds", "city")["paths"]] == [["r1", "r2", "r3", "r4"]]


def test_seed_004_simple_and_detailed_views_of_id(api: TestClient) -> None:
    simple = lineage(api, "mytableds", "id", view="simple")["paths"][0]["graph"]
    assert [(e["from"], e["to"], e["names"]) for e in simple["edges"]] == [
        ("operation.read.body", "field.mytableds.id", ["parse", "concat", "create"])]
    detailed = lineage(api, "mytableds", "id", view="detailed")["paths"][0]["graph"]
    assert {(e["from"], e["to"], e["name"]) for e in detailed["edges"]} == {
        ("operation.read.body", "operation.parse.first_name", "parse"),
        ("operation.read.body", "operation.parse.last_name", "parse"),
        ("operation.parse.first_name", "operation.concat.name", "concat"),
        ("operation.parse.last_name", "operation.concat.name", "concat"),
        ("operation.concat.name", "field.mytableds.id", "create")}


def test_provenance_and_impact_follow_fields_across_datasets(api: TestClient) -> None:
    upstream = lineage(api, "scores", "uid", levels=2)["upstream"]
    assert [(u["dataset"], u["field"], u["level"], len(u["paths"])) for u in upstream] == [("mytableds", "id", 1, 2)]
    impacts = lineage(api, "user_data", "body", direction="outgoing", levels=2)["impacts"]
    assert {(i["dataset"], i["field"], i["level"]) for i in impacts} == {
        ("mytableds", f, 1) for f in DESTINATION_FIELDS} | {("scores", "uid", 2)}
    uid = next(i for i in impacts if i["field"] == "uid")
    assert uid["paths"][0]["runs"] == ["s1"]
    one_level = lineage(api, "user_data", "body", direction="outgoing", levels=1)
    assert {i["dataset"] for i in one_level["impacts"]} == {"mytableds"}
    assert one_level["truncated"] is True  # scores.uid lies one dataset further
    assert lineage(api, "user_data", "body", direction="outgoing", levels=2)["truncated"] is False


def test_an_impact_drawn_once_for_the_whole_answer(api: TestClient) -> None:
    """The one drawing is the union of the paths' drawings, each node once, its operation nodes
    named in their operation set, numbered in the answer (``operation.s<n>.<operation>.<field>``), its
    fields with their namespace."""
    each = lineage(api, "user_data", "body", direction="outgoing", levels=2, view="detailed")
    one = lineage(api, "user_data", "body", direction="outgoing", levels=2, view="detailed", graph="answer")
    drawings = [path.pop("graph") for item in each["impacts"] for path in item["paths"]]
    assert each["impacts"] == one["impacts"] and len(drawings) > len(DESTINATION_FIELDS)  # id has two paths

    def unscoped(node_id: str) -> str:  # operation.<set>.<op>.<field>, field.<namespace>.<dataset>.<field>
        kind, scope, *rest = ids.parse(node_id, 4)
        assert re.fullmatch(r"s[0-9]+", scope) if kind == "operation" else scope == "myns"  # the set's number
        return ids.render((kind, *rest))

    graph = one["graph"]
    assert [node["id"] for node in graph["nodes"]] == sorted({node["id"] for node in graph["nodes"]})
    nodes = {node["id"] for drawing in drawings for node in drawing["nodes"]}
    assert {unscoped(node["id"]) for node in graph["nodes"]} == nodes and "field.scores.uid" in nodes  # level 2
    edges = {(e["from"], e["to"], e["operation"]) for drawing in drawings for e in drawing["edges"]}
    assert {(unscoped(e["from"]), unscoped(e["to"]), e["operation"]) for e in graph["edges"]} == edges


def test_dataset_fields_say_which_have_lineage_in_the_window(api: TestClient) -> None:
    response = api.get("/v3/namespaces/myns/datasets/mytableds/lineage/fields", params=WINDOW)
    assert without_links(response.json()["fields"]) == [{"name": f, "hasLineage": True, "inSchema": False}
                                                        for f in sorted(DESTINATION_FIELDS)]
    later = api.get("/v3/namespaces/myns/datasets/mytableds/lineage/fields",
                    params={"start": str(int(END.timestamp())), "end": "now", "prefix": "na"}).json()
    assert without_links(later["fields"]) == [{"name": "name", "hasLineage": False, "inSchema": False}]
    assert later["fields"][0]["links"]["provenancePage"] == "ui/fields?ns=myns&dataset=mytableds&field=name"


def without_links(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{key: value for key, value in item.items() if key != "links"} for item in items]


def test_a_record_without_a_read_is_quarantined_and_the_runs_other_records_kept(api: TestClient) -> None:
    with psycopg.connect(libpq(api.url)) as conn:  # type: ignore[attr-defined]
        reasons = [row[0] for row in conn.execute("select reason from lineage.quarantine").fetchall()]
    assert reasons == ["field operations: there is no read operation among 'invent': "
                       "a path must start at a source dataset"]
    assert lineage(api, "scores", "uid")["paths"][0]["runs"] == ["s1"]


@pytest.mark.parametrize(("path", "params", "status", "message"), [
    ("datasets/mytableds/fields/nope/lineage", {}, 404, "field 'nope' of dataset 'mytableds' has no recorded lineage"),
    ("datasets/ghost/fields/id/lineage", {}, 404, "dataset 'ghost' not found"),
    ("datasets/mytableds/fields/id/lineage", {"view": "fancy"}, 400, "view"),
    ("datasets/mytableds/fields/id/lineage", {"direction": "sideways"}, 400, "direction"),
    ("datasets/mytableds/fields/id/lineage", {"start": "now", "end": "now-1h"}, 400, "is after end"),
    ("datasets/mytableds/fields/id/lineage", {"levels": "0"}, 400, "levels must be between 1 and 100"),
    ("datasets/totals/fields/total/lineage", {"transformations": "indirect"}, 400,
     "query.transformations: Input should be 'all' or 'direct'"),
    ("datasets/totals/fields/total/lineage", {"transformations": "DIRECT", "direction": "outgoing"}, 400,
     "transformations"),
    ("datasets/mytableds/fields/id/lineage", {"graph": "answer"}, 400,
     "graph=answer draws the answer in a view: give view=simple or view=detailed"),
    ("datasets/mytableds/fields/id/lineage", {"view": "detailed", "graph": "all"}, 400, "query.graph"),
])
def test_bad_field_lineage_requests_get_json_errors(api: TestClient, path: str, params: dict[str, str], status: int,
                                                    message: str) -> None:
    response = api.get(f"/v3/namespaces/myns/{path}", params=params)
    assert response.status_code == status
    assert message in response.json()["message"]


def orders(field: str) -> dict[str, str]:
    return {"namespace": "myns", "type": "dataset", "name": "orders", "field": field}


def test_each_input_shows_its_transformation_in_the_paths_and_both_views(api: TestClient) -> None:
    (total,) = lineage(api, "totals", "total", view="detailed")["paths"]
    aggregation = next(op for op in total["operations"] if op["name"] == "aggregation")
    assert [(item["field"], item["transformation"]) for item in aggregation["inputs"]] == [
        ("amount", SUM), ("customer", GROUP), ("status", PAID)]
    assert [(e["from"], e["name"], e.get("transformation")) for e in total["graph"]["edges"]] == [
        ("operation.aggregation.total", "write", None), ("operation.read.amount", "aggregation", SUM),
        ("operation.read.customer", "aggregation", GROUP), ("operation.read.status", "aggregation", PAID)]
    (simple,) = lineage(api, "totals", "total", view="simple")["paths"]
    assert [(e["from"], e["transformations"]) for e in simple["graph"]["edges"]] == [
        ("operation.read.amount", [SUM]), ("operation.read.customer", [GROUP]), ("operation.read.status", [PAID])]
    (masked,) = lineage(api, "totals", "email_hash", view="simple")["paths"]
    assert masked["graph"]["edges"][0]["transformations"] == [HASH]  # masking: true, shown as recorded


def test_operations_recorded_without_transformations_show_none_and_are_all_direct(api: TestClient) -> None:
    for params in ({"view": "detailed"}, {"view": "simple"}):
        body = lineage(api, "mytableds", "id", **params)
        assert "transformation" not in str(body)  # no key at all, never null
        assert lineage(api, "mytableds", "id", transformations="direct", **params) == body
    (customer,) = lineage(api, "totals", "customer", transformations="direct")["paths"]
    assert customer["sources"] == [orders("customer")]


def test_direct_only_keeps_the_chains_whose_every_edge_is_direct(api: TestClient) -> None:
    every = lineage(api, "totals", "total", view="detailed")["paths"][0]
    (direct,) = lineage(api, "totals", "total", view="detailed", transformations="direct")["paths"]
    assert direct["sources"] == [orders("amount")]
    assert [(e["from"], e.get("transformation")) for e in direct["graph"]["edges"]] == [
        ("operation.aggregation.total", None), ("operation.read.amount", SUM)]
    assert direct["runs"] == every["runs"] == ["t1"]
    assert direct["fingerprint"] != every["fingerprint"]  # the fingerprint of the path shown


def test_direct_only_provenance_and_impact_walk_direct_chains(api: TestClient) -> None:
    def upstream(**params: str) -> list[tuple[str, str, int]]:
        return [(u["dataset"], u["field"], u["level"])
                for u in lineage(api, "report", "top_customer", levels=3, **params)["upstream"]]

    assert upstream() == [("totals", "customer", 1), ("totals", "total", 1)]
    assert upstream(transformations="direct") == [("totals", "customer", 1)]

    def impacts(field: str, **params: str) -> list[tuple[str, str, int]]:
        return [(i["dataset"], i["field"], i["level"])
                for i in lineage(api, "orders", field, direction="outgoing", levels=3, **params)["impacts"]]

    assert impacts("amount") == [("totals", "total", 1), ("report", "top_customer", 2)]
    assert impacts("amount", transformations="direct") == [("totals", "total", 1)]
    assert impacts("status") == [("totals", "total", 1), ("report", "top_customer", 2)]
    assert impacts("status", transformations="direct") == []
    assert impacts("customer", transformations="direct") == [("totals", "customer", 1),
                                                              ("report", "top_customer", 2)]


def test_at_pins_provenance_and_impact_to_a_moment(api: TestClient) -> None:
    """at= with lookback is the window ending then: the same answer as that start and end."""
    as_of = {"at": WINDOW["end"], "lookback": "1d"}
    for direction, field in (("incoming", "id"), ("outgoing", "body")):
        dataset = "mytableds" if direction == "incoming" else "user_data"
        pinned = api.get(f"/v3/namespaces/myns/datasets/{dataset}/fields/{field}/lineage",
                         params={**as_of, "direction": direction, "levels": "2"})
        assert pinned.status_code == 200, pinned.text
        assert pinned.json() == lineage(api, dataset, field, direction=direction, levels=2)
    before = api.get("/v3/namespaces/myns/datasets/mytableds/fields/id/lineage",
                     params={"at": WINDOW["start"], "lookback": "1h"})
    assert before.status_code == 200 and before.json()["paths"] == []  # nothing had run yet


def diff(api: TestClient, dataset: str, field: str, **params: Any) -> dict[str, Any]:
    response = api.get(f"/v3/namespaces/myns/datasets/{dataset}/fields/{field}/lineage/diff", params=params)
    assert response.status_code == 200, response.text
    return response.json()


NIGHT = {"start": str(int((T0 + timedelta(hours=12)).timestamp())),
         "end": str(int((T0 + timedelta(days=1)).timestamp()))}  # the base: the 12 hours before


def test_the_field_diff_says_a_field_became_masked_and_its_source_changed(api: TestClient) -> None:
    body = diff(api, "contacts", "email_out", **NIGHT)
    assert (body["baseStart"], body["baseEnd"]) == (int(T0.timestamp()), int((T0 + timedelta(hours=12)).timestamp()))
    assert [(s["name"], s["field"], s["change"]) for s in body["sources"]] == [
        ("crm", "email", "removed"), ("crm_v2", "email", "added")]
    assert body["summary"] == {"sources": {"added": 1, "removed": 1, "unchanged": 0},
                               "paths": {"new": 1, "gone": 1, "unchanged": 0}, "masked": 1}
    new, gone = body["paths"]
    assert (new["change"], new["current"]["runCount"], new["base"]) == ("new", 1, None)
    assert (gone["change"], gone["replacedBy"]) == ("gone", new["fingerprint"])
    differences = gone["differences"]
    assert (differences["operationsAdded"], differences["operationsRemoved"]) == (["sha2"], ["copy"])
    [changed] = differences["transformationsChanged"]
    assert changed["summary"] == "email: DIRECT/IDENTITY -> DIRECT/TRANSFORMATION masking"
    assert (changed["masked"], changed["unmasked"]) == (True, False)
    # the reverse: from the night back to the morning, the mask is gone
    back = diff(api, "contacts", "email_out", start=WINDOW["start"], end=NIGHT["start"],
                baseStart=NIGHT["start"], baseEnd=NIGHT["end"])
    [reverse] = back["paths"][1]["differences"]["transformationsChanged"]
    assert (reverse["masked"], reverse["unmasked"]) == (False, True)


def test_the_field_diff_of_a_changed_pipeline_and_of_impact(api: TestClient) -> None:
    """r1-r3 produced id one way, r4 (hour 4) another: a gone path replaced by a new one, same sources."""
    half_past_three = str(int((T0 + timedelta(hours=3, minutes=30)).timestamp()))
    split = {"start": half_past_three, "end": WINDOW["end"], "baseStart": WINDOW["start"], "baseEnd": half_past_three}
    body = diff(api, "mytableds", "id", **split)
    assert body["summary"]["paths"] == {"new": 1, "gone": 1, "unchanged": 0}
    assert {s["change"] for s in body["sources"]} == {"unchanged"}
    gone = next(p for p in body["paths"] if p["change"] == "gone")
    assert gone["base"]["runCount"] == 3 and gone["differences"]["transformationsChanged"] == []
    same = diff(api, "mytableds", "city", changed="true", **split)
    assert same["paths"] == [] and same["summary"]["paths"]["unchanged"] == 1
    # impact: crm.email reached contacts.email_out in the morning only
    impact = diff(api, "crm", "email", direction="outgoing", **NIGHT)
    assert [(r["dataset"], r["field"], r["change"]) for r in impact["reached"]] == [
        ("contacts", "email_out", "removed")]
    assert [p["change"] for p in impact["paths"]] == ["gone"]


def test_bad_field_diff_requests(api: TestClient) -> None:
    for params, status, message in (({"baseStart": "x"}, 400, "baseStart 'x' is not epoch seconds"),
                                    ({"direction": "sideways"}, 400, "direction"),):
        response = api.get("/v3/namespaces/myns/datasets/contacts/fields/email_out/lineage/diff", params=params)
        assert response.status_code == status and message in response.text, response.text
    missing = api.get("/v3/namespaces/myns/datasets/contacts/fields/nope/lineage/diff")
    assert missing.status_code == 404 and "has no recorded lineage" in missing.text


def test_a_caller_who_may_not_read_the_program_sees_none_of_its_runs(api: TestClient) -> None:
    """READ on the dataset, none on its programs: each path shows its program hidden and none of
    its runs (run ids are the producer's text, which can name their program: a review finding)."""
    grant = {"principal": "viewer", "entity": "namespaces/myns/datasets/mytableds"}
    assert api.put("/v3/grants", json={**grant, "privilege": "READ"}).status_code == 200
    try:
        response = api.get("/v3/namespaces/myns/datasets/mytableds/fields/id/lineage", params=WINDOW,
                           headers={"Authorization": f"Bearer {jwt('viewer')}"})
        assert response.status_code == 200, response.text
        paths = response.json()["paths"]
        assert [(p["runs"], p["runCount"]) for p in paths] == [([], 0), ([], 0)]
        assert all(info["program"]["type"] == "hidden" for p in paths for info in p["programs"])
        for secret in ("ETLMapReduce", '"r1"', '"r4"'):
            assert secret not in response.text
    finally:
        assert api.request("DELETE", "/v3/grants", params=grant).status_code in (200, 204)
    assert [p["runs"] for p in lineage(api, "mytableds", "id")["paths"]] == [["r1", "r2", "r3"], ["r4"]]

"""CDAP's field lineage endpoints end to end (issue 18): records written by hand -> real
compaction -> Spark field lineage job -> API on real PostgreSQL, each answer written out by hand.

people   <- users (name, ssn dropped by dropSocial, uid, unused read and never used),
            places (city), legacy (uid): two writes into people.id (users.uid and legacy.uid);
            run by Ingest (i1 at 01:00, i2 at 03:00) and Backfill (b1 at 02:00).
report   <- people.label (Report, r1 at 02:00).
lenient  <- users.email, which the read does not list (CDAP's leniency: accepted with a warning),
            and scratch.tmp, read and dropped: scratch is a dataset only as a source (Lenient, l1 at 04:00).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from fastapi.testclient import TestClient

from lineage.settings import Settings
from spark_jobs.compaction.job import run_compaction
from spark_jobs.field_lineage.job import run_field_lineage
from tests.airflow_support import admin_client, libpq
from tests.conftest import create_scratch_db, drop_scratch_db
from tests.factories import write_log
from tests.plugin.test_field_lineage_api import END, T0, WINDOW, run

HOUR = int(T0.timestamp())


def read(op_id: str, source: str, *outputs: str) -> dict[str, Any]:
    return {"id": op_id, "name": op_id, "inputs": [{"source": {"name": source}}], "outputs": list(outputs)}


def op(op_id: str, inputs: list[tuple[str, str]], *outputs: str, kind: str | None = None) -> dict[str, Any]:
    found = {"id": op_id, "name": op_id, "outputs": list(outputs),
             "inputs": [{"field": field, "origin": origin} for field, origin in inputs]}
    return {**found, "type": kind} if kind else found


PEOPLE = {"destination": {"name": "people"}, "operations": [
    read("readUsers", "users", "name", "ssn", "uid", "unused"),
    read("readPlaces", "places", "city"),
    read("readLegacy", "legacy", "uid"),
    op("rename", [("name", "readUsers")], "full_name"),
    op("dropSocial", [("ssn", "readUsers")]),
    op("label", [("full_name", "rename"), ("city", "readPlaces")], "label"),
    op("writeMain", [("full_name", "rename"), ("label", "label"), ("uid", "readUsers")], "full_name", "label", "id",
       kind="write"),
    op("writeLegacy", [("uid", "readLegacy")], "id", kind="write"),
]}
REPORT = {"destination": {"name": "report"}, "operations": [
    read("readPeople", "people", "label"), op("write", [("label", "readPeople")], "who", kind="write")]}
LENIENT = {"destination": {"name": "lenient"}, "operations": [
    read("readUsers", "users", "name"), read("readScratch", "scratch", "tmp"),
    op("contact", [("email", "readUsers")], "contact"), op("dropTmp", [("tmp", "readScratch")]),
    op("write", [("contact", "contact")], "contact", kind="write")]}


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:

    url = create_scratch_db("field_summaries")
    log_root = tmp_path_factory.mktemp("raw-events")
    settings = Settings.from_env({**os.environ, "LINEAGE_LOG_ROOT": str(log_root), "LINEAGE_DATABASE_URL": url,
                                  "LINEAGE_AUTO_CREATE_NAMESPACES": "true"})
    write_log(log_root, [*run("Ingest", "i1", 1, [PEOPLE]), *run("Backfill", "b1", 2, [PEOPLE]),
                         *run("Report", "r1", 2, [REPORT]), *run("Ingest", "i2", 3, [PEOPLE]),
                         *run("Lenient", "l1", 4, [LENIENT])])
    run_compaction(None, interval_end=END, settings=settings)
    summary = run_field_lineage(None, settings)
    assert (summary.records, summary.sets_added, summary.quarantined) == (5, 3, 0)  # the lenient record is kept
    with admin_client(url) as client:
        yield client
    drop_scratch_db(url)


def get(api: TestClient, path: str, **params: Any) -> Any:
    response = api.get(f"/v3/namespaces/myns/datasets/{path}", params={**WINDOW, **params})
    assert response.status_code == 200, response.text
    return response.json()


def ds(name: str) -> dict[str, str]:
    return {"namespace": "myns", "dataset": name, "entity": "DATASET"}


def prog(name: str, hour: int) -> dict[str, Any]:
    return {"program": {"namespace": "myns", "application": "UserProfiles", "type": "mapreduce", "program": name,
                        "entity": "PROGRAM"}, "lastExecutedTimeInSeconds": HOUR + hour * 3600}


def end_point(name: str) -> dict[str, str]:
    return {"namespace": "myns", "name": name, "type": "dataset"}


@pytest.mark.parametrize(("path", "direction", "expected"), [
    ("people/lineage/fields/id", "incoming",
     {"incoming": [{"dataset": ds("legacy"), "fields": ["uid"]}, {"dataset": ds("users"), "fields": ["uid"]}]}),
    ("people/lineage/fields/label", "both",
     {"incoming": [{"dataset": ds("places"), "fields": ["city"]}, {"dataset": ds("users"), "fields": ["name"]}],
      "outgoing": [{"dataset": ds("report"), "fields": ["who"]}]}),
    ("users/lineage/fields/name", "outgoing", {"outgoing": [{"dataset": ds("people"),
                                                             "fields": ["full_name", "label"]}]}),
    ("users/lineage/fields/ssn", "both", {"incoming": [], "outgoing": []}),
    ("users/lineage/fields/email", "outgoing", {"outgoing": [{"dataset": ds("lenient"), "fields": ["contact"]}]}),
])
def test_field_summary_in_cdaps_shape(api: TestClient, path: str, direction: str, expected: dict[str, Any]) -> None:
    assert get(api, path, direction=direction) == expected


def test_incoming_operations_of_a_field_two_writes_wrote_with_its_programs(api: TestClient) -> None:
    body = get(api, "people/lineage/fields/id/operations", direction="incoming")
    assert body == {"incoming": [{
        "programs": [prog("Ingest", 3), prog("Backfill", 2)],
        "operations": [
            {"name": "readUsers", "description": "", "type": "read", "inputs": {"endPoint": end_point("users")},
             "outputs": {"fields": ["name", "ssn", "uid", "unused"]}},
            {"name": "readLegacy", "description": "", "type": "read", "inputs": {"endPoint": end_point("legacy")},
             "outputs": {"fields": ["uid"]}},
            {"name": "writeMain", "description": "", "type": "write",
             "inputs": {"fields": [{"origin": "readUsers", "name": "uid"}]},
             "outputs": {"endPoint": end_point("people")}},
            {"name": "writeLegacy", "description": "", "type": "write",
             "inputs": {"fields": [{"origin": "readLegacy", "name": "uid"}]},
             "outputs": {"endPoint": end_point("people")}},
        ]}]}


def test_outgoing_operations_of_a_dropped_field_end_at_its_drop(api: TestClient) -> None:
    body = get(api, "users/lineage/fields/ssn/operations")  # direction defaults to both, as in CDAP
    assert body == {"incoming": [], "outgoing": [{
        "programs": [prog("Ingest", 3), prog("Backfill", 2)],
        "operations": [
            {"name": "readUsers", "description": "", "type": "read", "inputs": {"endPoint": end_point("users")},
             "outputs": {"fields": ["name", "ssn", "uid", "unused"]}},
            {"name": "dropSocial", "description": "", "type": "transform",
             "inputs": {"fields": [{"origin": "readUsers", "name": "ssn"}]}, "outputs": {"fields": []}}]}]}


def test_outgoing_lineage_lists_drops_and_fields_that_reach_nothing(api: TestClient) -> None:
    ssn = get(api, "users/fields/ssn/lineage", direction="outgoing")
    assert [(f["destination"]["name"], f["destinationFields"], f["drops"], f["reachesNothing"], f["runs"],
             [p["program"]["program"] for p in f["programs"]]) for f in ssn["flows"]] == [
        ("people", [], [{"operation": "dropSocial", "name": "dropSocial", "description": ""}], False,
         ["b1", "i1", "i2"], ["Ingest", "Backfill"])]
    assert ssn["impacts"] == []
    unused = get(api, "users/fields/unused/lineage", direction="outgoing")
    assert [(f["destinationFields"], f["drops"], f["reachesNothing"]) for f in unused["flows"]] == [([], [], True)]
    name = get(api, "users/fields/name/lineage", direction="outgoing")
    assert [(f["destination"]["name"], f["destinationFields"], [o["id"] for o in f["operations"]])
            for f in name["flows"]] == [
        ("people", ["full_name", "label"], ["readUsers", "rename", "label", "writeMain"]),
        ("lenient", [], ["readUsers"])]
    assert name["flows"][1]["reachesNothing"] is True


def test_two_writes_into_one_field_union_their_sources_with_programs_beside_runs(api: TestClient) -> None:
    (path,) = get(api, "people/fields/id/lineage", view="detailed")["paths"]
    assert [(s["name"], s["field"]) for s in path["sources"]] == [("legacy", "uid"), ("users", "uid")]
    assert (path["runs"], path["programs"]) == (["b1", "i1", "i2"], [prog("Ingest", 3), prog("Backfill", 2)])
    assert sorted((e["from"], e["to"], e["name"]) for e in path["graph"]["edges"]) == [
        ("operation.readLegacy.uid", "field.people.id", "writeLegacy"),
        ("operation.readUsers.uid", "field.people.id", "writeMain")]


def test_a_lenient_record_is_stored_with_its_warning_shown(api: TestClient) -> None:
    warning = [{"operation": "contact", "message": "input field 'email' is not an output of its origin "
                                                   "'readUsers'; taken as read by 'readUsers'"}]
    (path,) = get(api, "lenient/fields/contact/lineage", view="detailed")["paths"]
    assert (path["warnings"], path["graph"]["warnings"]) == (warning, warning)
    assert [(s["name"], s["field"]) for s in path["sources"]] == [("users", "email")]
    (operations,) = get(api, "lenient/lineage/fields/contact/operations", direction="incoming")["incoming"]
    assert operations["warnings"] == warning


def test_all_field_lineage_of_a_dataset_in_one_answer(api: TestClient) -> None:
    body = get(api, "people/lineage/allfieldlineage", direction="both")
    assert body == {
        "direction": "BOTH", "start-ts": int(WINDOW["start"]) * 1000, "end-ts": int(WINDOW["end"]) * 1000,
        "entityId": ds("people"), "fields": ["full_name", "id", "label"],
        "incoming": [
            {"entityId": ds("legacy"), "fieldCount": 1, "relations": [{"source": "uid", "destination": "id"}]},
            {"entityId": ds("places"), "fieldCount": 1, "relations": [{"source": "city", "destination": "label"}]},
            {"entityId": ds("users"), "fieldCount": 4, "relations": [
                {"source": "name", "destination": "full_name"}, {"source": "name", "destination": "label"},
                {"source": "uid", "destination": "id"}]}],
        "outgoing": [
            {"entityId": ds("report"), "fieldCount": 1, "relations": [{"source": "label", "destination": "who"}]}]}
    assert get(api, "people/lineage/allfieldlineage", direction="incoming")["outgoing"] == []


def test_source_only_datasets_are_datasets_with_their_fields(api: TestClient) -> None:
    # users.unused was read and reached nothing: no lineage. users.ssn was dropped: it has some.
    assert [(f["name"], f["hasLineage"]) for f in get(api, "users/lineage/fields")["fields"]] == [
        (name, True) for name in ("email", "name", "ssn", "uid")]
    # CDAP's getFields lists the fields written to a dataset: users is only read (issue 31 item 6)
    assert get(api, "users/lineage/fields", includeCurrent="false") == []
    assert get(api, "users/lineage/fields", includeCurrent="true") == []
    assert get(api, "people/lineage/fields", includeCurrent="false") == ["full_name", "id", "label"]
    # scratch: read only to be dropped; known, not a 404.
    assert get(api, "scratch/lineage/fields", includeCurrent="false") == []
    assert [f["drops"][0]["operation"] for f in get(api, "scratch/fields/tmp/lineage", direction="outgoing")[
        "flows"]] == ["dropTmp"]
    assert [f["name"] for f in get(api, "scratch/lineage/fields")["fields"]] == ["tmp"]


@pytest.mark.parametrize(("path", "params", "status", "message"), [
    ("nope/lineage/fields/x", {"direction": "both"}, 404, "dataset 'nope' not found in namespace 'myns'"),
    ("nope/lineage/fields/x/operations", {}, 404, "dataset 'nope' not found in namespace 'myns'"),
    ("nope/lineage/allfieldlineage", {"direction": "both"}, 404, "dataset 'nope' not found in namespace 'myns'"),
    ("people/lineage/fields/nope", {"direction": "both"}, 404, "field 'nope' of dataset 'people' has no recorded"),
    ("people/lineage/fields/nope/operations", {}, 404, "field 'nope' of dataset 'people' has no recorded"),
    ("people/lineage/fields/id", {"direction": "sideways"}, 400, "direction"),
    ("people/lineage/fields/id", {}, 400, "direction"),
    ("people/lineage/fields/id/operations", {"direction": "up"}, 400, "direction"),
    ("people/lineage/allfieldlineage", {"direction": "x"}, 400, "direction"),
])
def test_bad_requests_get_json_errors(api: TestClient, path: str, params: dict[str, str], status: int,
                                      message: str) -> None:
    response = api.get(f"/v3/namespaces/myns/datasets/{path}", params={**WINDOW, **params})
    assert response.status_code == status, response.text
    assert message in response.json()["message"]


def test_datasets_the_caller_cannot_read_stay_hidden(api: TestClient) -> None:
    from airflow.api_fastapi.app import init_auth_manager
    from airflow.api_fastapi.auth.managers.simple.user import SimpleAuthManagerUser

    from lineage.model.metadata_entity import dataset_entity
    from warehouse.db import grant_store
    from warehouse.service.authorization import Privilege

    with psycopg.connect(libpq(api.url), autocommit=True) as conn:  # type: ignore[attr-defined]
        grant_store.put_grant(conn, "viewer", dataset_entity("myns", "dataset", "people").render(), "myns",
                              Privilege.READ, "admin")
    token = init_auth_manager().generate_jwt(SimpleAuthManagerUser(username="viewer", role="viewer"))
    viewer = {"Authorization": f"Bearer {token}"}

    def as_viewer(path: str, **params: Any) -> Any:
        response = api.get(f"/v3/namespaces/myns/datasets/{path}", params={**WINDOW, **params}, headers=viewer)
        assert response.status_code == 200, response.text
        return response.json()

    hidden = {"namespace": "", "dataset": "hidden", "entity": "DATASET"}
    assert as_viewer("people/lineage/fields/label", direction="both") == {
        "incoming": [{"dataset": hidden, "fields": []}, {"dataset": hidden, "fields": []}],
        "outgoing": [{"dataset": hidden, "fields": []}]}
    (operations,) = as_viewer("people/lineage/fields/id/operations", direction="incoming")["incoming"]
    assert [o["inputs"].get("endPoint") for o in operations["operations"]][:2] == [
        {"namespace": "", "name": "", "type": "hidden"}, {"namespace": "", "name": "", "type": "hidden"}]
    assert operations["operations"][2]["outputs"]["endPoint"] == end_point("people")
    summary = as_viewer("people/lineage/allfieldlineage", direction="both")
    assert [(g["entityId"], g["fieldCount"], g["relations"]) for g in summary["incoming"]] == [(hidden, 0, [])] * 3
    assert api.get("/v3/namespaces/myns/datasets/users/lineage/fields/ssn", params={**WINDOW, "direction": "both"},
                   headers=viewer).status_code == 403
    # nothing of the unreadable datasets' fields or of report's record shows: not in the operations
    # (incoming: users' and legacy's reads; outgoing: report's record), nor in the outgoing flows
    secret = ("readUsers", "readLegacy", "readPlaces", '"uid"', '"ssn"', '"city"', "readPeople", '"who"')
    both = str(as_viewer("people/lineage/fields/id/operations", direction="both")).replace("'", '"')
    assert not [word for word in secret if word in both], both
    label = as_viewer("people/lineage/fields/label/operations", direction="outgoing")["outgoing"]
    assert [o["operations"] for o in label] == [[]] and [o["programs"] for o in label] == [[]]
    flows = api.get("/v3/namespaces/myns/datasets/people/fields/label/lineage",
                    params={**WINDOW, "direction": "outgoing"}, headers=viewer).json()["flows"]
    assert [(f["destination"], f["destinationFields"], f["operations"], f["runs"]) for f in flows] == [
        ({"namespace": "", "type": "hidden", "name": ""}, [], [], [])]

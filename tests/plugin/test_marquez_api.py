"""Marquez's read API (issue 34), read by Marquez's own Python client (``marquez-python`` 0.50, in
a venv of its own, as a user's script) from a real api-server (uvicorn serving the plugin's app)
over a warehouse compacted by the real job from OpenLineage producers' events and our own
client's: namespaces, datasets with fields and tags, versions, jobs, runs, a run by id, column
lineage of a dataset and of a field, the lineage graph, search, tags and the events, each
compared with this API's own answer; what a caller may not read stays out; bad input is a 400."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from lineage.naming.identity import exported_dataset, exported_job
from lineage.settings import Settings
from tests.airflow_support import get_ok as get
from tests.airflow_support import logged_in_client, serving
from tests.conftest import create_scratch_db, drop_scratch_db
from tests.plugin.test_openlineage_export import seeded
from tests.plugin.test_runs_api import DAG_RUN, END, LOAD_RUN
from warehouse.db.connection import connect
from warehouse.db.grant_store import put_grant
from warehouse.pipeline.dbt_build import build_marts
from warehouse.service.authorization import Privilege

ROOT = Path(__file__).resolve().parents[2]
MARQUEZ_PYTHON = ROOT / ".venv-marquez" / "bin" / "python"  # scripts/bootstrap.sh
CALLS = ROOT / "tests" / "fixtures" / "marquez" / "calls.py"
V3 = "/v3/namespaces/default"
ALL_TIME = {"start": "0", "end": str(int(END.timestamp()))}
NATIVE = "lineage://default"
CONTACTS_JOB = ("lineage://default/Crm", "spark/Contacts")
CRM_V1 = {"fields": [{"name": "email", "type": "string"}, {"name": "id", "type": "long"}]}
CRM_V2 = {"fields": [*CRM_V1["fields"], {"name": "country", "type": "string"}]}


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    url = seeded("marquez_api", tmp_path_factory.mktemp("raw-events"))  # the export's world
    build_marts(url, Settings.from_env({**os.environ, "LINEAGE_DATABASE_URL": url}), command="run",
                select="+lineage_walk +metadata_search_terms")  # the walk's mart; the search index
    yield url
    drop_scratch_db(url)


@pytest.fixture(scope="module")
def served(warehouse: str) -> Iterator[tuple[str, str, TestClient]]:
    """The plugin's app over real HTTP (uvicorn): its URL, an admin's Airflow token, and a
    TestClient of the same app for this API's own answers."""
    with pytest.MonkeyPatch.context() as patch:
        client = logged_in_client(warehouse, patch)
        with serving(client.app) as url:
            for target, tags in ((f"{V3}/datasets/contacts", ["gdpr"]), (f"{V3}/datasets/crm/field/email", ["PII"])):
                response = client.post(f"{target}/metadata/tags", json=tags)
                assert response.status_code == 200, response.text
            for schema in (CRM_V1, CRM_V2):  # two schema versions of crm, the second adding a field
                response = client.put(f"{V3}/datasets/crm/properties", json={"schema": schema})
                assert response.status_code == 200, response.text
            yield url, client.headers["Authorization"].removeprefix("Bearer "), client


def marquez(url: str, key: str, *calls: list[Any]) -> list[dict[str, Any]]:
    """Each call's ``{"answer": ...}`` or ``{"error": status}``, made by marquez-python."""
    done = subprocess.run([str(MARQUEZ_PYTHON), str(CALLS)], input=json.dumps(
        {"url": url, "key": key, "calls": [list(call) for call in calls]}), capture_output=True, text=True,
        timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return list(json.loads(done.stdout))


@pytest.fixture(scope="module")
def answers(served: tuple[str, str, TestClient]) -> dict[str, Any]:
    """The client's answers, one process for all of them."""
    url, key, _ = served
    calls = {
        "namespaces": ["list_namespaces"],
        "native": ["get_namespace", NATIVE],
        "datasets": ["list_datasets", NATIVE],
        "contacts": ["get_dataset", NATIVE, "contacts"],
        "crm": ["get_dataset", NATIVE, "crm"],
        "versions": ["list_dataset_versions", NATIVE, "crm"],
        "jobs": ["list_jobs", NATIVE + "/Purchases"],
        "ol_job": ["get_job", "default", "orders_dag.load"],
        "job": ["get_job", *CONTACTS_JOB],
        "job_runs": ["list_job_runs", NATIVE + "/Purchases", "spark/Report"],
        "ol_job_runs": ["list_job_runs", "default", "orders_dag.load"],
        "run": ["get_job_run", LOAD_RUN],
        "dataset_columns": ["get_column_lineage_by_dataset", NATIVE, "contacts"],
        "field_columns": ["get_column_lineage_by_dataset_field", NATIVE, "crm", "email", 20, True],
        "tags": ["list_tags"],
        "lineage": ["GET", "/lineage", {"nodeId": f"dataset:{NATIVE}:contacts", "depth": 5}],
        "search": ["GET", "/search", {"q": "contacts"}],
        "search_jobs": ["GET", "/search", {"q": "report", "filter": "JOB"}],
        "events": ["GET", "/events/lineage", {"limit": 1000, "sortDirection": "asc"}],
        "missing": ["get_dataset", NATIVE, "no such dataset"],
    }
    found = marquez(url, key, *calls.values())
    return dict(zip(calls, found, strict=True))


def answer(answers: dict[str, Any], name: str) -> Any:
    assert "answer" in answers[name], answers[name]
    return answers[name]["answer"]




def test_namespaces_and_datasets_are_the_openlineage_identities_the_export_gives(
        answers: dict[str, Any], served: tuple[str, str, TestClient], warehouse: str) -> None:
    with connect(warehouse) as conn:
        datasets = conn.execute("select namespace, dataset_type, dataset from lineage.datasets").fetchall()
        programs = conn.execute("select namespace, application, program_type, program from lineage.programs").fetchall()
    expected = ({exported_dataset(*row).namespace for row in datasets} | {exported_job(*row)[0] for row in programs})
    names = [item["name"] for item in answer(answers, "namespaces")["namespaces"]]
    assert names == sorted(expected) and {NATIVE, "lineage://default/Crm", "default", "s3://test-bucket"} <= set(names)
    native = answer(answers, "native")
    assert native == next(item for item in answer(answers, "namespaces")["namespaces"] if item["name"] == NATIVE)
    listed = answer(answers, "datasets")
    assert [d["name"] for d in listed["datasets"]] == ["contacts", "crm", "orders", "report", "totals"]
    assert listed["totalCount"] == 5 and {d["namespace"] for d in listed["datasets"]} == {NATIVE}
    assert answers["missing"] == {"error": 404}
    # the events the export gives name the same datasets
    events = get(served[2], "/api/v1/events/lineage", limit=1000)["events"]
    named = {(d["namespace"], d["name"]) for e in events for d in [*e.get("inputs", []), *e.get("outputs", [])]}
    assert {(NATIVE, d["name"]) for d in listed["datasets"]} <= named


def test_a_dataset_has_its_schema_tags_versions_and_column_lineage(answers: dict[str, Any],
                                                                   served: tuple[str, str, TestClient]) -> None:
    api = served[2]
    crm = answer(answers, "crm")
    ours = get(api, f"{V3}/datasets/crm/schemas")
    assert [f["name"] for f in crm["fields"]] == [f["name"] for f in CRM_V2["fields"]]
    assert [(f["name"], f["type"], f["tags"]) for f in crm["fields"]] == [
        ("email", "string", ["PII"]), ("id", "long", []), ("country", "string", [])]
    versions = answer(answers, "versions")
    assert versions["totalCount"] == len(ours["versions"]) == 2
    assert [[f["name"] for f in v["fields"]] for v in versions["versions"]] == [
        [f["name"] for f in CRM_V2["fields"]], [f["name"] for f in CRM_V1["fields"]]]  # newest first
    assert crm["currentVersion"] == versions["versions"][0]["version"] != versions["versions"][1]["version"]
    url, key, _ = served
    [again] = marquez(url, key, ["get_dataset_version", NATIVE, "crm", versions["versions"][1]["version"]])
    assert again["answer"] == versions["versions"][1]
    contacts = answer(answers, "contacts")
    assert contacts["tags"] == ["gdpr"] and contacts["lastModifiedAt"] == "2026-11-20T01:00:00Z"
    # column lineage one level up: what the export's columnLineage facet says, in Marquez's shape
    exported = next(e for e in get(api, "/api/v1/events/lineage", limit=1000)["events"]
                    if e["job"]["name"] == "spark/Contacts" and e["eventType"] == "COMPLETE")
    facet = next(d for d in exported["outputs"] if d["name"] == "contacts")["facets"]["columnLineage"]["fields"]
    assert {item["name"]: [(i["namespace"], i["dataset"], i["field"]) for i in item["inputFields"]]
            for item in contacts["columnLineage"]} == {
        name: [(i["namespace"], i["name"], i["field"]) for i in body["inputFields"]] for name, body in facet.items()}
    by_name = {item["name"]: item for item in contacts["columnLineage"]}
    assert by_name["email_hash"]["transformationType"] == "DIRECT/TRANSFORMATION (masking)"
    assert by_name["email_hash"]["transformationDescription"] == "sha2"
    assert by_name["id"]["transformationType"] == "DIRECT/IDENTITY"


def test_jobs_and_runs_are_this_apis_programs_and_runs(answers: dict[str, Any],
                                                      served: tuple[str, str, TestClient]) -> None:
    api = served[2]
    jobs = answer(answers, "jobs")
    assert [j["name"] for j in jobs["jobs"]] == ["mapreduce/Builder", "spark/Report", "workflow/PurchaseWorkflow"]
    report = jobs["jobs"][1]
    assert report["parentJobName"] == "workflow/PurchaseWorkflow" and report["parentJobUuid"] in ("wf-1", "wf-2")
    assert report["inputs"] == [{"namespace": NATIVE, "name": "totals"}]
    assert report["outputs"] == [{"namespace": NATIVE, "name": "report"}]
    runs = answer(answers, "job_runs")
    ours = get(api, f"{V3}/apps/Purchases/spark/Report/runs", **ALL_TIME)
    assert sorted(r["id"] for r in runs["runs"]) == sorted(r["run_id"] for r in ours["runs"]) == ["r-1", "r-2"]
    assert runs["totalCount"] == 2 and {r["state"] for r in runs["runs"]} == {"COMPLETED"}
    assert {r["durationMs"] for r in runs["runs"]} == {30 * 60 * 1000}
    job = answer(answers, "job")
    assert (job["id"], job["latestRun"]["id"]) == ({"namespace": CONTACTS_JOB[0], "name": CONTACTS_JOB[1]}, "c-1")
    ol_job = answer(answers, "ol_job")
    assert (ol_job["simpleName"], ol_job["parentJobName"], ol_job["parentJobUuid"]) == ("load", "orders_dag",
                                                                                       DAG_RUN)
    assert ol_job["facets"]["sql"]["query"] == "insert into totals select 1"
    run = answer(answers, "run")
    detail = get(api, f"{V3}/apps/default/openlineage/orders_dag.load/runs/{LOAD_RUN}")
    assert run["id"] == LOAD_RUN and run["state"] == "COMPLETED" == detail["status"].upper()
    assert (run["startedAt"], run["endedAt"]) == ("2026-11-20T01:01:00Z", "2026-11-20T01:05:00Z")
    assert run["nominalStartTime"] == "2026-11-20T01:00:00Z" and "nominalTime" in run["facets"]
    assert answer(answers, "ol_job_runs")["runs"] == [run]


def test_column_lineage_of_a_dataset_and_of_a_field_is_this_apis_field_lineage(
        answers: dict[str, Any], served: tuple[str, str, TestClient]) -> None:
    graph = answer(answers, "dataset_columns")["graph"]
    node = {item["id"]: item for item in graph}
    email_hash = node[f"datasetField:{NATIVE}:contacts:email_hash"]
    assert email_hash["inEdges"] == [{"origin": email_hash["id"], "destination": f"datasetField:{NATIVE}:crm:email"}]
    assert email_hash["data"]["inputFields"][0]["transformations"] == [
        {"type": "DIRECT", "subtype": "TRANSFORMATION", "masking": True, "description": "sha2"}]
    assert set(node) == {f"datasetField:{NATIVE}:{name}" for name in ("contacts:email_hash", "contacts:id",
                                                                      "crm:email", "crm:id")}
    # a field, downstream too: this API's impact of crm.email
    impact = get(served[2], f"{V3}/datasets/crm/fields/email/lineage", direction="outgoing", **ALL_TIME)
    reached = {(i["dataset"], i["field"]) for i in impact["impacts"]}
    field_graph = answer(answers, "field_columns")["graph"]
    email = next(item for item in field_graph if item["id"] == f"datasetField:{NATIVE}:crm:email")
    assert {tuple(edge["destination"].rsplit(":", 2)[1:]) for edge in email["outEdges"]} == reached == {
        ("contacts", "email_hash")}


def test_the_lineage_graph_is_this_apis_dataset_lineage(served: tuple[str, str, TestClient],
                                                       answers: dict[str, Any]) -> None:
    url, key, api = served
    ours = get(api, f"{V3}/datasets/totals/lineage", **ALL_TIME, levels=5)
    [graph, around_job] = marquez(url, key, ["GET", "/lineage", {"nodeId": f"dataset:{NATIVE}:totals", "depth": 5}],
                                  ["GET", "/lineage", {"nodeId": f"job:{NATIVE}/Purchases:spark/Report"}])
    edges = {(e["origin"], e["destination"]) for item in graph["answer"]["graph"] for e in item["outEdges"]}
    expected = set()
    for relation in ours["relations"]:
        program = ours["programs"][relation["program"]]["id"]
        job = "job:" + ":".join(exported_job(program["namespace"], program["application"], program["type"],
                                             program["id"]))
        dataset = f"dataset:{NATIVE}:{ours['data'][relation['data']]['id']['id']}"
        expected.add((dataset, job) if relation["access"] == "read" else (job, dataset))
    assert edges == expected and len(expected) == 5
    for item in graph["answer"]["graph"]:  # every edge is on both of its nodes
        assert all(item["id"] == e["destination"] for e in item["inEdges"])
        assert all(item["id"] == e["origin"] for e in item["outEdges"])
    job_nodes = {item["id"] for item in around_job["answer"]["graph"]}
    assert {f"dataset:{NATIVE}:totals", f"dataset:{NATIVE}:report", f"job:{NATIVE}/Purchases:spark/Report"} <= job_nodes
    contacts = answer(answers, "lineage")
    assert {item["id"] for item in contacts["graph"]} == {
        f"dataset:{NATIVE}:contacts", f"dataset:{NATIVE}:crm", f"job:{CONTACTS_JOB[0]}:{CONTACTS_JOB[1]}"}


def test_search_tags_and_events(answers: dict[str, Any], served: tuple[str, str, TestClient]) -> None:
    found = answer(answers, "search")
    assert {"type": "DATASET", "name": "contacts", "namespace": NATIVE, "updatedAt": None,
            "nodeId": f"dataset:{NATIVE}:contacts"} in found["results"]
    assert found["totalCount"] == len(found["results"])
    jobs = answer(answers, "search_jobs")["results"]
    assert jobs and {hit["type"] for hit in jobs} == {"JOB"} and "spark/Report" in {hit["name"] for hit in jobs}
    assert {"PII", "gdpr"} <= {tag["name"] for tag in answer(answers, "tags")["tags"]}
    events = answer(answers, "events")
    assert events == get(served[2], "/api/v1/events/lineage", limit=1000, sortDirection="asc")
    assert events["totalCount"] == len(events["events"]) > 0


def test_a_caller_reads_only_what_it_may(warehouse: str, served: tuple[str, str, TestClient]) -> None:
    with connect(warehouse) as conn:
        put_grant(conn, "contacts-reader", "namespace=default,dataset=contacts", "default", Privilege.READ, "test")
    url = served[0]
    nobody, reader = viewer_token("nobody"), viewer_token("contacts-reader")
    assert marquez(url, nobody, ["list_namespaces"], ["get_dataset", NATIVE, "contacts"],
                   ["get_job_run", LOAD_RUN]) == [{"answer": {"namespaces": []}}, {"error": 404}, {"error": 404}]
    listed, graph, crm, columns = marquez(
        url, reader, ["list_datasets", NATIVE], ["GET", "/lineage", {"nodeId": f"dataset:{NATIVE}:contacts"}],
        ["get_dataset", NATIVE, "crm"], ["get_column_lineage_by_dataset", NATIVE, "contacts"])
    assert [d["name"] for d in listed["answer"]["datasets"]] == ["contacts"] and listed["answer"]["totalCount"] == 1
    assert [item["id"] for item in graph["answer"]["graph"]] == [f"dataset:{NATIVE}:contacts"]
    assert graph["answer"]["withheld"] == 2  # crm and the job that wrote contacts
    assert crm == {"error": 404}
    assert [item["id"] for item in columns["answer"]["graph"]] == [
        f"datasetField:{NATIVE}:contacts:email_hash", f"datasetField:{NATIVE}:contacts:id"]
    assert columns["answer"]["withheld"] == 2  # crm.email and crm.id
    # what it holds nothing of whole: only the namespaces and tags of what it may read
    namespaces, tags = marquez(url, reader, ["list_namespaces"], ["list_tags"])
    assert [n["name"] for n in namespaces["answer"]["namespaces"]] == [NATIVE]
    assert [t["name"] for t in tags["answer"]["tags"]] == ["gdpr"]  # not crm.email's PII


def test_a_run_shows_only_the_datasets_and_parent_job_the_caller_may_read(warehouse: str,
                                                                          served: tuple[str, str, TestClient]) -> None:
    with connect(warehouse) as conn:
        for principal in ("report-reader", "report-and-totals-reader"):
            put_grant(conn, principal, "namespace=default,application=Purchases,type=spark,program=Report", "default",
                      Privilege.READ, "test")
        put_grant(conn, "report-and-totals-reader", "namespace=default,dataset=totals", "default", Privilege.READ,
                  "test")
    url = served[0]
    report = (NATIVE + "/Purchases", "spark/Report")
    calls = (["list_job_runs", *report], ["get_job", *report])
    runs, job = marquez(url, viewer_token("report-reader"), *calls)
    assert {(len(r["inputDatasetVersions"]), len(r["outputDatasetVersions"])) for r in runs["answer"]["runs"]} == {
        (0, 0)}  # totals and report withheld
    assert (job["answer"]["inputs"], job["answer"]["parentJobName"]) == ([], None)  # nor the workflow
    runs, job = marquez(url, viewer_token("report-and-totals-reader"), *calls)
    assert {tuple(v["datasetVersionId"]["name"] for v in r["inputDatasetVersions"]) for r in runs["answer"]["runs"]} \
        == {("totals",)}
    assert job["answer"]["inputs"] == [{"namespace": NATIVE, "name": "totals"}] and job["answer"]["outputs"] == []


def viewer_token(user: str) -> str:
    from airflow.api_fastapi.app import init_auth_manager
    from airflow.api_fastapi.auth.managers.simple.user import SimpleAuthManagerUser
    return str(init_auth_manager().generate_jwt(SimpleAuthManagerUser(username=user, role="viewer")))


@pytest.mark.parametrize(("path", "params", "message"), [
    ("/lineage", {"nodeId": "nonsense"}, "is not dataset:<namespace>:<name>"),
    ("/lineage", {"nodeId": "dataset:nothing-after"}, "has no <namespace>:<name>"),
    ("/lineage", {"nodeId": f"dataset:{NATIVE}:crm#0195f3b1-0001-7c6e-9d3f-2f1c0b8e4a01"}, "versions (#...)"),
    ("/lineage", {"nodeId": f"dataset:{NATIVE}:crm", "depth": 0}, "levels"),
    ("/column-lineage", {"nodeId": f"dataset:{NATIVE}:crm", "withDownstream": "maybe"}, "is not true or false"),
    ("/column-lineage", {"nodeId": f"job:{CONTACTS_JOB[0]}:{CONTACTS_JOB[1]}"}, "give a dataset or datasetField"),
    (f"/namespaces/{quote(NATIVE, safe='')}/datasets", {"limit": 5000}, "limit 5000 is not between 0 and 1000"),
    (f"/namespaces/{quote(NATIVE, safe='')}/jobs", {"offset": -1}, "offset -1 is negative"),
    ("/search", {"q": "x", "filter": "RUN"}, "filter 'RUN' is not DATASET or JOB"),
])
def test_bad_parameters_are_400s_naming_the_value(served: tuple[str, str, TestClient], path: str,
                                                  params: dict[str, Any], message: str) -> None:
    response = served[2].get(f"/api/v1{path}", params=params)
    assert response.status_code == 400, response.text
    assert message in response.json()["message"]


def test_unknown_and_hostile_names_are_404s_and_change_nothing(served: tuple[str, str, TestClient],
                                                              warehouse: str) -> None:
    url, key, api = served
    with connect(warehouse) as conn:
        before = conn.execute("select count(*) from lineage.runs").fetchone()
    hostile = "x'; delete from lineage.runs; --"
    assert marquez(url, key, ["get_dataset", NATIVE, hostile], ["get_namespace", hostile],
                   ["get_job", hostile, "j"], ["list_job_runs", NATIVE + "/Crm", hostile],
                   ["get_job_run", "0195f3b1-0fff-7c6e-9d3f-2f1c0b8e4aff"],
                   ["get_column_lineage_by_dataset_field", NATIVE, "crm", hostile]) == [{"error": 404}] * 5 + [
        {"answer": {"graph": [{"id": f"datasetField:{NATIVE}:crm:{hostile}", "type": "DATASET_FIELD", "data": {
            "namespace": NATIVE, "dataset": "crm", "datasetVersion": None, "field": hostile, "fieldType": None,
            "transformationDescription": None, "transformationType": None, "inputFields": []},
            "inEdges": [], "outEdges": []}], "withheld": 0}}]
    versions = f"/api/v1/namespaces/{quote(NATIVE, safe='')}/datasets/crm/versions"
    assert api.get(f"{versions}/not-a-version").status_code == 404
    with connect(warehouse) as conn:
        assert conn.execute("select count(*) from lineage.runs").fetchone() == before


def test_a_job_only_declared_by_a_job_event_has_its_edges_in_marquez_lineage(tmp_path: Path) -> None:
    """Marquez's graph around a job a JobEvent declared (no run) holds its declared inputs and
    outputs, as this API's dataset lineage does."""
    from lineage.naming.identity import NO_MAPPING
    from lineage.openlineage.mapping import wrap
    from tests.factories import write_log
    from tests.plugin.test_openlineage_export import compacted

    url = create_scratch_db("marquez_declared")
    try:
        write_log(tmp_path / "log", [wrap({
            "eventTime": "2026-11-20T10:00:00+00:00", "producer": "dbt-ol",
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent",
            "job": {"namespace": "dbt", "name": "shop.clean_orders"},
            "inputs": [{"namespace": "postgres://db:5432", "name": "shop.public.raw_orders"}],
            "outputs": [{"namespace": "postgres://db:5432", "name": "shop.public.clean_orders"}]}, NO_MAPPING)])
        compacted(url, tmp_path / "log")
        build_marts(url, Settings.from_env({**os.environ, "LINEAGE_DATABASE_URL": url}), command="run",
                    select="+lineage_walk")
        with pytest.MonkeyPatch.context() as patch:
            client = logged_in_client(url, patch)
            graph = get(client, "/api/v1/lineage", nodeId="job:dbt:shop.clean_orders", depth=2)
        edges = {(e["origin"], e["destination"]) for item in graph["graph"] for e in item["outEdges"]}
        assert edges == {("dataset:postgres://db:5432:shop.public.raw_orders", "job:dbt:shop.clean_orders"),
                         ("job:dbt:shop.clean_orders", "dataset:postgres://db:5432:shop.public.clean_orders")}
    finally:
        drop_scratch_db(url)

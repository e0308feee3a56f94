"""The blast radius of a bad dataset (issue 33), on runs compacted and derived by the real jobs
into real PostgreSQL: raw -> (Clean) -> clean -> (Report) -> report -> (Mail, with contacts) ->
mailing. Clean's run c-1 wrote bad data; Report's r-1 read it and wrote report, Mail's m-1 read
that; then c-2 rewrote clean with good data, and r-2 read the good version and rewrote report
(mailing still holds what came from the bad write). Field lineage: report's total sums clean's
amount, its customer_id copies clean's; mailing's body comes from report's total, its email
from contacts (good data: not affected)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
from fastapi.testclient import TestClient
from httpx import Response

from lineage.naming.identity import NamespaceMap
from lineage.openlineage.mapping import wrap
from lineage.settings import Settings
from spark_jobs.compaction.job import run_compaction
from spark_jobs.field_lineage.job import run_field_lineage
from tests.airflow_support import get_ok as get
from tests.airflow_support import logged_in_client
from tests.conftest import create_scratch_db, drop_scratch_db
from tests.factories import event, iso, write_log
from warehouse.db.connection import connect
from warehouse.db.grant_store import put_grant
from warehouse.service.authorization import Privilege

LINEAGE = str(Path(sys.executable).parent / "lineage")
NOW = datetime.now(UTC).replace(microsecond=0)
T0 = NOW - timedelta(hours=6)
DS = "/v3/namespaces/default/datasets"


def run(program: str, run_id: str, at: datetime, reads: list[str], writes: list[str],
        operations: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    ids = {"application": "Pipeline", "program_type": "spark", "program": program, "run_id": run_id}
    fields = [] if operations is None else [event(
        "field_operations", {"destination": {"name": writes[0]}, "operations": operations}, run=ids,
        event_time=iso(at), schema_version=2)]
    return [event("run_start", run=ids, event_time=iso(at)),
            *(event("dataset_access", {"dataset": {"name": name}, "access": "read"}, run=ids, event_time=iso(at))
              for name in reads),
            *(event("dataset_access", {"dataset": {"name": name}, "access": "write"}, run=ids, event_time=iso(at))
              for name in writes),
            *fields,
            event("run_end", {"status": "completed"}, run=ids, event_time=iso(at + timedelta(minutes=10)))]


def direct(field: str, subtype: str = "TRANSFORMATION") -> dict[str, Any]:
    return {"field": field, "transformation": {"type": "DIRECT", "subtype": subtype, "masking": False}}


REPORT = [{"name": "read", "inputs": [{"source": {"name": "clean"}}], "outputs": ["amount", "customer_id"]},
          {"name": "sum", "inputs": [direct("amount", "AGGREGATION")], "outputs": ["total"]},
          {"type": "write", "name": "write", "inputs": [{"field": "total"}, {"field": "customer_id"}]}]
MAIL = [{"id": "read_report", "name": "read", "inputs": [{"source": {"name": "report"}}], "outputs": ["total"]},
        {"id": "read_contacts", "name": "read", "inputs": [{"source": {"name": "contacts"}}], "outputs": ["email"]},
        {"name": "format", "inputs": [direct("total")], "outputs": ["body"]},
        {"type": "write", "name": "write", "inputs": [{"field": "body"}, {"field": "email"}]}]


CHECKED = T0 + timedelta(hours=1, minutes=30)
CHECK = {"eventType": "COMPLETE", "eventTime": iso(CHECKED), "producer": "https://example.com/gx",
         "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
         "run": {"runId": (CHECK_RUN := "0196a1b2-0000-7000-8000-000000000001")},
         "job": {"namespace": "lineage://default/Quality", "name": "spark/validate_report"},
         "inputs": [{"namespace": "lineage://default", "name": "report", "inputFacets": {"dataQualityAssertions": {
             "_producer": "https://example.com/gx", "_schemaURL": "https://openlineage.io/spec/facets/1-0-1/"
             "DataQualityAssertionsDatasetFacet.json", "assertions": [
                 {"assertion": "not_null", "success": False, "column": "customer_id"},
                 {"assertion": "row_count_between", "success": True},
                 {"assertion": "unique\n", "success": False}]}}}]}


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    url = create_scratch_db("blast_radius")
    log_root = tmp_path_factory.mktemp("raw-events")
    write_log(log_root, [
        *run("Clean", "c-1", T0, ["raw"], ["clean"]),  # the bad write
        *run("Report", "r-1", T0 + timedelta(hours=1), ["clean"], ["report"], REPORT),
        *run("Mail", "m-1", T0 + timedelta(hours=2), ["report", "contacts"], ["mailing"], MAIL),
        *run("Clean", "c-2", T0 + timedelta(hours=3), ["raw"], ["clean"]),  # good again
        *run("Report", "r-2", T0 + timedelta(hours=4), ["clean"], ["report"]),
        wrap(CHECK, NamespaceMap()), wrap({**CHECK, "eventType": "RUNNING"}, NamespaceMap()),  # one incident
    ], hour=T0.strftime("dt=%Y-%m-%d/hour=%H"))
    settings = Settings.from_env({**os.environ, "LINEAGE_LOG_ROOT": str(log_root), "LINEAGE_DATABASE_URL": url})
    run_compaction(None, interval_end=NOW + timedelta(hours=1), settings=settings)
    run_field_lineage(None, settings)
    with connect(url) as conn:
        put_grant(conn, "clean-reader", "namespace=default,dataset=clean", "default", Privilege.READ, "test")
    with pytest.MonkeyPatch.context() as monkeypatch, logged_in_client(url, monkeypatch) as client:
        client.extra = {"url": url, "monkeypatch": monkeypatch}  # type: ignore[attr-defined]
        yield client
    drop_scratch_db(url)


@pytest.fixture(scope="module")
def clean_incident(api: TestClient) -> Response:
    """c-1's write of clean marked bad (the tests of clean's blast radius need it, in any order)."""
    return api.post(f"{DS}/clean/incidents", json={
        "from": str(int((T0 - timedelta(minutes=1)).timestamp())),
        "until": str(int((T0 + timedelta(minutes=30)).timestamp())), "reason": "nulls in customer_id"})


def test_an_incident_is_recorded_and_listed(api: TestClient, clean_incident: Response) -> None:
    created = clean_incident
    assert created.status_code == 201, created.text
    assert created.json()["createdBy"] == "admin"
    assert [item["reason"] for item in get(api, f"{DS}/clean/incidents")] == ["nulls in customer_id"]


def test_the_blast_radius_follows_what_the_bad_write_produced_and_says_what_was_rewritten(
        api: TestClient, clean_incident: Response) -> None:
    answer = get(api, f"{DS}/clean/blast-radius")
    assert [write["run_id"] for write in answer["badWrites"]] == ["c-1"]
    assert [(level["level"], [r["run_id"] for r in level["runs"]], [d["name"] for d in level["datasets"]])
            for level in answer["levels"]] == [(1, ["r-1"], ["report"]), (2, [CHECK_RUN, "m-1"], ["mailing"])]
    assert [(d["name"], d["by"]["run_id"]) for d in answer["recovered"]] == [("clean", "c-2"), ("report", "r-2")]
    assert [d["name"] for d in answer["stillAffected"]] == ["mailing"]
    assert (answer["truncated"], answer["hidden"]) == (False, 0)
    fields = {d["name"]: [(f["name"], f["kinds"]) for f in d["fields"]]
              for level in answer["levels"] for d in level["datasets"]}
    assert fields == {"report": [("customer_id", ["DIRECT"]), ("total", ["DIRECT"])],
                      "mailing": [("body", ["DIRECT"])]}  # not email: it came from contacts
    one = get(api, f"{DS}/clean/blast-radius", levels=1)
    assert [level["level"] for level in one["levels"]] == [1] and one["truncated"]


def test_what_the_caller_may_not_read_is_left_out_and_bad_requests_are_refused(
        api: TestClient, clean_incident: Response) -> None:
    extra = api.extra  # type: ignore[attr-defined]
    with logged_in_client(extra["url"], extra["monkeypatch"], username="clean-reader", role="viewer") as client:
        narrow = get(client, f"{DS}/clean/blast-radius")
        assert narrow["levels"] == [] and narrow["stillAffected"] == [] and narrow["hidden"] > 0
        assert client.post(f"{DS}/clean/incidents", json={"from": "now-1h", "reason": "x"}).status_code == 403
    later = get(api, f"{DS}/clean/blast-radius", since=str(int((T0 + timedelta(minutes=20)).timestamp())))
    assert (later["badWrites"], later["levels"], len(later["incidents"])) == ([], [], 1)  # c-1 wrote before
    assert "since" in api.get(f"{DS}/clean/blast-radius", params={"since": "yesterday"}).text
    assert api.get(f"{DS}/clean/blast-radius", params={"since": "yesterday"}).status_code == 400
    assert api.get(f"{DS}/contacts/blast-radius").status_code == 404  # no incident
    assert api.get(f"{DS}/nothing/blast-radius").status_code == 404
    for body, message in (({"from": "yesterday", "reason": "x"}, "from"), ({"from": "now", "reason": "x"}, "same"),
                          ({"from": "now-1h"}, "reason"), ({"from": "now-1h", "reason": "x", "to": "now"}, "to")):
        refused = api.post(f"{DS}/clean/incidents", json=body)
        assert refused.status_code == 400, (body, refused.text)
        assert message in refused.text


def test_a_failed_check_in_an_openlineage_event_marks_the_version_it_read_bad(api: TestClient) -> None:
    incidents = get(api, f"{DS}/report/incidents")
    assert [(item["source"], item["reason"], item["createdBy"]) for item in incidents] == [
        ("openlineage", "failed checks: not_null (customer_id), unique", "openlineage")]  # the job is not named
    assert incidents[0]["from"] == int((T0 + timedelta(hours=1, minutes=10)).timestamp())  # r-1's write: the version
    answer = get(api, f"{DS}/report/blast-radius")
    assert [write["run_id"] for write in answer["badWrites"]] == ["r-1"]
    assert [(level["level"], [r["run_id"] for r in level["runs"]]) for level in answer["levels"]] == [
        (1, [CHECK_RUN, "m-1"])]  # the check read it too
    assert [d["name"] for d in answer["recovered"]] == ["report"]  # r-2 rewrote it


def lineage_cli(url: str, *args: str, code: int = 0) -> str:
    """The ``lineage`` command as an operator runs it, on the module's warehouse."""
    done = subprocess.run([LINEAGE, *args], env={**os.environ, "LINEAGE_DATABASE_URL": url, "COLUMNS": "250"},
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == code, (args, done.stdout, done.stderr)
    return done.stdout + done.stderr


def test_the_cli_shows_the_blast_radius_as_the_api_answers_it(api: TestClient) -> None:
    url = api.extra["url"]  # type: ignore[attr-defined]
    answer = orjson.loads(lineage_cli(url, "incidents", "blast-radius", "default", "report", "--json"))
    shown = ("incidents", "badWrites", "levels", "recovered", "stillAffected")
    assert {key: answer[key] for key in shown} == {key: get(api, f"{DS}/report/blast-radius")[key] for key in shown}
    table = lineage_cli(url, "incidents", "blast-radius", "default", "report")
    assert "mailing" in table and "body" in table and "recovered (rewritten since from good data): report" in table
    assert "still affected: mailing" in table
    assert "levels must be between 1 and 100" in lineage_cli(url, "incidents", "blast-radius", "default", "report",
                                                      "--levels", "0", code=1)
    assert "has no incident" in lineage_cli(url, "incidents", "blast-radius", "default", "contacts", code=1)
    assert "not found" in lineage_cli(url, "incidents", "blast-radius", "default", "nothing", code=1)


def test_a_failed_great_expectations_validation_becomes_an_incident_through_the_cli(
        api: TestClient, tmp_path: Path) -> None:
    import great_expectations as gx
    import pandas as pd

    context = gx.get_context(mode="ephemeral")
    batch = context.data_sources.add_pandas("mail").add_dataframe_asset("mailing").add_batch_definition_whole_dataframe(
        "all")
    suite = context.suites.add(gx.ExpectationSuite(name="mailing"))
    suite.add_expectation(gx.expectations.ExpectColumnValuesToNotBeNull(column="body"))
    suite.add_expectation(gx.expectations.ExpectTableRowCountToBeBetween(min_value=1))
    validation = context.validation_definitions.add(gx.ValidationDefinition(name="mailing", data=batch, suite=suite))
    failed = validation.run(batch_parameters={"dataframe": pd.DataFrame({"body": ["hi", None]})})
    passed = validation.run(batch_parameters={"dataframe": pd.DataFrame({"body": ["hi"]})})
    (tmp_path / "failed.json").write_bytes(orjson.dumps(failed.to_json_dict()))
    (tmp_path / "passed.json").write_bytes(orjson.dumps(passed.to_json_dict()))
    (tmp_path / "broken.json").write_text("{not json")
    (tmp_path / "other.json").write_text('{"success": false}')
    url = api.extra["url"]  # type: ignore[attr-defined]

    def cli(*args: str, code: int = 0) -> str:
        return lineage_cli(url, *args, code=code)

    checked = int((T0 + timedelta(hours=2, minutes=30)).timestamp())  # after m-1 wrote mailing
    recorded = cli("incidents", "from-gx", str(tmp_path / "failed.json"), "default", "mailing", "--at", str(checked))
    assert "great_expectations" in recorded and "expect_column_values_to_not_be_null (body)" in recorded
    assert "row_count" not in recorded  # it passed
    incidents = get(api, f"{DS}/mailing/incidents")
    assert [(item["source"], item["from"]) for item in incidents] == [
        ("great_expectations", int((T0 + timedelta(hours=2, minutes=10)).timestamp()))]  # m-1's write (its end)
    answer = get(api, f"{DS}/mailing/blast-radius")
    assert ([w["run_id"] for w in answer["badWrites"]], answer["levels"], answer["stillAffected"]) == (
        ["m-1"], [], [{"namespace": "default", "type": "dataset", "name": "mailing"}])
    assert "no failed expectation" in cli("incidents", "from-gx", str(tmp_path / "passed.json"), "default", "mailing")
    assert "is not JSON" in cli("incidents", "from-gx", str(tmp_path / "broken.json"), "default", "mailing", code=1)
    assert "not a Great Expectations result" in cli("incidents", "from-gx", str(tmp_path / "other.json"), "default",
                                                    "mailing", code=1)
    assert "not found" in cli("incidents", "from-gx", str(tmp_path / "failed.json"), "default", "nothing'; --",
                              code=1)
    assert "cannot read" in cli("incidents", "from-gx", str(tmp_path / "missing.json"), "default", "mailing", code=1)
    assert len(get(api, f"{DS}/mailing/incidents")) == 1  # the refusals recorded nothing
    assert "expect_column_values_to_not_be_null" in cli("incidents", "list", "default", "mailing")


def test_the_dag_announces_each_dataset_an_incident_reached_once(api: TestClient) -> None:
    from warehouse.pipeline.blast_announcements import due, mark_announced

    with connect(api.extra["url"]) as conn:  # type: ignore[attr-defined]
        found = [item for item in due(conn, NOW) if item.incident.source == "openlineage"]  # the check on report
        assert [(item.dataset.name, item.level, item.still) for item in found] == [
            ("report", 0, False), ("mailing", 1, True)]  # r-2 rewrote report; mailing still holds it
        extra = found[1].extra()
        assert (extra["dataset"], extra["level"], extra["stillAffected"], extra["incident"]["dataset"]) == (
            "mailing", 1, True, "report")
        assert mark_announced(conn, found) == 2
        assert [item for item in due(conn, NOW) if item.incident.source == "openlineage"] == []  # once
        assert [item for item in due(conn, NOW + timedelta(days=30)) if item.incident.source == "openlineage"] == []
        conn.rollback()

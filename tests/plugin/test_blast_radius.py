"""The blast radius of a bad dataset (issue 33), on runs compacted and derived by the real jobs
into real PostgreSQL: raw -> (Clean) -> clean -> (Report) -> report -> (Mail, with contacts) ->
mailing. Clean's run c-1 wrote bad data; Report's r-1 read it and wrote report, Mail's m-1 read
that; then c-2 rewrote clean with good data, and r-2 read the good version and rewrote report
(mailing still holds what came from the bad write). Field lineage: report's total sums clean's
amount, its customer_id copies clean's; mailing's body comes from report's total, its email
from contacts (good data: not affected)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient

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


def test_an_incident_is_recorded_and_listed(api: TestClient) -> None:
    created = api.post(f"{DS}/clean/incidents", json={
        "from": str(int((T0 - timedelta(minutes=1)).timestamp())),
        "until": str(int((T0 + timedelta(minutes=30)).timestamp())), "reason": "nulls in customer_id"})
    assert created.status_code == 201, created.text
    assert created.json()["createdBy"] == "admin"
    assert [item["reason"] for item in get(api, f"{DS}/clean/incidents")] == ["nulls in customer_id"]


def test_the_blast_radius_follows_what_the_bad_write_produced_and_says_what_was_rewritten(api: TestClient) -> None:
    answer = get(api, f"{DS}/clean/blast-radius")
    assert [write["run_id"] for write in answer["badWrites"]] == ["c-1"]
    assert [(level["level"], [r["run_id"] for r in level["runs"]], [d["name"] for d in level["datasets"]])
            for level in answer["levels"]] == [(1, ["r-1"], ["report"]), (2, ["m-1"], ["mailing"])]
    assert [(d["name"], d["by"]["run_id"]) for d in answer["recovered"]] == [("clean", "c-2"), ("report", "r-2")]
    assert [d["name"] for d in answer["stillAffected"]] == ["mailing"]
    assert (answer["truncated"], answer["hidden"]) == (False, 0)
    fields = {d["name"]: [(f["name"], f["kinds"]) for f in d["fields"]]
              for level in answer["levels"] for d in level["datasets"]}
    assert fields == {"report": [("customer_id", ["DIRECT"]), ("total", ["DIRECT"])],
                      "mailing": [("body", ["DIRECT"])]}  # not email: it came from contacts
    one = get(api, f"{DS}/clean/blast-radius", levels=1)
    assert [level["level"] for level in one["levels"]] == [1] and one["truncated"]


def test_what_the_caller_may_not_read_is_left_out_and_bad_requests_are_refused(api: TestClient) -> None:
    extra = api.extra  # type: ignore[attr-defined]
    with logged_in_client(extra["url"], extra["monkeypatch"], username="clean-reader", role="viewer") as client:
        narrow = get(client, f"{DS}/clean/blast-radius")
        assert narrow["levels"] == [] and narrow["stillAffected"] == [] and narrow["hidden"] > 0
        assert client.post(f"{DS}/clean/incidents", json={"from": "now-1h", "reason": "x"}).status_code == 403
    later = get(api, f"{DS}/clean/blast-radius", since=str(int((T0 + timedelta(minutes=20)).timestamp())))
    assert (later["badWrites"], later["levels"], len(later["incidents"])) == ([], [], 1)  # c-1 wrote before
    assert "since" in api.get(f"{DS}/clean/blast-radius", params={"since": "yesterday"}).text
    assert api.get(f"{DS}/clean/blast-radius", params={"since": "yesterday"}).status_code == 400
    assert api.get(f"{DS}/report/blast-radius").status_code == 404  # no incident
    assert api.get(f"{DS}/nothing/blast-radius").status_code == 404
    for body, message in (({"from": "yesterday", "reason": "x"}, "from"), ({"from": "now", "reason": "x"}, "same"),
                          ({"from": "now-1h"}, "reason"), ({"from": "now-1h", "reason": "x", "to": "now"}, "to")):
        refused = api.post(f"{DS}/clean/incidents", json=body)
        assert refused.status_code == 400, (body, refused.text)
        assert message in refused.text

"""Tags that follow the data (issue 33), on hand-built pipelines compacted and derived by the
real jobs into real PostgreSQL: ``users.ssn`` hashed (PII stops), ``name`` concatenated into
``full_name`` and copied on by a second program (PII carries across three datasets), ``email``
counted (PII stops at the aggregation; a tag whose policy carries aggregations goes on),
``country`` only filtering (INDIRECT: carries nothing). Through the API (why and why not) and
the DAG's propagation stage (``lineage.propagated_tags``, recomputed when a policy changes)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from lineage.errors import InvalidMetadataError
from lineage.settings import Settings
from spark_jobs.compaction.job import run_compaction
from spark_jobs.field_lineage.job import run_field_lineage
from tests.airflow_support import get_ok as get
from tests.airflow_support import logged_in_client
from tests.conftest import create_scratch_db, drop_scratch_db
from tests.factories import event, iso, write_log
from warehouse.db.connection import connect
from warehouse.db.grant_store import put_grant
from warehouse.pipeline.dbt_build import build_marts
from warehouse.pipeline.tag_propagation import propagate_tags
from warehouse.service.authorization import Privilege
from warehouse.service.tag_propagation import parse_policy

NOW = datetime.now(UTC).replace(microsecond=0)
AT = NOW - timedelta(hours=2)
DS = "/v3/namespaces/default/datasets"
POLICIES = '{"PII": "default", "contact": "carries=IDENTITY,TRANSFORMATION,AGGREGATION"}'
IDENTITY = {"type": "DIRECT", "subtype": "IDENTITY", "masking": False}


def transformed(field: str, subtype: str = "TRANSFORMATION", *, kind: str = "DIRECT",
                masking: bool = False) -> dict[str, Any]:
    return {"field": field, "transformation": {"type": kind, "subtype": subtype, "masking": masking}}


def run_of(program: str, run_id: str, source: str, destination: str, operations: list[dict[str, Any]],
           at: datetime) -> list[dict[str, Any]]:
    run = {"application": "Crm", "program_type": "spark", "program": program, "run_id": run_id}
    record = {"destination": {"name": destination}, "operations": operations}
    return [event("run_start", run=run, event_time=iso(at)),
            event("dataset_access", {"dataset": {"name": source}, "access": "read"}, run=run, event_time=iso(at)),
            event("dataset_access", {"dataset": {"name": destination}, "access": "write"}, run=run,
                  event_time=iso(at)),
            event("field_operations", record, run=run, event_time=iso(at), schema_version=2),
            event("run_end", {"status": "completed"}, run=run, event_time=iso(at + timedelta(minutes=5)))]


def pipelines() -> list[dict[str, Any]]:
    """users -> (Profiles) -> profiles -> (Stats) -> stats."""
    profiles = [
        {"name": "read", "inputs": [{"source": {"name": "users"}}],
         "outputs": ["ssn", "name", "email", "id", "country"]},
        # the filter keeps each field's value (IDENTITY) and decides its rows (country, INDIRECT FILTER);
        # one operation per field: every output of an operation depends on all its inputs
        *({"id": f"where_{f}", "name": "where country = 'FR'", "outputs": [f],
           "inputs": [transformed("country", "FILTER", kind="INDIRECT"), {"field": f, "transformation": IDENTITY}]}
          for f in ("ssn", "name", "email", "id")),
        {"name": "sha2", "inputs": [transformed("ssn", masking=True)], "outputs": ["ssn_hash"]},
        {"name": "concat", "inputs": [transformed("name")], "outputs": ["full_name"]},
        {"type": "write", "name": "write", "inputs": [{"field": f} for f in ("id", "email", "ssn_hash", "full_name")]},
    ]
    stats = [
        {"name": "read", "inputs": [{"source": {"name": "profiles"}}], "outputs": ["email", "full_name", "ssn_hash"]},
        {"name": "count", "inputs": [transformed("email", "AGGREGATION")], "outputs": ["email_count"]},
        {"name": "join on ssn_hash", "inputs": [transformed("ssn_hash", "JOIN", kind="INDIRECT"),
                                                {"field": "full_name", "transformation": IDENTITY}],
         "outputs": ["full_name"]},
        {"type": "write", "name": "write", "inputs": [{"field": "email_count"}, {"field": "full_name"}]},
    ]
    return [*run_of("Profiles", "p-1", "users", "profiles", profiles, AT),
            *run_of("Stats", "s-1", "profiles", "stats", stats, AT + timedelta(minutes=30))]


def settings_of(url: str, log_root: Path, policies: str = POLICIES) -> Settings:
    return Settings.from_env({**os.environ, "LINEAGE_LOG_ROOT": str(log_root), "LINEAGE_DATABASE_URL": url,
                              "LINEAGE_TAG_POLICIES": policies})


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    url = create_scratch_db("tag_propagation")
    log_root = tmp_path_factory.mktemp("raw-events")
    write_log(log_root, pipelines(), hour=AT.strftime("dt=%Y-%m-%d/hour=%H"))
    settings = settings_of(url, log_root)
    run_compaction(None, interval_end=NOW + timedelta(hours=1), settings=settings)
    run_field_lineage(None, settings)
    yield url, log_root
    drop_scratch_db(url)


@pytest.fixture(scope="module")
def api(world: tuple[str, Path]) -> Iterator[TestClient]:
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("LINEAGE_TAG_POLICIES", POLICIES)
        with logged_in_client(world[0], monkeypatch) as client:
            for field, tags in (("ssn", ["PII"]), ("name", ["PII"]), ("email", ["PII", "contact"]),
                                ("country", ["PII"])):
                tagged = client.post(f"{DS}/users/field/{field}/metadata/tags", json=tags)
                assert tagged.status_code == 200, tagged.text
            yield client


def tags(api: TestClient, dataset: str, field: str, **params: str) -> dict[str, Any]:
    return get(api, f"{DS}/{dataset}/fields/{field}/tags", **params)


def origins(answer: dict[str, Any]) -> list[tuple[str, str, str, int]]:
    return sorted((item["tag"], item["from"]["dataset"], item["from"]["field"], item["levels"])
                  for item in answer["propagated"])


def test_a_concatenated_name_carries_pii_with_its_path(api: TestClient) -> None:
    answer = tags(api, "profiles", "full_name")
    assert answer["assigned"] == []
    assert origins(answer) == [("PII", "users", "name", 1)]
    step = answer["propagated"][0]["path"][0]
    assert (step["operations"], step["transformation"]["subtype"], step["program"]["program"], step["runs"]) == (
        ["concat"], "TRANSFORMATION", "Profiles", ["p-1"])


def test_pii_follows_the_values_across_three_datasets_and_two_programs(api: TestClient) -> None:
    answer = tags(api, "stats", "full_name")
    assert origins(answer) == [("PII", "users", "name", 2)]  # not ssn: the join key carries nothing
    assert [step["program"]["program"] for step in answer["propagated"][0]["path"]] == ["Profiles", "Stats"]
    assert answer["propagated"][0]["runs"] == ["p-1", "s-1"]


def test_a_hash_stops_pii_and_the_explanation_says_where_and_why(api: TestClient) -> None:
    answer = tags(api, "profiles", "ssn_hash", explain="PII")
    assert answer["propagated"] == []
    assert sorted((stop["from"]["field"], stop["reason"]) for stop in answer["stopped"]) == [
        ("country", "used as FILTER (INDIRECT) by sha2, where country = 'FR' in spark Crm.Profiles: "
                    "no value flows"),  # the operations on its way: the filter, then the hash
        ("ssn", "masked by sha2 in spark Crm.Profiles")]
    assert "stopped" not in tags(api, "profiles", "ssn_hash")  # only when asked
    unset = tags(api, "profiles", "ssn_hash", explain="secret")  # a tag without a policy
    assert unset["explainedWith"].startswith("no policy: as the default") and unset["stopped"] == []
    assert "secret" not in unset["policies"]


def test_a_count_stops_pii_by_default_and_carries_a_tag_whose_policy_says_so(api: TestClient) -> None:
    answer = tags(api, "stats", "email_count", explain="PII")
    assert origins(answer) == [("contact", "users", "email", 2)]
    assert sorted((stop["from"]["field"], stop["reason"]) for stop in answer["stopped"]) == [
        ("country", "used as FILTER (INDIRECT) by where country = 'FR' in spark Crm.Profiles: no value flows"),
        ("email", "aggregated by count in spark Crm.Stats")]  # every stop upstream of the count
    assert answer["policies"] == {"PII": "carries=IDENTITY,TRANSFORMATION; masked=stop",
                                  "contact": "carries=AGGREGATION,IDENTITY,TRANSFORMATION; masked=stop"}


def test_a_field_assigned_a_tag_shows_it_as_assigned_not_propagated(api: TestClient) -> None:
    answer = tags(api, "users", "email")
    assert answer["assigned"] == [{"tag": "PII", "scope": "USER"}, {"tag": "contact", "scope": "USER"}]
    assert answer["propagated"] == []


def test_what_the_caller_may_not_read_is_hidden_and_unknown_names_are_404(world: tuple[str, Path],
                                                                         api: TestClient) -> None:
    with connect(world[0]) as conn:
        put_grant(conn, "stats-reader", "namespace=default,dataset=stats", "default", Privilege.READ, "test")
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("LINEAGE_TAG_POLICIES", POLICIES)
        with logged_in_client(world[0], monkeypatch, username="stats-reader", role="viewer") as client:
            answer = tags(client, "stats", "full_name")
            assert answer["propagated"][0]["from"] == {
                "namespace": "", "dataset": "hidden", "field": ""}
            assert [step["program"]["type"] for step in answer["propagated"][0]["path"]] == ["hidden", "hidden"]
            assert client.get(f"{DS}/profiles/fields/full_name/tags").status_code == 403
    missing = api.get(f"{DS}/no_such/fields/x/tags")
    assert missing.status_code == 404 and "dataset 'no_such' not found" in missing.json()["message"]
    assert api.get(f"{DS}/stats/fields/x/tags", params={"start": "later"}).status_code == 400


def test_the_dag_stage_writes_each_reach_and_recomputes_when_a_policy_changes(world: tuple[str, Path],
                                                                             api: TestClient) -> None:
    url, log_root = world
    summary = propagate_tags(url, settings_of(url, log_root))
    assert (summary.tags, summary.origins) == (2, 5)

    def reached() -> list[tuple[str, str, str, str]]:
        with connect(url) as conn:
            return [tuple(row) for row in conn.execute(
                "select tag, dataset, field, origin_field from lineage.propagated_tags order by 1, 2, 3, 4")]

    assert reached() == [("PII", "profiles", "email", "email"), ("PII", "profiles", "full_name", "name"),
                         ("PII", "stats", "full_name", "name"), ("contact", "profiles", "email", "email"),
                         ("contact", "stats", "email_count", "email")]
    propagate_tags(url, settings_of(url, log_root, '{"PII": "masked=carry"}'))  # hashes carry PII now
    assert reached() == [("PII", "profiles", "email", "email"), ("PII", "profiles", "full_name", "name"),
                         ("PII", "profiles", "ssn_hash", "ssn"), ("PII", "stats", "full_name", "name")]


@pytest.mark.parametrize(("text", "message"), [
    ("carries=IDENTITY,FILTER", "only DIRECT subtypes"), ("masked=maybe", "stop or carry"),
    ("levels=0", "a whole number from 1 to 100"), ("depth=3", "not one of carries, masked, levels"),
    ("carries", "is not key=value"),
])
def test_a_bad_policy_is_refused_with_its_reason(text: str, message: str) -> None:
    with pytest.raises(InvalidMetadataError, match=message):
        parse_policy(text)


def test_search_finds_fields_and_datasets_carrying_a_tag_and_says_how(world: tuple[str, Path],
                                                                     api: TestClient) -> None:
    url, log_root = world
    settings = settings_of(url, log_root)
    propagate_tags(url, settings)
    build_marts(url, settings, command="run", select="+metadata_search_terms")  # then the index, from the view

    def found(query: str) -> list[tuple[str, str, list[str]]]:
        answer = get(api, "/v3/metadata/search", query=query, limit=50)
        return sorted((item["entity"]["type"], ".".join(part["value"] for part in item["entity"]["details"][1:]),
                       sorted({match["kind"] for match in item["matches"]})) for item in answer["results"])

    assert found("tags:PII") == [
        ("dataset", "profiles", ["propagated_tag"]), ("dataset", "stats", ["propagated_tag"]),
        ("field", "profiles.email", ["propagated_tag"]), ("field", "profiles.full_name", ["propagated_tag"]),
        ("field", "stats.full_name", ["propagated_tag"]),
        ("field", "users.country", ["tag"]), ("field", "users.email", ["tag"]), ("field", "users.name", ["tag"]),
        ("field", "users.ssn", ["tag"])]
    assert found("tags:PII propagated:false") == [
        ("field", "users.country", ["tag"]), ("field", "users.email", ["tag"]), ("field", "users.name", ["tag"]),
        ("field", "users.ssn", ["tag"])]
    assert found("op:sha2") == [("field", "profiles.ssn_hash", ["operation"])]
    assert found("transform:MASKED") == [("field", "profiles.ssn_hash", ["transform"])]
    assert found("op:conc*") == [("field", "profiles.full_name", ["operation"])]
    assert found("transform:aggregation") == [("field", "stats.email_count", ["transform"])]
    # fields holding PII that went through a concat: both terms required
    assert found("+tags:PII +op:concat") == [("field", "profiles.full_name", ["operation", "propagated_tag"])]
    refused = api.get("/v3/metadata/search", params={"query": "tags:PII propagated:maybe"})
    assert refused.status_code == 400 and "propagated: takes true" in refused.json()["message"]


def test_where_pii_goes_grouped_by_dataset_with_its_stops_and_as_csv(world: tuple[str, Path], api: TestClient
                                                                    ) -> None:
    answer = get(api, "/v3/tags/PII/map")
    assert [(d["dataset"], [(f["field"], f["assigned"], [r["from"]["field"] for r in f["reached"]])
                            for f in d["fields"]]) for d in answer["datasets"]] == [
        ("profiles", [("email", False, ["email"]), ("full_name", False, ["name"])]),
        ("stats", [("full_name", False, ["name"])]),
        ("users", [("country", True, []), ("email", True, []), ("name", True, []), ("ssn", True, [])])]
    filtered = "used as FILTER (INDIRECT) by {}where country = 'FR' in spark Crm.Profiles: no value flows"
    assert sorted((stop["from"]["field"], stop["at"]["to"]["dataset"], stop["at"]["to"]["field"], stop["reason"])
                  for stop in answer["stops"]) == [
        ("country", "profiles", "email", filtered.format("")),
        ("country", "profiles", "full_name", filtered.format("concat, ")),
        ("country", "profiles", "id", filtered.format("")),
        ("country", "profiles", "ssn_hash", filtered.format("sha2, ")),
        ("email", "stats", "email_count", "aggregated by count in spark Crm.Stats"),
        ("ssn", "profiles", "ssn_hash", "masked by sha2 in spark Crm.Profiles")]  # the hash never carried PII on
    assert {(e["from"]["dataset"], e["to"]["dataset"], e["to"]["field"]) for e in answer["edges"]} == {
        ("users", "profiles", "email"), ("users", "profiles", "full_name"), ("profiles", "stats", "full_name")}
    csv_answer = api.get("/v3/tags/PII/map", params={"format": "csv"})
    assert csv_answer.status_code == 200 and csv_answer.headers["content-type"].startswith("text/csv")
    lines = csv_answer.text.splitlines()
    assert lines[0] == "tag,status,namespace,dataset,field,origin_namespace,origin_dataset,origin_field,levels," \
                       "operations,reason"
    assert "PII,propagated,default,stats,full_name,default,users,name,2,concat," in lines
    assert sum(line.startswith("PII,stopped,") for line in lines) == len(answer["stops"])
    with connect(world[0]) as conn:
        put_grant(conn, "stats-only", "namespace=default,dataset=stats", "default", Privilege.READ, "test")
    with pytest.MonkeyPatch.context() as monkeypatch:
        with logged_in_client(world[0], monkeypatch, username="stats-only", role="viewer") as client:
            narrow = get(client, "/v3/tags/PII/map")
    assert [d["dataset"] for d in narrow["datasets"]] == ["stats"] and narrow["hidden"] == 6
    assert narrow["datasets"][0]["fields"][0]["reached"] == [] and narrow["edges"] == []
    assert api.get("/v3/tags/nobody-uses-this/map").status_code == 404

"""OpenLineage out (issue 34): a window's lineage as OpenLineage 2-0-2 run events through
``GET /lineage/api/v1/events/lineage`` and ``lineage export``, on events compacted by the real
job into real PostgreSQL: OpenLineage events come back as they came, runs of our own client are
rendered (names of the reserved ``lineage://`` scheme, parent runs, column lineage with masking),
every event is valid against the vendored spec, a caller gets only what it may read, and an
export ingested into a fresh warehouse through the endpoint lands as the same runs, accesses,
hierarchy and column lineage."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
from fastapi.testclient import TestClient
from openlineage.client.serde import Serde

from lineage.naming.identity import NO_MAPPING
from lineage.openlineage.mapping import wrap
from lineage.settings import Settings
from spark_jobs.compaction.job import run_compaction
from spark_jobs.field_lineage.job import run_field_lineage
from tests.airflow_support import get_ok as get
from tests.airflow_support import logged_in_client, serving
from tests.conftest import create_scratch_db, drop_scratch_db
from tests.factories import event, iso, move_into_hour, write_log
from tests.openlineage_spec import validate_events
from tests.plugin.test_runs_api import AT, END, openlineage_events, workflow_events
from tests.unit.test_openlineage_fixtures import FIXTURES
from tests.warehouse.test_openlineage_compaction import client_for
from warehouse.db.connection import connect
from warehouse.db.grant_store import put_grant
from warehouse.db.openlineage_export_store import run_exports, snapshot, stream_window
from warehouse.db.program_metadata_store import apply_pending
from warehouse.service.authorization import Privilege
from warehouse.service.openlineage_export import PRODUCER, column_lineage_fields

EVENTS = "/api/v1/events/lineage"
LINEAGE = str(Path(sys.executable).parent / "lineage")
WINDOW = {"after": "1970-01-01T00:00:00+00:00", "before": END.isoformat()}  # the fixtures' events are older


def fixture_events() -> list[dict[str, Any]]:
    """The RunEvents of the recorded producers' fixtures (Airflow, dbt, Spark, Flink, Hive, Marquez)."""
    found = []
    for path in sorted(FIXTURES.glob("*.json")):
        loaded = orjson.loads(path.read_bytes())
        found += [item for item in (loaded if isinstance(loaded, list) else [loaded]) if "run" in item]
    return found


def masked_run() -> list[dict[str, Any]]:
    """A native run writing ``contacts`` with field lineage: an email copied and one hashed."""
    run = {"application": "Crm", "program_type": "spark", "program": "Contacts", "run_id": "c-1"}
    record = {"destination": {"name": "contacts"}, "operations": [
        {"name": "read", "inputs": [{"source": {"name": "crm"}}], "outputs": ["email", "id"]},
        {"name": "sha2", "outputs": ["email_hash"],
         "inputs": [{"field": "email", "transformation": {"type": "DIRECT", "subtype": "TRANSFORMATION",
                                                          "masking": True}}]},
        {"type": "write", "name": "write", "inputs": [{"field": "email_hash"}, {"field": "id"}]}]}
    return [event("run_start", run=run, event_time=iso(AT)),
            event("dataset_access", {"dataset": {"name": "crm"}, "access": "read"}, run=run, event_time=iso(AT)),
            event("dataset_access", {"dataset": {"name": "contacts"}, "access": "write"}, run=run,
                  event_time=iso(AT)),
            event("field_operations", record, run=run, event_time=iso(AT), schema_version=2),
            event("run_end", {"status": "completed"}, run=run, event_time=iso(AT + timedelta(minutes=5)))]


def compacted(url: str, log_root: Path, until: datetime = END + timedelta(hours=1)) -> None:
    settings = Settings.from_env({**os.environ, "LINEAGE_LOG_ROOT": str(log_root), "LINEAGE_DATABASE_URL": url,
                                  "LINEAGE_AUTO_CREATE_NAMESPACES": "true"})  # the producers' own namespaces
    run_compaction(None, interval_end=until, settings=settings)
    run_field_lineage(None, settings)
    apply_pending(url, auto_create_namespaces=True)  # schemas observed by the OpenLineage events


def seeded(name: str, log_root: Path) -> str:
    """A scratch warehouse holding the OpenLineage runs (a DAG's, the recorded producers'
    fixtures) and runs of our own client (a workflow's, one hashing a field), compacted."""
    url = create_scratch_db(name)
    client = client_for(log_root)
    move_into_hour(log_root, [client.transport.emit(e) for e in openlineage_events()])  # type: ignore[attr-defined]
    move_into_hour(log_root, [client.transport.emit(e) for e in fixture_events()])  # type: ignore[attr-defined]
    write_log(log_root, [*workflow_events(), *masked_run()])
    compacted(url, log_root)
    return url


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    url = seeded("ol_export", tmp_path_factory.mktemp("raw-events"))
    yield url
    drop_scratch_db(url)


@pytest.fixture
def api(warehouse: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    with logged_in_client(warehouse, monkeypatch) as client:
        yield client


def everything(api: TestClient, **params: Any) -> dict[str, Any]:
    return get(api, EVENTS, **WINDOW, limit=1000, sortDirection="asc", **params)


def test_openlineage_events_come_back_as_they_came_and_every_event_is_valid(api: TestClient) -> None:
    answer = everything(api)
    events = answer["events"]
    assert answer["totalCount"] == len(events) and answer["withheld"] == 0
    sent = [Serde.to_dict(e) for e in openlineage_events()] + fixture_events()
    came_back = [e for e in events if e["producer"] != PRODUCER]
    rendered = [e for e in events if e["producer"] == PRODUCER]
    assert len(rendered) == 2 * 7  # a START and an end for each of the seven runs of our client
    validate_events(rendered)  # OpenLineage 2-0-2 and each facet's own schema (a sent one may be invalid: as sent)
    assert sorted(orjson.dumps(e, option=orjson.OPT_SORT_KEYS) for e in came_back) == sorted(
        orjson.dumps(e, option=orjson.OPT_SORT_KEYS) for e in sent)
    newest_first = get(api, EVENTS, **WINDOW, limit=1000)["events"]
    assert [e["eventTime"] for e in newest_first] == [e["eventTime"] for e in reversed(events)]


def test_runs_of_our_client_are_a_start_and_an_end_named_by_the_reserved_scheme(api: TestClient) -> None:
    events = everything(api)["events"]
    report = [e for e in events if e["job"]["name"] == "spark/Report"]
    assert {e["job"]["namespace"] for e in report} == {"lineage://default/Purchases"}
    by_run: dict[str, list[str]] = {}
    for item in report:
        by_run.setdefault(item["run"]["facets"]["lineageWarehouse_run"]["runId"], []).append(item["eventType"])
    assert by_run == {"r-1": ["START", "COMPLETE"], "r-2": ["START", "COMPLETE"]}
    end = next(e for e in report if e["eventType"] == "COMPLETE"
               and e["run"]["facets"]["lineageWarehouse_run"]["runId"] == "r-1")
    assert [(d["namespace"], d["name"]) for d in end["inputs"]] == [("lineage://default", "totals")]
    assert [(d["namespace"], d["name"]) for d in end["outputs"]] == [("lineage://default", "report")]
    parent = end["run"]["facets"]["parent"]
    assert parent["job"] == {"namespace": "lineage://default/Purchases", "name": "workflow/PurchaseWorkflow"}
    assert end["run"]["facets"]["lineageWarehouse_run"]["parentRunId"] == "wf-1"
    assert end["job"]["facets"]["jobType"]["integration"] == "SPARK"
    assert end["eventTime"] == (AT + timedelta(minutes=30)).isoformat()


def test_column_lineage_keeps_each_kind_and_the_masking(api: TestClient) -> None:
    contacts = next(e for e in everything(api)["events"]
                    if e["job"]["name"] == "spark/Contacts" and e["eventType"] == "COMPLETE")
    output = next(d for d in contacts["outputs"] if d["name"] == "contacts")
    fields = output["facets"]["columnLineage"]["fields"]
    assert fields["email_hash"]["inputFields"] == [{
        "namespace": "lineage://default", "name": "crm", "field": "email",
        "transformations": [{"type": "DIRECT", "subtype": "TRANSFORMATION", "masking": True,
                             "description": "sha2"}]}]
    assert fields["id"]["inputFields"][0]["transformations"] == [
        {"type": "DIRECT", "subtype": "IDENTITY", "masking": False}]


def test_pages_follow_each_other_and_bad_parameters_are_400s(api: TestClient) -> None:
    whole = everything(api)["events"]
    pages = [get(api, EVENTS, **WINDOW, limit=5, offset=offset, sortDirection="asc")["events"]
             for offset in range(0, len(whole), 5)]
    assert [e for page in pages for e in page] == whole
    for params, message in (({"limit": 5000}, "limit 5000 is not between 0 and 1000"),
                            ({"offset": -1}, "offset -1 is negative"),
                            ({"sortDirection": "up"}, "sortDirection 'up' is not asc or desc"),
                            ({"after": "yesterday"}, "after 'yesterday' is not an ISO 8601 time"),
                            ({"after": "2026-11-20T00:00:00"}, "has no offset"),
                            ({"after": END.isoformat(), "before": AT.isoformat()}, "after must be before before")):
        response = api.get(EVENTS, params=params)
        assert response.status_code == 400, (params, response.text)
        assert message in response.json()["message"]


def test_a_caller_gets_only_events_of_namespaces_it_may_read(warehouse: str, monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    with connect(warehouse) as conn:
        conn.execute("insert into lineage.namespaces (namespace) values ('other') on conflict do nothing")
        put_grant(conn, "other-reader", "namespace=other", "other", Privilege.READ, "test")
        put_grant(conn, "instance-reader", "instance", None, Privilege.READ, "test")
        put_grant(conn, "default-reader", "namespace=default", "default", Privilege.READ, "test")
    with logged_in_client(warehouse, monkeypatch, username="other-reader", role="viewer") as client:
        answer = get(client, EVENTS, **WINDOW)
    assert answer["events"] == [] and answer["totalCount"] == 0 and answer["withheld"] > 0
    with logged_in_client(warehouse, monkeypatch, username="instance-reader", role="viewer") as client:
        assert get(client, EVENTS, **WINDOW)["events"] == []  # a grant on the instance reaches into no namespace
    with logged_in_client(warehouse, monkeypatch, username="default-reader", role="viewer") as client:
        mine = get(client, EVENTS, **WINDOW, limit=1000)
    names = {e["job"]["namespace"] for e in mine["events"]}
    assert "lineage://default/Purchases" in names and mine["withheld"] > 0  # the producers' own namespaces withheld
    assert {NO_MAPPING.for_job(e["job"]["namespace"]) for e in mine["events"]} == {"default"}
    assert {NO_MAPPING.for_dataset(d["namespace"]) for e in mine["events"]
            for d in [*e.get("inputs", []), *e.get("outputs", [])]} == {"default"}


def lineage(*args: str, database: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([LINEAGE, *args], env={**os.environ, "LINEAGE_DATABASE_URL": database},
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return done


def test_the_export_file_holds_what_the_api_gives(api: TestClient, warehouse: str, tmp_path: Path) -> None:
    out = tmp_path / "window.jsonl.gz"
    since, until = "0", str(int(END.timestamp()))
    summary = lineage("export", "--since", since, "--until", until, "--out", str(out), database=warehouse).stderr
    lines = gzip.decompress(out.read_bytes()).splitlines()
    assert f"exported {len(lines)} OpenLineage events" in summary
    assert [orjson.loads(line) for line in lines] == everything(api)["events"]
    only_other = tmp_path / "other.jsonl"
    lineage("export", "--since", since, "--until", until, "--out", str(only_other), "--namespace", "other",
            database=warehouse)
    alone = tmp_path / "alone.jsonl"  # this process alone (the others: worker processes, by default)
    lineage("export", "--since", since, "--until", until, "--out", str(alone), "--workers", "1", database=warehouse)
    assert alone.read_bytes() == gzip.decompress(out.read_bytes())
    assert only_other.read_bytes() == b""  # no event touches namespace other alone


@contextmanager
def second_server(database: str, log_root: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, str]]:
    """Another warehouse's API served over real HTTP (uvicorn, the plugin's app): its URL and an
    admin's Airflow token; its OpenLineage log is sealed into ``log_root`` when it stops."""
    monkeypatch.setenv("LINEAGE_LOG_ROOT", str(log_root))
    client = logged_in_client(database, monkeypatch)  # the app and a real token; uvicorn runs its lifespan
    with serving(client.app) as url:
        yield url, client.headers["Authorization"].removeprefix("Bearer ")


def test_an_export_pushed_to_another_warehouse_lands_as_the_same_runs_accesses_hierarchy_and_column_lineage(
        api: TestClient, warehouse: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    total = everything(api)["totalCount"]
    since, until = "0", str(int(END.timestamp()))
    other = create_scratch_db("ol_export_again")
    log_root = tmp_path / "other-log"
    try:
        with second_server(other, log_root, monkeypatch) as (url, token):
            # openlineage-python's own HTTP transport, at the URL a Marquez user would give
            summary = lineage("export", "--since", since, "--until", until, "--to", f"{url}/api/v1/lineage",
                              "--api-key", token, database=warehouse).stderr
        assert f"exported {total} OpenLineage events" in summary, summary
        compacted(other, log_root, datetime.now(UTC) + timedelta(hours=1))  # the endpoint wrote the log now
        assert _runs(other) == _runs(warehouse)
        assert _accesses(other) == _accesses(warehouse)
        assert _links(other) == _links(warehouse)
        assert _column_lineage(other) == _column_lineage(warehouse) != {}
        added = [row for row in _run_facets(other) if PRODUCER in row[-1]]  # what the export rendered
        assert {row[5:7] for row in added} == {("job", "jobType")}  # our runs' type, kept from then on
        assert [row for row in _run_facets(other) if row not in added] == _run_facets(warehouse) != []
        assert _schemas(other) == _schemas(warehouse) != []
    finally:
        drop_scratch_db(other)


_RUN = "p.namespace, p.application, p.program_type, p.program, r.run_id"


def _rows(url: str, query: str) -> list[tuple[Any, ...]]:
    with connect(url) as conn:
        return sorted(conn.execute(query).fetchall())


def _runs(url: str) -> list[tuple[Any, ...]]:
    return _rows(url, f"select {_RUN}, r.status, r.run_at, r.stopped_at "
                      "from lineage.runs r join lineage.programs p using (program_key)")


def _accesses(url: str) -> list[tuple[Any, ...]]:
    return _rows(url, f"select {_RUN}, d.namespace, d.dataset_type, d.dataset, a.access "
                      "from lineage.dataset_accesses a join lineage.datasets d using (dataset_key) "
                      "join lineage.runs r using (run_key) join lineage.programs p using (program_key)")


def _links(url: str) -> list[tuple[Any, ...]]:
    return _rows(url, f"select {_RUN}, l.relation, l.namespace, l.application, l.program_type, l.program, l.run_id "
                      "from lineage.run_parents l join lineage.runs r using (run_key) "
                      "join lineage.programs p using (program_key)")


def _schemas(url: str) -> list[tuple[Any, ...]]:
    """Each dataset's latest schema version's fields."""
    return _rows(url, """select distinct on (entity_key) entity_key, schema::text from lineage.dataset_schema_versions
                          order by entity_key, version desc""")


def _run_facets(url: str) -> list[tuple[Any, ...]]:
    return _rows(url, f"select {_RUN}, f.facet_of, f.name, f.facet::text from lineage.run_facets f "
                      "join lineage.runs r using (run_key) join lineage.programs p using (program_key)")


def _column_lineage(url: str) -> dict[tuple[str, str, str], Any]:
    """Each run's column lineage per written dataset, as the facet reads it."""
    with connect(url) as conn:
        keys = [row[0] for row in conn.execute("select run_key from lineage.runs").fetchall()]
        exports = run_exports(conn, keys)
    return {(run.program.program, run.run_id, ref.name): column_lineage_fields(edges)
            for run in exports.values() for ref, edges in run.column_edges.items()}


def test_datasets_no_run_of_the_window_names_are_dataset_events_with_their_schema_and_metadata(
        api: TestClient, warehouse: str, tmp_path: Path) -> None:
    assert api.post("/v3/namespaces/default/datasets/report/metadata/tags", json=["gold"]).status_code == 200
    out = tmp_path / "quiet.jsonl"
    after_every_run = str(int((END + timedelta(hours=1)).timestamp()))
    lineage("export", "--since", after_every_run, "--until", str(int((END + timedelta(days=1)).timestamp())),
            "--out", str(out), "--datasets", database=warehouse)
    events = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    assert events and all("dataset" in item and "run" not in item for item in events)
    validate_events(events)  # OpenLineage 2-0-2 DatasetEvents, each facet against its schema
    report = next(item for item in events if item["dataset"]["name"] == "report")
    assert report["dataset"]["namespace"] == "lineage://default"
    assert report["dataset"]["facets"]["lineageWarehouse_metadata"]["tags"] == {"USER": ["gold"]}
    assert any(item["dataset"].get("facets", {}).get("schema", {}).get("fields") for item in events)
    plain = tmp_path / "plain.jsonl"
    lineage("export", "--since", after_every_run, "--until", str(int((END + timedelta(days=1)).timestamp())),
            "--out", str(plain), database=warehouse)
    assert plain.read_bytes() == b""  # without --datasets, a window with no run has no event


def test_a_stream_stopped_early_stops_its_reader_and_leaves_the_connection_usable(warehouse: str,
                                                                                   api: TestClient) -> None:
    whole = everything(api)["events"]
    with connect(warehouse, autocommit=True) as conn:
        with snapshot(conn):
            stream = stream_window(conn, datetime(1970, 1, 1, tzinfo=UTC), END, None, chunk=2)
            first = [next(stream) for _ in range(3)]
            stream.close()
        assert first == whole[:3]
        assert not [t for t in threading.enumerate() if t.name == "openlineage-export-reader"]
        assert conn.execute("select 1").fetchone() == (1,)
        with snapshot(conn):  # and a whole stream, a chunk of two items at a time, is the endpoint's window
            assert list(stream_window(conn, datetime(1970, 1, 1, tzinfo=UTC), END, None, chunk=2)) == whole


def test_declared_lineage_goes_out_as_job_events_and_comes_back_declared(tmp_path: Path) -> None:
    """A JobEvent in is a JobEvent out: ``lineage export`` gives each program's latest declaration
    made in the window as a JobEvent, valid against the spec, which another warehouse compacts
    into the same declared lineage (a native program's by the reserved scheme)."""
    job_event = {"eventTime": (AT + timedelta(minutes=30)).isoformat(), "producer": "dbt-ol",
                 "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent",
                 "job": {"namespace": "dbt", "name": "shop.clean_orders"},
                 "inputs": [{"namespace": "postgres://db:5432", "name": "shop.public.raw_orders"}],
                 "outputs": [{"namespace": "postgres://db:5432", "name": "shop.public.clean_orders"}]}
    job = {"application": "Crm", "program_type": "spark", "program": "Contacts"}
    native = event("dataset_access", {"dataset": {"name": "crm"}, "access": "read"}, schema_version=2, job=job,
                   event_time=iso(AT))
    del native["run"]
    declared = """select p.application, p.program_type, p.program, d.dataset, a.access
                  from lineage.declared_accesses a join lineage.programs p using (program_key)
                  join lineage.datasets d using (dataset_key) order by 1, 2, 3, 4, 5"""
    first, again = create_scratch_db("ol_export_declared"), create_scratch_db("ol_export_declared_again")
    try:
        write_log(tmp_path / "log", [wrap(job_event, NO_MAPPING), native])
        compacted(first, tmp_path / "log")
        out = tmp_path / "declared.jsonl"
        lineage("export", "--since", "0", "--until", str(int(END.timestamp())), "--out", str(out), database=first)
        events = [orjson.loads(line) for line in out.read_bytes().splitlines()]
        assert [(e["job"]["namespace"], e["job"]["name"], "run" in e) for e in events] == [
            ("lineage://default/Crm", "spark/Contacts", False), ("dbt", "shop.clean_orders", False)]
        validate_events(events)  # OpenLineage 2-0-2 JobEvents
        write_log(tmp_path / "again", [wrap(item, NO_MAPPING) for item in events])
        compacted(again, tmp_path / "again")
        assert _rows(again, declared) == _rows(first, declared) == [
            ("Crm", "spark", "Contacts", "crm", "read"),
            ("dbt", "openlineage", "shop.clean_orders", "postgres://db:5432/shop.public.clean_orders", "write"),
            ("dbt", "openlineage", "shop.clean_orders", "postgres://db:5432/shop.public.raw_orders", "read")]
        assert _rows(again, "select count(*) from lineage.runs") == [(0,)]  # declared: still no run
        # the job then declares nothing (a review finding: the export gave nothing, so the other
        # warehouse kept the old declaration): a JobEvent of no dataset, which ends it there too
        ended = {**job_event, "eventTime": (AT + timedelta(minutes=40)).isoformat(), "inputs": [], "outputs": []}
        write_log(tmp_path / "log", [wrap(ended, NO_MAPPING)], name="ended.jsonl")
        compacted(first, tmp_path / "log")
        lineage("export", "--since", "0", "--until", str(int(END.timestamp())), "--out", str(out), database=first)
        events = [orjson.loads(line) for line in out.read_bytes().splitlines()]
        [job_out] = [e for e in events if e["job"]["name"] == "shop.clean_orders"]
        assert (job_out["eventTime"], job_out.get("inputs", []), job_out.get("outputs", [])) == (
            ended["eventTime"], [], [])
        validate_events(events)
        write_log(tmp_path / "again", [wrap(job_out, NO_MAPPING)], name="ended.jsonl")
        compacted(again, tmp_path / "again")
        assert _rows(again, declared) == _rows(first, declared) == [("Crm", "spark", "Contacts", "crm", "read")]
    finally:
        drop_scratch_db(first)
        drop_scratch_db(again)


def test_a_namespace_deleted_and_created_again_exports_nothing_of_its_old_incarnation(
    warehouse_db: str, log_root: Path, settings_for, monkeypatch: pytest.MonkeyPatch  # type: ignore[no-untyped-def]
) -> None:
    """Before its cleanup, the rows a deleted namespace left stay in the tables: a run of the new
    incarnation writing the same dataset exported the old one's tags and schema, and so did the
    export's quiet datasets, while the metadata and schema routes show neither (a review finding)."""
    from warehouse.db import namespace_store
    from warehouse.db.openlineage_export_store import export_page, quiet_datasets

    def native_run(run_id: str, at: datetime) -> list[dict[str, Any]]:
        run = {"application": "App", "program_type": "spark", "program": "Load", "run_id": run_id}
        return [event("run_start", run=run, namespace="team", event_time=iso(at)),
                event("dataset_access", {"dataset": {"name": "orders"}, "access": "write"}, run=run,
                      namespace="team", event_time=iso(at)),
                event("run_end", {"status": "completed"}, run=run, namespace="team",
                      event_time=iso(at + timedelta(seconds=1)))]

    def compact(events: list[dict[str, Any]]) -> None:
        now = datetime.now(UTC)
        write_log(log_root, events, hour=f"dt={now:%Y-%m-%d}/hour={now:%H}")
        run_compaction(None, interval_end=now + timedelta(hours=1), settings=settings_for(warehouse_db))

    with connect(warehouse_db, autocommit=True) as conn:
        namespace_store.create_namespace(conn, "team", None)
    compact(native_run("old-1", datetime.now(UTC) - timedelta(minutes=10)))
    with logged_in_client(warehouse_db, monkeypatch) as api:
        assert api.post("/v3/namespaces/team/datasets/orders/metadata/tags", json=["pii-secret"]).status_code == 200
        assert api.put("/v3/namespaces/team/datasets/orders/properties",
                       json={"schema": {"fields": [{"name": "ssn", "type": "string"}]}}).status_code == 200
    with connect(warehouse_db, autocommit=True) as conn:
        namespace_store.delete_namespace(conn, "team", "admin")
        namespace_store.create_namespace(conn, "team", None)
    compact(native_run("new-1", datetime.now(UTC) + timedelta(seconds=2)))

    with connect(warehouse_db, autocommit=True) as conn, snapshot(conn):
        page = export_page(conn, datetime(1970, 1, 1, tzinfo=UTC), datetime(9999, 1, 1, tzinfo=UTC), None, limit=100)
        quiet = quiet_datasets(conn, datetime(1970, 1, 1, tzinfo=UTC), datetime(1971, 1, 1, tzinfo=UTC), None)
    exported = orjson.dumps([*page.events]).decode()
    assert page.events and "orders" in exported
    assert "pii-secret" not in exported and "ssn" not in exported
    assert quiet == []

"""The namespace race guard covers writes (issue 17), on real PostgreSQL through the plugin's app:
after a namespace is deleted and re-created, every write behaves as in a brand-new namespace,
and a write that passed its existence check just before a DELETE does not survive into the
namespace re-created under the same name.

The cleanup the ``lineage_namespace_cleanup`` DAG runs is called directly
(``warehouse.pipeline.namespace_cleanup``): its DAG wiring is tested in tests/dags."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from psycopg.types.json import Jsonb

from lineage.model.metadata_entity import dataset_entity
from tests.airflow_support import logged_in_client
from warehouse.db import grant_store, metadata_store, schema_store
from warehouse.db.connection import connect
from warehouse.db.program_metadata_store import apply_program_metadata
from warehouse.pipeline import namespace_cleanup

NS = "/v3/namespaces/sales"
ORDERS = f"{NS}/datasets/orders"
WINDOW = {"start": "0", "end": "now"}
FIELD = {"name": "id", "type": "long", "nullable": False}


def ok(response: Any) -> Any:
    assert response.status_code == 200, response.text
    return response.json()


def run_cleanup(url: str) -> None:
    """What the cleanup DAG does: clean every pending deletion, then lift the guard."""
    summaries = namespace_cleanup.clean_pending(url)
    namespace_cleanup.finish(url, [summary.deletion_id for summary in summaries])


@pytest.fixture
def api(warehouse_db: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    with logged_in_client(warehouse_db, monkeypatch) as client:
        yield client


def delete_and_recreate(api: TestClient) -> None:
    ok(api.delete(NS))
    ok(api.put(NS))


def test_writes_in_a_recreated_namespace_start_from_nothing(api: TestClient, warehouse_db: str) -> None:
    """Before: re-adding a tag the old namespace had answered changeId null and the tag stayed
    invisible (the cleanup then removed it); a new change record's ``previous`` held the old
    namespace's tags and properties; a schema PUT was checked against the old, invisible schema
    (409) and numbered after its versions. Now: each behaves as in a brand-new namespace, before
    and after the cleanup."""
    ok(api.put(NS))
    ok(api.post(f"{ORDERS}/metadata/tags", json=["pii"]))
    ok(api.post(f"{ORDERS}/metadata/properties", json={"owner": "old-team"}))
    old_schema = {"fields": [FIELD, {"name": "name", "type": "string", "nullable": True}]}
    assert ok(api.put(f"{ORDERS}/properties", json={"schema": old_schema}))["version"] == 1
    wider = {"fields": [*old_schema["fields"], {"name": "coupon", "type": "string", "nullable": True}]}
    assert ok(api.put(f"{ORDERS}/properties", json={"schema": wider}))["version"] == 2

    delete_and_recreate(api)

    readded = ok(api.post(f"{ORDERS}/metadata/tags", json=["pii"]))
    assert readded["changeId"] is not None  # before: null, "nothing changed"
    assert ok(api.get(f"{ORDERS}/metadata/tags", params={"scope": "USER"})) == {"USER": ["pii"]}
    ok(api.post(f"{ORDERS}/metadata/properties", json={"owner": "new-team"}))
    changes = ok(api.get(f"{ORDERS}/metadata/history", params=WINDOW))["changes"]
    assert [(c["previous"], c["updated"]) for c in changes] == [
        ({"tags": [], "properties": {}}, {"tags": ["pii"], "properties": {}}),
        ({"tags": ["pii"], "properties": {}}, {"tags": ["pii"], "properties": {"owner": "new-team"}}),
    ]  # before: the first was no change at all, the second's previous had owner=old-team
    # removing a field would be incompatible with the old schema; the new namespace has none
    narrow = {"fields": [{"name": "id", "type": "int", "nullable": False}]}
    stored = api.put(f"{ORDERS}/properties", json={"schema": narrow})
    assert stored.status_code == 200, stored.text  # before: 409 against the deleted namespace's schema
    assert stored.json()["version"] == 1  # before: would have been 3
    assert [v["version"] for v in ok(api.get(f"{ORDERS}/schemas"))["versions"]] == [1]

    run_cleanup(warehouse_db)  # what the new namespace wrote stays, nothing old comes back
    metadata = ok(api.get(f"{ORDERS}/metadata"))["metadata"]
    assert metadata["USER"] == {"tags": ["pii"], "properties": {"owner": "new-team"}}
    assert ok(api.get(f"{ORDERS}/properties"))["version"] == 1
    changes = ok(api.get(f"{ORDERS}/metadata/history", params=WINDOW))["changes"]
    assert [c["scope"] for c in changes] == ["USER", "USER", "SYSTEM"]  # the new namespace's only


def paused(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> tuple[threading.Event, threading.Event]:
    """Make ``module.name`` wait, once called, until the test says go: the request has passed
    its checks (namespace, privilege) and is about to write. Returns (reached, go)."""
    reached, go = threading.Event(), threading.Event()
    real: Callable[..., Any] = getattr(module, name)

    def waiting(*args: Any, **kwargs: Any) -> Any:
        reached.set()
        assert go.wait(30)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, waiting)
    return reached, go


def race_with_delete(api: TestClient, write: Callable[[], Any], reached: threading.Event,
                     go: threading.Event) -> Any:
    """Start ``write``; once it passed its checks, delete and re-create the namespace; then let
    the write go on. Returns the write's response."""
    with ThreadPoolExecutor(1) as pool:
        pending: Future[Any] = pool.submit(write)
        assert reached.wait(30), "the write never reached the store"
        delete_and_recreate(api)
        go.set()
        return pending.result(timeout=60)


def test_a_tag_written_just_after_a_delete_does_not_survive_into_the_recreated_namespace(
        api: TestClient, warehouse_db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: the tag landed after the deletion (200), hidden until the cleanup, which kept it
    (written after the deletion time) and lifted the guard: the re-created namespace showed a tag
    it never had. Now: the write finds the namespace it checked gone and answers 404."""
    ok(api.put(NS))
    reached, go = paused(monkeypatch, metadata_store, "change")
    answer = race_with_delete(api, lambda: api.post(f"{ORDERS}/metadata/tags", json=["late"]), reached, go)
    assert answer.status_code == 404, answer.text
    assert "namespace 'sales' not found" in answer.json()["message"]
    run_cleanup(warehouse_db)
    assert ok(api.get(f"{ORDERS}/metadata/tags", params={"scope": "USER"})) == {"USER": []}
    assert ok(api.get(f"{ORDERS}/metadata/history", params=WINDOW))["changes"] == []


def test_a_schema_put_just_after_a_delete_does_not_survive_into_the_recreated_namespace(
        api: TestClient, warehouse_db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same race for a schema PUT: before, version 1 of the deleted namespace's dataset
    surfaced in the re-created one after the cleanup; now 404, and nothing is stored."""
    ok(api.put(NS))
    reached, go = paused(monkeypatch, schema_store, "set_schema")
    answer = race_with_delete(api, lambda: api.put(f"{ORDERS}/properties", json={"schema": {"fields": [FIELD]}}),
                              reached, go)
    assert answer.status_code == 404, answer.text
    run_cleanup(warehouse_db)
    assert api.get(f"{ORDERS}/properties").status_code == 404  # no schema, no lineage: no dataset


def test_a_grant_written_just_after_a_delete_does_not_survive_into_the_recreated_namespace(
        api: TestClient, warehouse_db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: the grant was stored after the DELETE dropped the namespace's grants, so
    ``viewer`` held READ on the new namespace nobody gave them anything in. Now: 404, no grant."""
    ok(api.put(NS))
    reached, go = paused(monkeypatch, grant_store, "put_grant")
    answer = race_with_delete(api, lambda: api.put("/v3/grants", json={
        "principal": "viewer", "entity": "namespaces/sales", "privilege": "READ"}), reached, go)
    assert answer.status_code == 404, answer.text
    assert ok(api.get("/v3/grants", params={"namespace": "sales"})) == []
    with connect(warehouse_db) as conn:
        assert conn.execute("select count(*) from lineage.grants").fetchone() == (0,)


def test_a_delete_waits_for_a_write_in_flight_and_the_cleanup_removes_it(
        api: TestClient, warehouse_db: str) -> None:
    """A write that holds the namespace (its transaction is open) makes a DELETE wait until it
    commits; what it wrote then predates the deletion, so reads of the re-created namespace hide
    it and the cleanup removes it."""
    ok(api.put(NS))
    with connect(warehouse_db) as writer:  # not autocommit: the change's transaction stays open
        writer.execute("select 1")
        metadata_store.change(writer, dataset_entity("sales", "dataset", "orders"), "USER", "admin",
                              add_tags=["in-flight"])
        with ThreadPoolExecutor(1) as pool:
            deleting = pool.submit(api.delete, NS)
            with pytest.raises(TimeoutError):
                deleting.result(timeout=1.5)  # held by the open write
            writer.commit()
            ok(deleting.result(timeout=30))
    ok(api.put(NS))
    assert ok(api.get(f"{ORDERS}/metadata/tags", params={"scope": "USER"})) == {"USER": []}
    run_cleanup(warehouse_db)
    assert ok(api.get(f"{ORDERS}/metadata/tags", params={"scope": "USER"})) == {"USER": []}
    with connect(warehouse_db) as conn:
        assert conn.execute("select count(*) from lineage.metadata where namespace = 'sales'").fetchone() == (0,)


def pend(url: str, event_id: str, at: datetime, payload: dict[str, Any]) -> None:
    """A compacted program metadata change, as the compaction leaves it for ``apply_metadata``."""
    with connect(url) as conn:
        conn.execute(
            """insert into lineage.pending_events (namespace, event_id, kind, event_time, application, program_type,
                                                   program, run_id, payload, batch_id)
               values ('sales', %s, 'metadata_change', %s, 'Orders', 'spark', 'Load', 'r1', %s, 'test')""",
            (event_id, at, Jsonb({"entity": [["namespace", "sales"], ["dataset", "orders"]], **payload})))
        conn.commit()


def apply_pending(url: str) -> None:
    with connect(url) as conn:
        apply_program_metadata(conn)


def test_program_metadata_in_a_recreated_namespace_starts_from_nothing(api: TestClient, warehouse_db: str) -> None:
    """Before: the deleted namespace's watermark (an event stamped an hour ahead) made the new
    namespace's program metadata lose to an invisible older life ("later event wins"), and an
    old event compacted after the re-creation was applied to the new namespace. Now the
    watermark is the old incarnation's and is dropped; the old event is quarantined."""
    ok(api.put(NS))
    now = datetime.now(UTC)
    pend(warehouse_db, "old-1", now + timedelta(hours=1), {"operation": "add_properties",
                                                           "properties": {"format": "csv"}})
    apply_pending(warehouse_db)
    delete_and_recreate(api)
    pend(warehouse_db, "old-2", now - timedelta(minutes=5), {"operation": "add_tags", "tags": ["from-the-old-life"]})
    pend(warehouse_db, "new-1", datetime.now(UTC) + timedelta(minutes=1), {"operation": "add_properties",
                                                                           "properties": {"format": "parquet"}})
    apply_pending(warehouse_db)
    system = ok(api.get(f"{ORDERS}/metadata", params={"scope": "SYSTEM"}))["metadata"]["SYSTEM"]
    assert system == {"tags": [], "properties": {"format": "parquet"}}  # before: {} (lost to the old watermark)
    with connect(warehouse_db) as conn:
        reasons = [r for (r,) in conn.execute("select reason from lineage.quarantine "
                                              "where batch_id = 'program-metadata'").fetchall()]
    assert len(reasons) == 1 and "belongs to the deleted namespace" in reasons[0], reasons
    run_cleanup(warehouse_db)
    system = ok(api.get(f"{ORDERS}/metadata", params={"scope": "SYSTEM"}))["metadata"]["SYSTEM"]
    assert system == {"tags": [], "properties": {"format": "parquet"}}

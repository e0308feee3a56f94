"""Damaged OpenLineage events lose only what is damaged (issue 30, item 4), end to end on real
PostgreSQL: posted through the plugin's HTTP endpoint in process with an ingest key, or written
by the in-process transport, compacted (in process), read back through the run and lineage APIs.

What each damage does, as the tests below check it:

- a ``parent`` facet whose own run has no ``runId`` (or one that is not text) links the run to
  the facet's valid ``root`` and to no parent; the run's ``warnings`` say what was skipped;
- a ``runId`` that is not a UUID (the run's own, the parent's or the root's) is accepted by the
  endpoint (201) and the compaction (nothing quarantined), kept as sent, and the run's
  ``warnings`` say so, once per run however many of its events carry it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

import orjson
import pytest
from fastapi.testclient import TestClient

from lineage.settings import Settings
from spark_jobs.compaction.job import run_compaction
from tests.airflow_support import admin_client
from tests.conftest import create_scratch_db, drop_scratch_db
from tests.warehouse.test_openlineage_compaction import client_for
from warehouse.pipeline.dbt_build import build_marts

AT = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)
DAG_RUN = "0195f3b1-0000-7c6e-9d3f-2f1c0b8e4a00"  # the root every task names: a UUID, recorded
DAG = {"namespace": "default", "name": "orders_dag"}
RUNS = "/v3/namespaces/default/apps/default/openlineage"
NOT_A_UUID = "run.runId is not a UUID; kept as sent"
WINDOW = {"start": "0", "end": "now"}


def run_event(event_type: str, run_id: str, job: str, *, minutes: int = 0, parent: Any = None,
              inputs: tuple[str, ...] = ()) -> dict[str, Any]:
    facets = {} if parent is None else {"parent": parent}
    return {"eventType": event_type, "eventTime": (AT + timedelta(minutes=minutes)).isoformat(),
            "producer": "tests", "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
            "run": {"runId": run_id, "facets": facets}, "job": {"namespace": "default", "name": job},
            "inputs": [{"namespace": "s3://lake", "name": name} for name in inputs], "outputs": []}


def damaged_parent(run: Any) -> dict[str, Any]:
    """A parent facet whose own run is ``run`` (damaged below), with a valid root: the DAG run."""
    return {"run": run, "job": {"namespace": "default", "name": "orders_dag.group"},
            "root": {"run": {"runId": DAG_RUN}, "job": DAG}}


# Each task: its run id (none a UUID), its parent facet, what the run API answers of its parent,
# root and warnings once compacted.
TASKS: dict[str, dict[str, Any]] = {
    "no parent runId": {
        "run_id": "scheduled__2026-11-23T09:00:00+00:00",  # Airflow 2's run id: a '+' the old rule refused
        "parent": damaged_parent({}),
        "linked": (None, DAG_RUN),
        "warnings": [NOT_A_UUID, "parent facet's parent run skipped: run.runId is missing (its root is kept)"]},
    "parent runId not text": {
        "run_id": "run 1",  # a space: the old rule quarantined the whole event
        "parent": damaged_parent({"runId": 42}),
        "linked": (None, DAG_RUN),
        "warnings": [NOT_A_UUID, "parent facet's parent run skipped: run.runId is not text (a JSON number) "
                                 "(its root is kept)"]},
    "parent runId not a UUID": {
        "run_id": "load/7",  # a '/': one path segment in the API, written %2F
        "parent": damaged_parent({"runId": "group run 7"}),
        "linked": ("group run 7", DAG_RUN),
        "warnings": [NOT_A_UUID, "parent facet's run.runId is not a UUID; kept as sent"]},
}


@pytest.fixture(scope="module")
def warehouse() -> Iterator[str]:
    url = create_scratch_db("ol_damaged")
    yield url
    drop_scratch_db(url)


@pytest.fixture(scope="module")
def compacted(warehouse: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The DAG run (START, COMPLETE) and the tasks' START and COMPLETE posted to the endpoint; one
    more task written by the in-process transport; all compacted in one batch."""
    log_root = tmp_path_factory.mktemp("ol-damaged")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LINEAGE_LOG_ROOT", str(log_root))
        with admin_client(warehouse) as client:  # leaving it seals the endpoint's open file
            granted = client.put("/v3/grants", json={"principal": "producer", "entity": "namespaces/default",
                                                     "privilege": "WRITE"})
            assert granted.status_code == 200, granted.text
            key = client.post("/v3/ingest-keys", json={"name": "tasks", "principal": "producer"}).json()["secret"]
            events = [run_event("START", DAG_RUN, "orders_dag"), run_event("COMPLETE", DAG_RUN, "orders_dag",
                                                                           minutes=30)]
            for index, (name, task) in enumerate(TASKS.items()):
                events += [run_event(state, task["run_id"], f"orders_dag.{name}", minutes=index + offset,
                                     parent=task["parent"], inputs=("orders",))
                           for state, offset in (("START", 1), ("COMPLETE", 5))]
            posted = client.post("/api/v1/lineage", content=orjson.dumps(events),
                                 headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
            assert posted.status_code == 201, posted.text  # every damaged event accepted
            assert posted.json() == {"accepted": len(events), "refused": []}
            single = client.post("/api/v1/lineage", content=orjson.dumps(events[2]),  # again, alone: the same id
                                 headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
            assert single.status_code == 201, single.text
    client_for(log_root).transport.emit(run_event(  # the other way in: straight into the raw log
        "COMPLETE", "by transport", "orders_dag.transported", minutes=9, parent={"job": DAG, "root": {
            "run": {"runId": DAG_RUN}, "job": DAG}}, inputs=("orders",)))
    settings = Settings.from_env({**os.environ, "LINEAGE_LOG_ROOT": str(log_root), "LINEAGE_DATABASE_URL": warehouse})
    summary = run_compaction(None, interval_end=datetime.now(UTC) + timedelta(hours=1), settings=settings)
    assert summary.quarantined == 0
    build_marts(warehouse, settings, command="run", select="+lineage_walk")  # what the lineage API walks
    yield warehouse


@pytest.fixture(scope="module")
def api(compacted: str) -> Iterator[TestClient]:
    with admin_client(compacted) as client:
        yield client


def run_of(api: TestClient, job: str, run_id: str) -> dict[str, Any]:
    answer = api.get(f"{RUNS}/{quote(job, safe='')}/runs/{quote(run_id, safe='')}")
    assert answer.status_code == 200, answer.text
    return answer.json()  # type: ignore[no-any-return]


def linked(link: dict[str, Any] | None) -> tuple[str, str, bool] | None:
    return None if link is None else (link["program"], link["run_id"], link["recorded"])


@pytest.mark.parametrize("name", TASKS)
def test_a_damaged_parent_keeps_the_root_and_a_run_id_not_a_uuid_is_kept_with_a_warning(
        api: TestClient, name: str) -> None:
    task = TASKS[name]
    run = run_of(api, f"orders_dag.{name}", task["run_id"])
    assert (run["run_id"], run["recorded"], run["status"]) == (task["run_id"], True, "completed")
    parent_run, root_run = task["linked"]
    assert linked(run["parent"]) == (None if parent_run is None else ("orders_dag.group", parent_run, False))
    assert linked(run["root"]) == ("orders_dag", root_run, True)
    assert sorted(run["warnings"]) == sorted(task["warnings"])  # once each, though START and COMPLETE carried them


def test_an_event_the_in_process_transport_wrote_is_compacted_the_same(api: TestClient) -> None:
    """A parent facet with no ``run`` at all, and a run id with a space, written to the raw log by
    the transport (no endpoint): the same mapping, the same answers."""
    run = run_of(api, "orders_dag.transported", "by transport")
    assert (linked(run["parent"]), linked(run["root"])) == (None, ("orders_dag", DAG_RUN, True))
    assert sorted(run["warnings"]) == [
        "parent facet's parent run skipped: run.runId is missing (its root is kept)", NOT_A_UUID]


def test_the_root_stands_for_runs_linked_to_it_alone(api: TestClient) -> None:
    """Lineage rolled up to the root shows the DAG run in place of each task run linked only to its
    root; rolled up to the parent, a task with no parent stands for itself."""
    path = f"/v3/namespaces/default/datasets/{quote('s3://lake/orders', safe='')}/lineage"
    rolled = api.get(path, params={**WINDOW, "rollup": "root"})
    assert rolled.status_code == 200, rolled.text
    assert {(r["program"], tuple(r["runs"])) for r in rolled.json()["relations"]} == {
        ("openlineage.default.default.orders_dag", (DAG_RUN,))}
    by_parent = api.get(path, params={**WINDOW, "rollup": "parent"}).json()
    assert {r["program"] for r in by_parent["relations"]} == {
        "openlineage.default.default.orders_dag.group",  # the one task whose parent was kept
        "openlineage.default.default.orders_dag.no parent runId",
        "openlineage.default.default.orders_dag.parent runId not text",
        "openlineage.default.default.orders_dag.transported"}


def test_runs_are_listed_under_their_ids_as_sent(api: TestClient) -> None:
    for name, task in TASKS.items():
        listed = api.get(f"{RUNS}/{quote(f'orders_dag.{name}', safe='')}/runs", params=WINDOW)
        assert listed.status_code == 200, listed.text
        assert [run["run_id"] for run in listed.json()["runs"]] == [task["run_id"]]

"""Runs in a hierarchy through the API: a run's parent, root, children, facets and warnings, the
program runs' parents, and dataset lineage rolled up to parent or root runs, on events compacted
by the real job into real PostgreSQL (OpenLineage events through the real client and our
transport; native events for a CDAP-style workflow)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from openlineage.client.event_v2 import Job, Run, RunEvent, RunState
from openlineage.client.facet_v2 import nominal_time_run, parent_run, sql_job

from lineage.settings import Settings
from spark_jobs.compaction.job import run_compaction
from tests.airflow_support import get_ok as get
from tests.airflow_support import logged_in_client
from tests.conftest import create_scratch_db, drop_scratch_db
from tests.factories import event, iso, move_into_hour, write_log
from tests.warehouse.test_openlineage_compaction import PRODUCER, client_for
from warehouse.db.connection import connect
from warehouse.db.grant_store import put_grant
from warehouse.pipeline.dbt_build import build_marts
from warehouse.service.authorization import Privilege

AT = datetime(2026, 11, 20, 1, 0, tzinfo=UTC)
END = datetime(2026, 11, 21, 6, 0, tzinfo=UTC)
WINDOW = {"start": str(int(datetime(2026, 11, 20, tzinfo=UTC).timestamp())),
          "end": str(int(datetime(2026, 11, 21, tzinfo=UTC).timestamp()))}
DAG_RUN, LOAD_RUN, SUM_RUN = (f"0195f3b1-000{n}-7c6e-9d3f-2f1c0b8e4a0{n}" for n in range(3))
UNSEEN_RUN = "0195f3b1-0009-7c6e-9d3f-2f1c0b8e4a09"
RUNS = "/v3/namespaces/default/apps/default/openlineage"


def ol_event(state: RunState, at: datetime | str, job: str, run_id: str, parent: tuple[str, str] | None = None,
             **facets: Any) -> RunEvent:
    run_facets = dict(facets.pop("run_facets", {}))
    if parent is not None:
        run_facets["parent"] = parent_run.ParentRunFacet(
            run=parent_run.Run(runId=parent[1]), job=parent_run.Job(namespace="default", name=parent[0]),
            root=parent_run.Root(run=parent_run.RootRun(runId=DAG_RUN),
                                 job=parent_run.RootJob(namespace="default", name="orders_dag")))
    return RunEvent(eventType=state, eventTime=at if isinstance(at, str) else at.isoformat(),
                    run=Run(runId=run_id, facets=run_facets), job=Job(namespace="default", name=job, facets=facets),
                    producer=PRODUCER)


def openlineage_events() -> list[RunEvent]:
    """An Airflow-like DAG run with two task runs (the second with an eventTime without offset),
    and a run whose parent never sends an event."""
    return [
        ol_event(RunState.START, AT, "orders_dag", DAG_RUN),
        ol_event(RunState.START, AT + timedelta(minutes=1), "orders_dag.load", LOAD_RUN, ("orders_dag", DAG_RUN),
                 sql=sql_job.SQLJobFacet(query="insert into totals select 1"),
                 run_facets={"nominalTime": nominal_time_run.NominalTimeRunFacet(
                     nominalStartTime="2026-11-20T01:00:00Z")}),
        ol_event(RunState.COMPLETE, "2026-11-20T01:05:00", "orders_dag.load", LOAD_RUN, ("orders_dag", DAG_RUN)),
        ol_event(RunState.START, AT + timedelta(minutes=6), "orders_dag.sum", SUM_RUN, ("orders_dag", DAG_RUN)),
        ol_event(RunState.COMPLETE, AT + timedelta(hours=1), "orders_dag", DAG_RUN),
        ol_event(RunState.START, AT + timedelta(minutes=2), "adhoc.child", "0195f3b1-0008-7c6e-9d3f-2f1c0b8e4a08",
                 ("never_sent", UNSEEN_RUN)),
    ]


def native_run(program_type: str, program: str, run_id: str, accesses: list[tuple[str, str]],
               parent: str | None, *, application: str = "Purchases") -> list[dict[str, Any]]:
    """A native (format v2) run of a CDAP-style workflow's program; its parent a workflow run."""
    run = {"application": application, "program_type": program_type, "program": program, "run_id": run_id}
    events = [event("run_start", run=run, event_time=iso(AT)),
              *[event("dataset_access", {"dataset": {"name": name}, "access": access}, run=run,
                      event_time=iso(AT + timedelta(minutes=1))) for name, access in accesses],
              event("run_end", {"status": "completed"}, run=run, event_time=iso(AT + timedelta(minutes=30)))]
    if parent is not None:
        events.append(event("run_parent", {"parent": {
            "namespace": "default", "application": application, "program_type": "workflow",
            "program": "PurchaseWorkflow", "run_id": parent}}, run=run, schema_version=2,
            event_time=iso(AT + timedelta(minutes=1))))
    return events


def workflow_events() -> list[dict[str, Any]]:
    return [
        *native_run("workflow", "PurchaseWorkflow", "wf-1", [], None),
        *native_run("workflow", "PurchaseWorkflow", "wf-2", [], None),
        *native_run("mapreduce", "Builder", "b-1", [("orders", "read"), ("totals", "write")], "wf-1"),
        *native_run("spark", "Report", "r-1", [("totals", "read"), ("report", "write")], "wf-1"),
        *native_run("spark", "Report", "r-2", [("totals", "read"), ("report", "write")], "wf-2"),
        *native_run("spark", "Look", "l-1", [("totals", "read")], None, application="Adhoc"),
    ]


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    url = create_scratch_db("runs_api")
    log_root = tmp_path_factory.mktemp("raw-events")
    client = client_for(log_root)
    move_into_hour(log_root, [client.transport.emit(e) for e in openlineage_events()])  # type: ignore[attr-defined]
    write_log(log_root, workflow_events())
    settings = Settings.from_env({**os.environ, "LINEAGE_LOG_ROOT": str(log_root), "LINEAGE_DATABASE_URL": url})
    run_compaction(None, interval_end=END, settings=settings)
    build_marts(url, settings, command="run", select="+lineage_walk")
    yield url
    drop_scratch_db(url)


@pytest.fixture
def api(warehouse: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    with logged_in_client(warehouse, monkeypatch) as client:
        yield client


def named(link: dict[str, Any] | None) -> tuple[str, str, str, str, bool] | None:
    return None if link is None else (link["type"], link["application"], link["program"], link["run_id"],
                                      link["recorded"])


def test_a_task_run_shows_its_parent_and_root_with_links_its_facets_and_warnings(api: TestClient) -> None:
    run = get(api, f"{RUNS}/orders_dag.load/runs/{LOAD_RUN}")
    assert (run["status"], run["recorded"]) == ("completed", True)
    assert named(run["parent"]) == named(run["root"]) == ("openlineage", "default", "orders_dag", DAG_RUN, True)
    assert run["parent"]["links"]["run"] == f"v3/namespaces/default/apps/default/openlineage/orders_dag/runs/{DAG_RUN}"
    assert run["parent"]["links"]["page"] == (
        f"ui/run?ns=default&target=apps%2Fdefault%2Fopenlineage%2Forders_dag%2Fruns%2F{DAG_RUN}")
    assert run["facets"]["job"]["sql"]["query"] == "insert into totals select 1"
    assert run["facets"]["run"]["nominalTime"]["nominalStartTime"] == "2026-11-20T01:00:00Z"
    assert "parent" not in run["facets"]["run"]
    assert run["warnings"] == ["eventTime without offset, read as UTC"]
    assert run["children"] == [] and run["childCount"] == 0
    assert run["links"]["run"] == f"v3/namespaces/default/apps/default/openlineage/orders_dag.load/runs/{LOAD_RUN}"


def test_a_dag_run_lists_its_children_oldest_first_and_each_link_leads_back(api: TestClient) -> None:
    dag = get(api, f"{RUNS}/orders_dag/runs/{DAG_RUN}")
    assert (dag["parent"], dag["root"], dag["warnings"], dag["childCount"]) == (None, None, [], 2)
    assert [(c["program"], c["run_id"], c["status"]) for c in dag["children"]] == [
        ("orders_dag.load", LOAD_RUN, "completed"), ("orders_dag.sum", SUM_RUN, "running")]
    child = get(api, "/" + dag["children"][1]["links"]["run"])
    assert named(child["parent"]) == ("openlineage", "default", "orders_dag", DAG_RUN, True)


def test_a_parent_that_never_sent_an_event_is_linked_and_answers_with_its_children(api: TestClient) -> None:
    child = get(api, f"{RUNS}/adhoc.child/runs/0195f3b1-0008-7c6e-9d3f-2f1c0b8e4a08")
    assert named(child["parent"]) == ("openlineage", "default", "never_sent", UNSEEN_RUN, False)
    parent = get(api, "/" + child["parent"]["links"]["run"])
    assert (parent["recorded"], parent["status"], parent["started_at"]) == (False, None, None)
    assert [c["program"] for c in parent["children"]] == ["adhoc.child"]
    assert api.get(f"{RUNS}/never_sent/runs/no-such-run").status_code == 404


def test_program_runs_carry_each_runs_parent(api: TestClient) -> None:
    runs = get(api, f"{RUNS}/orders_dag.sum/runs", **WINDOW)["runs"]
    assert [(r["run_id"], named(r["parent"])) for r in runs] == [
        (SUM_RUN, ("openlineage", "default", "orders_dag", DAG_RUN, True))]
    assert get(api, f"{RUNS}/orders_dag/runs", **WINDOW)["runs"][0]["parent"] is None


def relations(body: dict[str, Any]) -> list[tuple[str, str, str, list[str]]]:
    return [(r["data"], r["program"], r["access"], r["runs"]) for r in body["relations"]]


WORKFLOW = "workflow.default.Purchases.PurchaseWorkflow"


def test_lineage_rolled_up_to_the_parent_shows_the_workflow_in_place_of_its_programs(api: TestClient) -> None:
    path = "/v3/namespaces/default/datasets/totals/lineage"
    plain = get(api, path, **WINDOW)
    assert {r["program"] for r in plain["relations"]} == {
        "mapreduce.default.Purchases.Builder", "spark.default.Purchases.Report", "spark.default.Adhoc.Look"}
    rolled = get(api, path, rollup="parent", **WINDOW)
    assert relations(rolled) == [
        ("dataset.default.orders", WORKFLOW, "read", ["wf-1"]),
        ("dataset.default.report", WORKFLOW, "write", ["wf-1", "wf-2"]),
        ("dataset.default.totals", "spark.default.Adhoc.Look", "read", ["l-1"]),  # no parent: itself
        ("dataset.default.totals", WORKFLOW, "read", ["wf-1", "wf-2"]),
        ("dataset.default.totals", WORKFLOW, "write", ["wf-1"]),
    ]
    assert set(rolled["programs"]) == {WORKFLOW, "spark.default.Adhoc.Look"}
    assert rolled["links"][WORKFLOW]["runs"] == "v3/namespaces/default/apps/Purchases/workflow/PurchaseWorkflow/runs"
    assert relations(get(api, path, rollup="root", **WINDOW)) == relations(rolled)  # no root recorded: the parent


def test_an_unknown_rollup_is_a_400(api: TestClient) -> None:
    response = api.get("/v3/namespaces/default/datasets/totals/lineage", params={"rollup": "workflow"})
    assert response.status_code == 400
    assert response.json()["message"] == "rollup 'workflow' is not one of parent, root"


def test_linked_runs_of_programs_the_caller_may_not_read_are_hidden(
    warehouse: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with connect(warehouse) as conn:  # READ on the task's program only, not on the DAG's
        put_grant(conn, "tasks-only", "namespace=default,application=default,type=openlineage,"
                  "program=orders_dag.load", "default", Privilege.READ,
                  "test")
    with logged_in_client(warehouse, monkeypatch, username="tasks-only", role="viewer") as client:
        run = get(client, f"{RUNS}/orders_dag.load/runs/{LOAD_RUN}")
        assert run["parent"] == {"namespace": "", "application": "", "type": "hidden", "program": "", "run_id": "",
                                 "recorded": False, "links": {}}
        assert client.get(f"{RUNS}/orders_dag/runs/{DAG_RUN}").status_code == 403

"""Run hierarchy, kept facets, warnings and aliases of OpenLineage events, through the real
``openlineage-python`` client and our transport, compacted by real Spark into real PostgreSQL.
Expected rows are written out by hand from what the events say."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import (
    documentation_dataset,
    job_type_job,
    nominal_time_run,
    parent_run,
    processing_engine_run,
    sql_job,
    symlinks_dataset,
)

from spark_jobs.compaction.job import run_compaction
from tests.warehouse.test_compaction import rows
from tests.warehouse.test_openlineage_compaction import PRODUCER, client_for

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "openlineage"
DAG_RUN = "0195f3b1-0000-7c6e-9d3f-2f1c0b8e4a00"
TASK_RUN = "0195f3b1-0001-7c6e-9d3f-2f1c0b8e4a01"
AT = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)
NAIVE_TIME = "eventTime without offset, read as UTC"


def dag_event(state: RunState, at: datetime) -> RunEvent:
    return RunEvent(eventType=state, eventTime=at.isoformat(), run=Run(runId=DAG_RUN),
                    job=Job(namespace="default", name="orders_dag"), producer=PRODUCER)


def task_event(state: RunState, event_time: str, *, sql: str, documentation: str,
               run_facets: dict[str, Any]) -> RunEvent:
    parent = parent_run.ParentRunFacet(
        run=parent_run.Run(runId=DAG_RUN), job=parent_run.Job(namespace="default", name="orders_dag"),
        root=parent_run.Root(run=parent_run.RootRun(runId=DAG_RUN),
                             job=parent_run.RootJob(namespace="default", name="orders_dag")))
    orders = InputDataset(namespace="s3://lake", name="raw/orders", facets={
        "documentation": documentation_dataset.DocumentationDatasetFacet(description=documentation),
        "symlinks": symlinks_dataset.SymlinksDatasetFacet(identifiers=[symlinks_dataset.Identifier(
            namespace="hive://metastore:9083", name="shop.orders", type="TABLE")])})
    totals = OutputDataset(namespace="s3://lake", name="marts/totals")
    return RunEvent(eventType=state, eventTime=event_time, run=Run(runId=TASK_RUN, facets={"parent": parent,
                                                                                          **run_facets}),
                    job=Job(namespace="default", name="orders_dag.load", facets={
                        "jobType": job_type_job.JobTypeJobFacet(processingType="BATCH", integration="AIRFLOW",
                                                                jobType="TASK"),
                        "sql": sql_job.SQLJobFacet(query=sql)}),
                    producer=PRODUCER, inputs=[orders], outputs=[totals])


def task_start() -> RunEvent:  # eventTime without an offset: read as UTC, flagged
    return task_event(RunState.START, "2026-11-23T09:01:00", sql="select 1", documentation="orders, first draft",
                      run_facets={"nominalTime": nominal_time_run.NominalTimeRunFacet(
                          nominalStartTime="2026-11-23T09:00:00Z")})


def task_complete() -> RunEvent:
    return task_event(RunState.COMPLETE, (AT + timedelta(minutes=5)).isoformat(), sql="select 2",
                      documentation="orders as loaded", run_facets={
                          "processing_engine": processing_engine_run.ProcessingEngineRunFacet(
                              version="2.11.0", name="Airflow", openlineageAdapterVersion="2.20.3")})


ALL = {"dag start": dag_event(RunState.START, AT),
       "dag complete": dag_event(RunState.COMPLETE, AT + timedelta(hours=1)),
       "task start": task_start(), "task complete": task_complete()}
ORDERS = {  # each compaction's events, in order
    "all at once": [["dag start", "task start", "task complete", "dag complete"]],
    "child before its parent, COMPLETE before START": [["task complete"], ["task start"],
                                                       ["dag start", "dag complete"]],
    "START last": [["dag complete", "task complete"], ["dag start"], ["task start"]],
}


@pytest.mark.parametrize("order", ORDERS)
def test_parents_facets_warnings_and_aliases_come_out_the_same_in_any_arrival_order(
    warehouse_db: str, log_root: Path, settings_for, order: str  # type: ignore[no-untyped-def]
) -> None:
    client = client_for(log_root)
    for compaction in ORDERS[order]:
        for name in compaction:
            client.emit(ALL[name])
        run_compaction(None, interval_end=datetime.now(UTC) + timedelta(hours=1), settings=settings_for(warehouse_db))

    assert rows(warehouse_db, """select r.run_id, l.relation, l.namespace, l.application, l.program_type, l.program,
                                        l.run_id
                                 from lineage.run_parents l join lineage.runs r using (run_key) order by 1, 2""") == [
        (TASK_RUN, "parent", "default", "default", "openlineage", "orders_dag", DAG_RUN),
        (TASK_RUN, "root", "default", "default", "openlineage", "orders_dag", DAG_RUN)]
    assert rows(warehouse_db, "select run_id, status, started_at from lineage.runs order by run_id") == [
        (DAG_RUN, "completed", AT), (TASK_RUN, "completed", AT + timedelta(minutes=1))]
    facets = {(of, name): facet for of, name, facet in rows(warehouse_db, """
        select facet_of, name, facet from lineage.run_facets f join lineage.runs r using (run_key)
        where r.run_id = '""" + TASK_RUN + "'")}
    # the parent facet lives in run_parents; the client adds a tags facet naming its version
    assert sorted(facets) == [("job", "jobType"), ("job", "sql"), ("run", "nominalTime"),
                              ("run", "processing_engine"), ("run", "tags")]
    assert facets[("job", "sql")]["query"] == "select 2"  # the later event's facet wins
    assert facets[("run", "nominalTime")]["nominalStartTime"] == "2026-11-23T09:00:00Z"  # only START had it
    assert facets[("run", "processing_engine")]["version"] == "2.11.0"
    assert rows(warehouse_db, """select r.run_id, w.warning, w.first_seen_at from lineage.run_warnings w
                                 join lineage.runs r using (run_key)""") == [
        (TASK_RUN, NAIVE_TIME, AT + timedelta(minutes=1))]
    assert rows(warehouse_db, """select d.dataset, f.name, f.facet ->> 'description' from lineage.dataset_facets f
                                 join lineage.datasets d using (dataset_key)""") == [
        ("s3://lake/raw/orders", "documentation", "orders as loaded")]
    assert rows(warehouse_db, """select a.namespace, a.alias, a.alias_type, d.dataset from lineage.dataset_aliases a
                                 join lineage.datasets d using (dataset_key)""") == [
        ("default", "hive://metastore:9083/shop.orders", "TABLE", "s3://lake/raw/orders")]
    assert rows(warehouse_db, "select count(*) from lineage.datasets where dataset like 'hive:%'") == [(0,)]


def fixture_events(name: str) -> list[dict[str, Any]]:
    loaded = json.loads((FIXTURES / name).read_text())
    return loaded if isinstance(loaded, list) else [loaded]


def test_dbt_command_model_and_query_runs_link_up_and_a_parent_never_seen_is_still_linked(
    warehouse_db: str, log_root: Path, settings_for  # type: ignore[no-untyped-def]
) -> None:
    client = client_for(log_root)
    for event in [*fixture_events("dbt_snowflake_structured_logs_run.json"),
                  *fixture_events("dbt_spark_model_column_lineage.json")]:
        client.transport.emit(event)
    run_compaction(None, interval_end=datetime.now(UTC) + timedelta(hours=1), settings=settings_for(warehouse_db))

    links = rows(warehouse_db, """select p.program, l.relation, l.application, l.program, l.run_id
                                  from lineage.run_parents l join lineage.runs r using (run_key)
                                  join lineage.programs p using (program_key) order by 1, 2""")
    command = ("dbt-test-namespace", "dbt-run-jaffle_shop", "0193a8f2-0c41-7d55-a1a0-9b3f6c2e1d01")
    model = ("dbt-test-namespace", "model.jaffle_shop.orders", "0193a8f2-3d9b-7a10-b6c4-2f8e7d5a9c02")
    never_sent = ("local://somehost", "dbt-run-demo_project", "0196eccd-8aa4-7274-9116-824575596aaf")
    assert links == [("demo_schema.demo_project.target_table", "parent", *never_sent),
                     ("model.jaffle_shop.orders", "parent", *command), ("model.jaffle_shop.orders", "root", *command),
                     ("model.jaffle_shop.orders.sql.1", "parent", *model),
                     ("model.jaffle_shop.orders.sql.1", "root", *command)]
    assert rows(warehouse_db, "select count(*) from lineage.run_details where program = 'dbt-run-demo_project'") == [
        (0,)]


def test_a_malformed_parent_or_facet_is_skipped_with_a_warning_and_the_event_kept(
    warehouse_db: str, log_root: Path, settings_for  # type: ignore[no-untyped-def]
) -> None:
    event = fixture_events("marquez_event_full.json")[0]
    event["run"]["facets"]["parent"] = {"run": {}, "job": {"namespace": "n", "name": 7}}
    event["run"]["facets"].update(nothing=None, text="not an object", big={"blob": "x" * 70_000})
    client_for(log_root).transport.emit(event)
    summary = run_compaction(None, interval_end=datetime.now(UTC) + timedelta(hours=1),
                             settings=settings_for(warehouse_db))

    assert summary.quarantined == 0
    assert rows(warehouse_db, "select program, status from lineage.run_details") == [("myjob.mytask", "completed")]
    assert rows(warehouse_db, "select count(*) from lineage.run_parents") == [(0,)]
    assert rows(warehouse_db, "select name from lineage.run_facets where facet_of = 'run'") == [("nominalTime",)]
    assert sorted(rows(warehouse_db, "select warning from lineage.run_warnings")) == [
        ("parent facet skipped: run.runId is missing",),
        ("run facet 'big' dropped: 70011 bytes, over the 65536-byte limit",)]

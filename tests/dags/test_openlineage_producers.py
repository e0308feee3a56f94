"""Real OpenLineage producers end to end: Airflow's OpenLineage provider and ``dbt-ol``, both
writing through our in-process transport, compacted into the warehouse.

One story, as ``make demo`` tells it: ``airflow dags test example_openlineage_sql`` with
``LINEAGE_AIRFLOW_OPENLINEAGE=true`` (the provider's events of three SQL tasks on the test
PostgreSQL), then ``airflow dags test lineage_compaction`` with ``LINEAGE_DBT_OPENLINEAGE=true``
as well (compacts them, derives field lineage, builds the marts under dbt-ol), then one more
compaction, which records the compaction DAG's own task runs and dbt-ol's model runs.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit

from spark_jobs.compaction.job import run_compaction
from tests.airflow_support import airflow_env, ensure_airflow_db, libpq
from tests.warehouse.test_compaction import rows
from warehouse.db.connection import connect
from warehouse.db.namespace_store import create_namespace
from warehouse.pipeline.report import render_report

ROOT = Path(__file__).resolve().parents[2]


def dags_test(dag_id: str, log_root: Path, warehouse: str) -> str:
    """``airflow dags test`` in the environment ``scripts/env.sh`` gives with both settings on."""
    completed = subprocess.run(
        ["bash", "-c", 'source scripts/env.sh && exec airflow dags test "$@"', "dags-test", dag_id,
         datetime.now(UTC).isoformat()],
        cwd=ROOT, capture_output=True, text=True, timeout=600, check=False,
        env=airflow_env(LINEAGE_AIRFLOW_OPENLINEAGE="true", LINEAGE_DBT_OPENLINEAGE="true",
                        LINEAGE_LOG_ROOT=str(log_root), LINEAGE_DATABASE_URL=warehouse,
                        AIRFLOW_CONN_LINEAGE_WAREHOUSE=libpq(warehouse)),
    )
    output = completed.stdout + completed.stderr
    assert completed.returncode == 0 and "state=success" in output, output[-4000:]
    return output


def raw_events(log_root: Path) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(line)["payload"] for path in sorted(log_root.rglob("openlineage-*.jsonl"))
            for line in path.read_text().splitlines()]


def _wait_for_task_events(log_root: Path, tasks: tuple[str, ...], seconds: float = 90) -> None:
    """Until each task's COMPLETE event is in the raw log: the provider emits a task's events from
    a process of its own after the task ends, so ``airflow dags test`` can return first (the
    compaction then found only the DAG run's events, once in seven runs)."""
    deadline = time.monotonic() + seconds
    while True:
        done = {event["job"]["name"].rsplit(".", 1)[-1] for event in raw_events(log_root)
                if event.get("eventType") == "COMPLETE" and isinstance(event.get("job"), dict)}
        missing = [task for task in tasks if task not in done]
        if not missing or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert not missing, f"the provider's COMPLETE events of {missing} never reached the raw log in {seconds:.0f}s"


def _diagnosis(output: str) -> str:
    """What a failed run of the compaction DAG said about its batch (this test failed once in
    seven runs without its SUMMARY line): the lines naming the batch, quarantines, skips and
    errors, and the output's end."""
    said = [line for line in output.splitlines()
            if re.search(r"SUMMARY|compacted|quarantin|skip|Skip|ERROR|Error|Traceback|state=|files", line)
            and "Skipping registering" not in line]  # GX's noise about its own plugins, hundreds of lines
    return "\n".join(said[-80:]) + "\n--- the end of the output ---\n" + output[-3000:]


def test_airflow_and_dbt_lineage_reach_the_warehouse_through_the_transport(
    warehouse_db: str, log_root: Path, settings_for  # type: ignore[no-untyped-def]
) -> None:
    ensure_airflow_db()
    with connect(warehouse_db, autocommit=True) as conn:  # the warehouse namespaces of the two job namespaces
        create_namespace(conn, "airflow", "Airflow's own lineage")
        create_namespace(conn, "dbt", "dbt-ol's lineage of the marts")
    parts = urlsplit(libpq(warehouse_db))
    database = f"postgres://{parts.hostname}:{parts.port}/{parts.path.lstrip('/')}"

    dags_test("example_openlineage_sql", log_root, warehouse_db)
    _wait_for_task_events(log_root, ("seed_shop", "build_customer_totals", "load_big_spenders"))
    compaction = dags_test("lineage_compaction", log_root, warehouse_db)
    assert "quarantined=0" in compaction and "field_records=2" in compaction, _diagnosis(compaction)
    assert re.search(r"dbt build: \d+ passed, 0 warnings, \d+ OpenLineage events\b", compaction)
    assert "NOT written" not in compaction

    # The example's SQL tables are datasets, read and written by runs of `openlineage` programs.
    assert rows(warehouse_db, "select program, status from lineage.run_details where application = 'airflow' "
                              "and program like 'example_openlineage_sql%' order by program") == [
        ("example_openlineage_sql", "completed"), ("example_openlineage_sql.build_customer_totals", "completed"),
        ("example_openlineage_sql.load_big_spenders", "completed"), ("example_openlineage_sql.seed_shop", "completed")]
    assert sorted(rows(warehouse_db, "select program, dataset, access from lineage.access_details "
                                     "where program like 'example_openlineage_sql%'")) == sorted([
        ("example_openlineage_sql.seed_shop", f"{database}.example_shop.customers", "write"),
        ("example_openlineage_sql.seed_shop", f"{database}.example_shop.orders", "write"),
        ("example_openlineage_sql.build_customer_totals", f"{database}.example_shop.customers", "read"),
        ("example_openlineage_sql.build_customer_totals", f"{database}.example_shop.orders", "read"),
        ("example_openlineage_sql.build_customer_totals", f"{database}.example_shop.customer_totals", "write"),
        ("example_openlineage_sql.load_big_spenders", f"{database}.example_shop.customer_totals", "read"),
        ("example_openlineage_sql.load_big_spenders", f"{database}.example_shop.big_spenders", "write")])
    assert set(rows(warehouse_db, "select data_id, program_id, access from lineage_marts.dataset_lineage_edges "
                                  "where program_id like '%load_big_spenders'")) == {
        (f"dataset.default.{database}.example_shop.customer_totals",
         "openlineage.airflow.airflow.example_openlineage_sql.load_big_spenders", "read"),
        (f"dataset.default.{database}.example_shop.big_spenders",
         "openlineage.airflow.airflow.example_openlineage_sql.load_big_spenders", "write")}

    # The provider's SQL parser gave column lineage: field paths back to the source columns.
    sources = {(field, source["name"].rsplit(".", 1)[-1], source["field"])
               for field, path in rows(warehouse_db, "select p.field, p.path from lineage.field_paths p "
                                                     "join lineage.field_operation_sets s "
                                                     "on s.fingerprint = p.set_fingerprint "
                                                     f"where s.destination = '{database}.example_shop.customer_totals'")
               for source in path["sources"]}
    assert sources == {("customer", "customers", "name"), ("country", "customers", "country"),
                       ("total_spent", "orders", "amount"), ("order_count", "orders", "order_id")}
    assert ("big_spenders", "total_spent", 1) in {
        (dataset.rsplit(".", 1)[-1], field, runs) for dataset, field, runs in rows(
            warehouse_db, "select dataset, field, run_count from lineage_marts.field_provenance")}
    (schema,) = rows(warehouse_db, "select value from lineage.metadata where key = 'schema' and entity_key = "
                                   f"'namespace=default,dataset={database}.example_shop.customer_totals'")
    assert [(f["name"], f["type"]) for f in json.loads(schema[0])["fields"]] == [
        ("customer", "text"), ("country", "text"), ("total_spent", "numeric"), ("order_count", "int8")]

    # The compaction DAG's own runs and dbt-ol's model runs are in the log now; one more
    # compaction records them.
    dbt_run = next(event for event in raw_events(log_root) if event["job"]["name"] == "dbt-run-lineage_warehouse")
    assert dbt_run["run"]["facets"]["parent"]["job"] == {"namespace": "airflow",
                                                         "name": "lineage_compaction.build_marts"}
    summary = run_compaction(None, interval_end=datetime.now(UTC) + timedelta(hours=1),
                             settings=settings_for(warehouse_db))
    assert summary.quarantined == 0
    assert {"lineage_compaction.compact", "lineage_compaction.build_marts"} <= {
        program for program, status in rows(warehouse_db, "select program, status from lineage.run_details "
                                                          "where application = 'airflow'") if status == "completed"}
    marts = {dataset.rsplit(".", 1)[-1] for (dataset,) in rows(
        warehouse_db, "select dataset from lineage.access_details where application = 'dbt' and access = 'write' "
                      f"and dataset like '{database}.lineage_marts.%' and program like '%.build.run'")}
    assert {"dataset_lineage_edges", "field_provenance", "program_runs", "lineage_walk"} <= marts
    assert rows(warehouse_db, "select dataset from lineage.access_details where application = 'dbt' "
                              "and access = 'read' and program like '%.lineage_marts.lineage_warehouse.program_runs"
                              ".build.run' order by 1") == [
        (f"{database}.lineage_marts_staging.{view}",)
        for view in ("stg_lineage__dataset_accesses", "stg_lineage__programs", "stg_lineage__runs")]
    # The run hierarchy: a task run under its DAG run, dbt's models under dbt-ol's invocation, and
    # that invocation under the Airflow task that ran the build.
    parents = set(rows(warehouse_db, "select r.program, p.relation, p.program from lineage.run_details r "
                                     "join lineage.run_parents p using (run_key)"))
    assert {("example_openlineage_sql.load_big_spenders", "parent", "example_openlineage_sql"),
            ("dbt-run-lineage_warehouse", "parent", "lineage_compaction.build_marts"),
            ("dbt-run-lineage_warehouse", "root", "lineage_compaction"),
            (f"{database.rsplit('/', 1)[-1]}.lineage_marts.lineage_warehouse.program_runs.build.run", "parent",
             "dbt-run-lineage_warehouse")} <= parents

    # The demo's summary counts them per job namespace.
    report = render_report(warehouse_db, None)
    assert re.search(r"\n  airflow +\d+ runs of \d+ jobs, 4 datasets written, 6 fields with column lineage\n", report)
    models = len(list((ROOT / "dbt" / "models").rglob("*.sql")))  # each: a run of its own and one of its tests
    assert re.search(rf"\n  dbt +{2 * models} runs of {2 * models} jobs, {models} datasets written, 0 fields with "
                     r"column lineage\n", report), report

"""The job type is told (issue 30, item 3): an OpenLineage job's ``jobType`` facet, as the
producers send it (their recorded events, ``tests/fixtures/openlineage``), compacted into real
PostgreSQL, gives its program's job type; the program keeps its identity (type ``openlineage``),
so its parent links and its events without the facet still name it."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest

from lineage.naming.identity import NamespaceMap
from lineage.openlineage.mapping import wrap
from spark_jobs.compaction.job import run_compaction
from tests.factories import write_log
from warehouse.db.connection import connect

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "openlineage"


def recorded(name: str) -> list[dict[str, Any]]:
    loaded = json.loads((FIXTURES / f"{name}.json").read_text())
    return loaded if isinstance(loaded, list) else [loaded]


def test_each_producer_s_job_type_facet_gives_its_program_s_job_type(warehouse_db: str, log_root: Path,
                                                                    settings_for) -> None:  # type: ignore[no-untyped-def]
    producers = ("airflow_sql_execute_query_postgres_column_lineage", "dbt_snowflake_structured_logs_run",
                 "spark_ctas_hive_column_lineage", "flink_kafka_sql_streaming", "hive_ctas_column_lineage")
    events = [event for name in producers for event in recorded(name)]
    write_log(log_root, [wrap(event, NamespaceMap()) for event in events])
    run_compaction(None, interval_end=datetime(2030, 1, 1, tzinfo=UTC),
                   settings=settings_for(warehouse_db, LINEAGE_AUTO_CREATE_NAMESPACES="true"))
    with connect(warehouse_db) as conn:
        typed = dict(conn.execute("""select program, job_type from lineage.programs
                                     where program_type = 'openlineage' and job_type is not null""").fetchall())
        parents = conn.execute("""select distinct program_type, program from lineage.run_parents
                                  where relation = 'parent' and program in ('mydag', 'dbt-run-jaffle_shop')
                                  order by program""").fetchall()
    assert typed == {
        "mydag.mytask": "airflow_task",
        "dbt-run-jaffle_shop": "dbt_job",
        "model.jaffle_shop.orders": "dbt_model",
        "model.jaffle_shop.orders.sql.1": "dbt_sql",
        "open_lineage_integration_create_table.execute_create_hive_table_as_select_command.default_tbl1":
            "spark_sql_job",
        "insert-into_default_catalog.default_database.kafka_output": "flink_job",
        "createtable_as_select.mydatabase.target_table": "hive_query",
    }
    # a parent facet names its job by namespace and name only: the link names the program by the
    # identity every event of the job gives, whatever its job type (the dbt job's is dbt_job)
    assert parents == [("openlineage", "dbt-run-jaffle_shop"), ("openlineage", "mydag")]


@pytest.mark.parametrize(("facet", "expected"), [
    ({"integration": "AIRFLOW", "jobType": "DAG", "processingType": "BATCH"}, "airflow_dag"),
    ({"integration": "SPARK", "jobType": "APPLICATION", "processingType": "BATCH"}, "spark_application"),
    ({"integration": "SPARK", "jobType": "SQL_JOB"}, "spark_sql_job"),
    ({"integration": "Great Expectations", "jobType": "Checkpoint"}, "great_expectations_checkpoint"),
    ({"integration": "AIRFLOW", "processingType": "BATCH"}, "airflow"),  # no jobType: the integration alone
    ({"processingType": "STREAMING"}, None),  # nothing names it
    ({"integration": "42", "jobType": "JOB"}, None),  # a type starts with a letter
    ({"integration": "X" * 40, "jobType": "JOB"}, "x" * 32),  # cut to 32 characters
    ({"integration": "<script>", "jobType": "'; drop table x; --"}, "script_drop_table_x"),
    ({"integration": 7, "jobType": "JOB"}, None),  # a number renders as text: starts with a digit
])
def test_the_job_type_is_one_lower_case_word(warehouse_db: str, facet: dict[str, Any], expected: str | None) -> None:
    with psycopg.connect(warehouse_db.replace("postgresql+psycopg", "postgresql")) as conn:
        assert conn.execute("select lineage.job_type(%s::jsonb)", (json.dumps(facet),)).fetchone() == (expected,)


def test_the_latest_event_s_job_type_holds_whatever_the_arrival_order(warehouse_db: str, log_root: Path,
                                                                      settings_for) -> None:  # type: ignore[no-untyped-def]
    def sent(hour: int, job_type: str) -> dict[str, Any]:
        return wrap({"eventType": "COMPLETE", "eventTime": f"2026-11-20T{hour:02d}:00:00+00:00", "producer": "p",
                     "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
                     "run": {"runId": f"0195f3b1-7a3e-7c6e-9d3f-2f1c0b8e4a{hour:02d}"},
                     "job": {"namespace": "default", "name": "nightly", "facets": {"jobType": {
                         "_producer": "p", "_schemaURL": "s", "integration": "AIRFLOW", "jobType": job_type,
                         "processingType": "BATCH"}}}}, NamespaceMap())

    def job_type() -> tuple[Any, ...]:
        with connect(warehouse_db) as conn:
            return tuple(conn.execute("select job_type, job_type_at from lineage.programs where program = 'nightly'"
                                      ).fetchone() or ())

    settings = settings_for(warehouse_db)
    for hour, kind in ((1, "TASK"), (3, "TASK"), (2, "DAG")):  # the same type again, then an older one, late
        write_log(log_root, [sent(hour, kind)])
        run_compaction(None, interval_end=datetime(2030, 1, 1, tzinfo=UTC), settings=settings)
    assert job_type() == ("airflow_task", datetime(2026, 11, 20, 3, tzinfo=UTC))


def test_a_job_only_a_job_event_declares_gets_its_job_type_and_no_run(warehouse_db: str, log_root: Path,
                                                                      settings_for) -> None:  # type: ignore[no-untyped-def]
    """A dbt manifest's JobEvent (no run): its job's jobType facet is kept as the program's, so a
    program known only by its declaration is typed too; its facets make no run."""
    job_event = {
        "eventTime": "2026-11-23T10:00:00Z", "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/integration/dbt",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent",
        "job": {"namespace": "dbt", "name": "model.shop.orders", "facets": {"jobType": {
            "_producer": "dbt", "_schemaURL": "https://openlineage.io/spec/facets/2-0-3/JobTypeJobFacet.json",
            "integration": "DBT", "jobType": "MODEL", "processingType": "BATCH"}}},
        "inputs": [{"namespace": "postgres://db:5432", "name": "shop.public.raw_orders"}],
        "outputs": [{"namespace": "postgres://db:5432", "name": "shop.public.orders"}]}
    write_log(log_root, [wrap(job_event, NamespaceMap())])
    summary = run_compaction(None, interval_end=datetime(2030, 1, 1, tzinfo=UTC),
                             settings=settings_for(warehouse_db, LINEAGE_AUTO_CREATE_NAMESPACES="true"))
    assert summary.quarantined == 0
    with connect(warehouse_db) as conn:
        assert conn.execute("select program, job_type from lineage.programs").fetchall() == [
            ("model.shop.orders", "dbt_model")]
        assert conn.execute("select count(*) from lineage.runs").fetchone() == (0,)
        assert conn.execute("select count(*), count(distinct access) from lineage.declared_accesses").fetchone() == (
            2, 2)


def declaration(hour: int, inputs: list[str]) -> dict[str, Any]:
    """A JobEvent of ``shop.report`` at ``hour`` declaring it reads ``inputs``."""
    return wrap({"eventTime": f"2026-11-23T{hour:02d}:00:00+00:00", "producer": "p",
                 "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent",
                 "job": {"namespace": "dbt", "name": "shop.report"},
                 "inputs": [{"namespace": "postgres://db:5432", "name": f"shop.public.{name}"} for name in inputs]},
                NamespaceMap())


@pytest.mark.parametrize("arrival", [(1, 2, 3), (2, 1, 3), (2, 3, 1), (3, 1, 2), (3, 2, 1), None])
def test_an_access_declared_again_after_a_declaration_without_it_starts_again(
        warehouse_db: str, log_root: Path, settings_for, arrival: tuple[int, ...] | None) -> None:  # type: ignore[no-untyped-def]
    """orders declared at 1, left out at 2, declared again at 3: it has been declared since 3. Before
    (a review finding): a declaration older than the latest, compacted after it, pulled the time
    back to 1 (and so did the three in one compaction). Each arrival in a compaction of its own,
    and all three in one (None). (Arriving 1, 3, then 2 still says 1: without the history of
    declarations, the late 2 cannot tell that 3 started orders again; docs/dataset-lineage.md.)"""
    settings = settings_for(warehouse_db, LINEAGE_AUTO_CREATE_NAMESPACES="true")
    sent = {1: declaration(1, ["orders"]), 2: declaration(2, ["other"]), 3: declaration(3, ["orders"])}
    for batch in ([[sent[1], sent[2], sent[3]]] if arrival is None else [[sent[hour]] for hour in arrival]):
        write_log(log_root, batch)
        run_compaction(None, interval_end=datetime(2030, 1, 1, tzinfo=UTC), settings=settings)
    with connect(warehouse_db) as conn:
        declared = conn.execute("""select d.dataset, a.first_declared_at, a.declared_at from lineage.declared_accesses a
                                   join lineage.datasets d using (dataset_key)""").fetchall()
    at_3 = datetime(2026, 11, 23, 3, tzinfo=UTC)
    assert declared == [("postgres://db:5432/shop.public.orders", at_3, at_3)]


def test_an_access_every_declaration_holds_keeps_its_first_time(warehouse_db: str, log_root: Path,
                                                                settings_for) -> None:  # type: ignore[no-untyped-def]
    settings = settings_for(warehouse_db, LINEAGE_AUTO_CREATE_NAMESPACES="true")
    for batch in ([declaration(1, ["orders"])], [declaration(2, ["orders", "other"]), declaration(3, ["orders"])]):
        write_log(log_root, batch)
        run_compaction(None, interval_end=datetime(2030, 1, 1, tzinfo=UTC), settings=settings)
    with connect(warehouse_db) as conn:
        declared = conn.execute("""select d.dataset, a.first_declared_at, a.declared_at from lineage.declared_accesses a
                                   join lineage.datasets d using (dataset_key)""").fetchall()
    assert declared == [("postgres://db:5432/shop.public.orders", datetime(2026, 11, 23, 1, tzinfo=UTC),
                         datetime(2026, 11, 23, 3, tzinfo=UTC))]


@pytest.mark.parametrize("together", [True, False])
def test_two_declarations_of_one_moment_are_one_whatever_is_compacted_with_what(
        warehouse_db: str, log_root: Path, settings_for, together: bool) -> None:  # type: ignore[no-untyped-def]
    """orders and other declared apart at 1 (two JobEvents of one moment: one declaration of both),
    orders again at 2: orders has been declared since 1, whether the three come in one compaction
    or the first alone (it said 2 then, taking the kept moment's other half for a gap: a review
    finding)."""
    settings = settings_for(warehouse_db, LINEAGE_AUTO_CREATE_NAMESPACES="true")
    first, tied, later = declaration(1, ["orders"]), declaration(1, ["other"]), declaration(2, ["orders"])
    for batch in ([[first, tied, later]] if together else [[first], [tied, later]]):
        write_log(log_root, batch)
        run_compaction(None, interval_end=datetime(2030, 1, 1, tzinfo=UTC), settings=settings)
    with connect(warehouse_db) as conn:
        declared = conn.execute("""select d.dataset, a.first_declared_at from lineage.declared_accesses a
                                   join lineage.datasets d using (dataset_key)""").fetchall()
    assert declared == [("postgres://db:5432/shop.public.orders", datetime(2026, 11, 23, 1, tzinfo=UTC))]

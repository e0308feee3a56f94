"""Automatic capture on real Spark: ``lineage.spark.track`` records a run, its reads and writes
and one field-operations record per write, from the plans Spark builds; each case states the
dependencies it expects by hand."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.window import Window

from lineage.spark.capture import TrackError, track
from tests.spark.captured_records import column_sources, made_by


def events(log_root: Path) -> list[dict[str, Any]]:
    found = [json.loads(line) for path in log_root.glob("dt=*/hour=*/*.jsonl")
             for line in path.read_text().splitlines()]
    return sorted(found, key=lambda event: (event["event_time"], event["kind"] != "run_start"))


def records(log_root: Path) -> dict[str, dict[str, Any]]:
    """Field-operations records by destination name."""
    return {e["payload"]["destination"]["name"]: e["payload"]
            for e in events(log_root) if e["kind"] == "field_operations"}


sources_of = column_sources
operation_of = made_by


@pytest.fixture
def data(spark: SparkSession, tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "lake"
    people = spark.createDataFrame([(1, "John", "Smith", 31, "CA"), (2, "Ann", "Lee", 40, "NY")],
                                   "id int, first string, last string, age int, state string")
    people.write.parquet(str(root / "people"))
    spark.createDataFrame([(1, 10.0), (1, 5.0), (2, 7.5)], "person int, amount double").write.parquet(
        str(root / "orders"))
    yield root


def test_a_tracked_job_records_its_run_reads_writes_and_named_operations(spark: SparkSession, data: Path,
                                                                         log_root: Path) -> None:
    with track(spark, namespace="default", application="profiles", program="build", log_root=str(log_root)) as run:
        people = spark.read.parquet(str(data / "people"))
        (people.withColumn("name", F.concat_ws(" ", "first", "last")).filter(F.col("age") > 30)
         .select("id", "name", (F.col("age") * 2).alias("double_age"), F.sha2("last", 256).alias("hashed"))
         .write.mode("overwrite").parquet(str(data / "profiles")))
    assert run.writes == 1 and run.warnings == []

    kinds = [e["kind"] for e in events(log_root)]
    assert kinds[0] == "run_start" and kinds[-1] == "run_end"
    accesses = {(e["payload"]["dataset"]["name"].rsplit("/", 1)[-1], e["payload"]["access"])
                for e in events(log_root) if e["kind"] == "dataset_access"}
    assert accesses == {("people", "read"), ("profiles", "write")}
    record = records(log_root)[f"file/{data}/profiles"]
    assert sources_of(record, "id") == {("people", "id", "DIRECT", "IDENTITY"), ("people", "age", "INDIRECT", "FILTER")}
    assert sources_of(record, "name") == {("people", "first", "DIRECT", "TRANSFORMATION"),
                                          ("people", "last", "DIRECT", "TRANSFORMATION"),
                                          ("people", "age", "INDIRECT", "FILTER")}
    assert operation_of(record, "name") == ("concat_ws", "concat_ws(' ', first, last)")
    assert operation_of(record, "double_age") == ("multiply", "(age * 2)")
    hashed = next(op for op in record["operations"] if op["outputs"] == ["hashed"])
    assert any(item["transformation"].get("masking") for item in hashed["inputs"])


def test_aggregates_joins_windows_and_sql_ctas(spark: SparkSession, data: Path, log_root: Path) -> None:
    with track(spark, application="shop", program="totals", log_root=str(log_root)):
        people = spark.read.parquet(str(data / "people"))
        orders = spark.read.parquet(str(data / "orders"))
        totals = (orders.join(people, orders.person == people.id).groupBy("state")
                  .agg(F.sum("amount").alias("total"), F.count("*").alias("orders")))
        totals.write.mode("overwrite").parquet(str(data / "totals"))
        ranked = people.withColumn("rank", F.row_number().over(Window.partitionBy("state").orderBy("age")))
        ranked.select("id", "rank").write.mode("overwrite").json(str(data / "ranked"))
        spark.read.parquet(str(data / "people")).createOrReplaceTempView("people_view")
        spark.sql(f"create table capture_ctas using parquet location '{data}/ctas' as "
                  "select id, case when age > 35 then upper(first) else last end as label from people_view")
    try:
        found = records(log_root)
        total = found[f"file/{data}/totals"]
        assert sources_of(total, "total") >= {("orders", "amount", "DIRECT", "AGGREGATION"),
                                               ("people", "state", "INDIRECT", "GROUP_BY"),
                                               ("orders", "person", "INDIRECT", "JOIN"),
                                               ("people", "id", "INDIRECT", "JOIN")}
        assert operation_of(total, "total") == ("sum", "sum(amount)")
        assert sources_of(total, "state") >= {("people", "state", "DIRECT", "IDENTITY")}
        ranked = found[f"file/{data}/ranked"]
        assert ("people", "state", "INDIRECT", "WINDOW") in sources_of(ranked, "rank")
        assert ("people", "age", "INDIRECT", "WINDOW") in sources_of(ranked, "rank")
        ctas = found["spark_catalog/default.capture_ctas"]
        assert sources_of(ctas, "label") == {("people", "first", "DIRECT", "TRANSFORMATION"),
                                             ("people", "last", "DIRECT", "TRANSFORMATION"),
                                             ("people", "age", "INDIRECT", "CONDITIONAL")}
    finally:
        spark.sql("drop table if exists capture_ctas")


def test_a_capture_failure_never_fails_the_job(spark: SparkSession, data: Path, log_root: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_: Any) -> Any:
        raise RuntimeError("injected")

    monkeypatch.setattr("lineage.spark.capture.plan_lineage", broken)
    with track(spark, application="a", program="b", log_root=str(log_root)) as run:
        spark.read.parquet(str(data / "people")).write.mode("overwrite").parquet(str(data / "copy"))
    assert (data / "copy").exists()
    assert run.writes == 0 and len(run.warnings) == 1 and "injected" in run.warnings[0]
    # the failure is kept with the run as a warning (a second run_facets event)
    assert [e["kind"] for e in events(log_root)] == ["run_start", "run_facets", "run_facets", "run_end"]
    notes = [e["payload"]["warnings"] for e in events(log_root) if "warnings" in e["payload"]]
    assert len(notes) == 1 and "injected" in notes[0][0]
    assert events(log_root)[-1]["payload"]["status"] == "completed"


def test_writes_after_the_run_ended_are_not_captured(spark: SparkSession, data: Path, log_root: Path) -> None:
    with track(spark, application="a", program="b", log_root=str(log_root)) as run:
        pass
    spark.read.parquet(str(data / "people")).write.mode("overwrite").parquet(str(data / "after"))
    spark.sparkContext._jsc.sc().listenerBus().waitUntilEmpty(60_000)
    assert run.writes == 0 and run.warnings == []
    assert [e["kind"] for e in events(log_root)] == ["run_start", "run_facets", "run_end"]


def test_a_failing_block_ends_the_run_failed_and_its_error_wins(spark: SparkSession, data: Path,
                                                               log_root: Path) -> None:
    with pytest.raises(ZeroDivisionError), track(spark, application="a", program="b", log_root=str(log_root)):
        1 / 0  # noqa: B018
    assert events(log_root)[-1]["payload"]["status"] == "failed"


def test_a_spark_connect_like_session_is_refused_at_once() -> None:
    class Remote:
        def is_remote(self) -> bool:
            return True

    with pytest.raises(TrackError, match="Spark Connect"):
        track(Remote())


def test_a_job_launched_by_an_airflow_task_records_its_parent_and_where_it_ran(
        spark: SparkSession, data: Path, log_root: Path, warehouse_db: str, settings_for: Any,
        monkeypatch: pytest.MonkeyPatch) -> None:
    parent_run = "0195f3b1-7a3e-7c6e-9d3f-2f1c0b8e4a55"
    monkeypatch.setenv("OPENLINEAGE_PARENT_ID", f"airflow/etl_dag.load_orders/{parent_run}")
    monkeypatch.setenv("OPENLINEAGE_ROOT_PARENT_ID", "airflow/etl_dag/0195f3b1-7a3e-7c6e-9d3f-2f1c0b8e4a66")
    monkeypatch.setenv("AIRFLOW_CTX_DAG_ID", "etl_dag")
    monkeypatch.setenv("AIRFLOW_CTX_TASK_ID", "load_orders")
    monkeypatch.setenv("AIRFLOW_CTX_TRY_NUMBER", "2")
    with track(spark, application="etl", program="load_orders", log_root=str(log_root)):
        spark.read.parquet(str(data / "orders")).write.mode("overwrite").parquet(str(data / "orders_copy"))

    facets = next(e["payload"]["run"] for e in events(log_root) if e["kind"] == "run_facets")
    assert facets["spark_applicationDetails"]["applicationId"] == spark.sparkContext.applicationId
    assert facets["airflow_task"] == {"dag_id": "etl_dag", "task_id": "load_orders", "try_number": "2"}
    links = next(e["payload"] for e in events(log_root) if e["kind"] == "run_parent")
    assert links["parent"] == {"namespace": "airflow", "application": "airflow", "program_type": "openlineage",
                               "program": "etl_dag.load_orders", "run_id": parent_run}

    from spark_jobs.compaction.job import run_compaction
    from tests.warehouse.test_compaction import rows

    run_compaction(spark, interval_end=datetime.now(UTC) + timedelta(hours=1), settings=settings_for(warehouse_db))
    assert rows(warehouse_db, "select relation, application, program, run_id from lineage.run_parents "
                              "order by relation") == [
        ("parent", "airflow", "etl_dag.load_orders", parent_run),
        ("root", "airflow", "etl_dag", "0195f3b1-7a3e-7c6e-9d3f-2f1c0b8e4a66")]


def test_a_malformed_parent_variable_records_no_parent() -> None:
    from lineage.naming.identity import NO_MAPPING
    from lineage.spark.capture import launch_context

    for value in ("", "no-slashes", "ns//run", "ns/job/"):
        facets, parent = launch_context({"OPENLINEAGE_PARENT_ID": value}, NO_MAPPING, {"applicationId": "a"})
        assert parent is None and facets == {"spark_applicationDetails": {"applicationId": "a"}}


def test_a_plan_node_it_does_not_know_gives_lineage_and_a_note_kept_with_the_run(
        spark: SparkSession, data: Path, log_root: Path) -> None:
    def double(batches: Any) -> Any:
        yield from batches

    with track(spark, application="a", program="arrow", log_root=str(log_root)) as run:
        people = spark.read.parquet(str(data / "people"))
        people.select("id", "age").mapInArrow(double, "id int, age int").write.parquet(str(data / "mapped"))
    assert run.writes == 1 and len(run.warnings) == 1 and "MapInArrow" in run.warnings[0]
    accesses = {(e["payload"]["dataset"]["name"].rsplit("/", 1)[-1], e["payload"]["access"])
                for e in events(log_root) if e["kind"] == "dataset_access"}
    assert accesses == {("people", "read"), ("mapped", "write")}
    # what the Python function made depends on every column it was given
    assert sources_of(records(log_root)[f"file/{data}/mapped"], "age") == {
        ("people", "id", "DIRECT", "TRANSFORMATION"), ("people", "age", "DIRECT", "TRANSFORMATION")}
    notes = [e["payload"]["warnings"] for e in events(log_root)
             if e["kind"] == "run_facets" and "warnings" in e["payload"]]
    assert len(notes) == 1 and "MapInArrow" in notes[0][0] and "mapped" in notes[0][0]



def test_a_plan_s_json_through_a_file_is_spark_s_own(spark: SparkSession) -> None:
    """Past 8 KiB a py4j answer stalls 44 ms: the JVM writes the plan's JSON into a temporary file
    instead; the text is the same as toJSON's, for a plan well over 8 KiB, again through the same
    file, and ``close`` leaves no file."""
    import tempfile

    from lineage.spark.capture import PlanJson

    frame = spark.range(3).selectExpr("id", "cast(id as string) as name")
    frame = frame.select(*[F.concat_ws("-", "name", F.lit(index)).alias(f"c{index}") for index in range(64)])
    plan = frame._jdf.queryExecution().analyzed()
    whole = plan.toJSON()
    assert len(whole) > 20_000
    before = set(Path(tempfile.gettempdir()).glob("lineage-plan-*"))
    reader = PlanJson(spark.sparkContext._jvm)
    assert json.loads(reader.of(plan)) == json.loads(whole) and reader._file
    smaller = spark.range(2).selectExpr("id * 2 as doubled")._jdf.queryExecution().analyzed()
    assert json.loads(reader.of(smaller)) == json.loads(smaller.toJSON())  # the file rewritten, not appended to
    # its own folder (another xdist worker's capture may make one in the same /tmp meanwhile)
    assert reader._folder is not None
    folder = Path(reader._folder)
    assert folder in set(Path(tempfile.gettempdir()).glob("lineage-plan-*")) - before
    assert not list(folder.iterdir())  # no plan left on disk between writes

    class OtherSpark:  # a plan without jsonValue (another Spark's internals): toJSON, for that plan only
        def toJSON(self) -> str:
            return "[]"

    assert reader.of(OtherSpark()) == "[]" and reader._file
    assert json.loads(reader.of(plan)) == json.loads(whole)
    reader.close()
    assert not folder.exists()

"""Column lineage of captured writes, case by case, on real Spark: each case is ordinary
PySpark (or SQL) run under ``track``, and states by hand the sources it expects for each written
column as (source dataset, source field, transformation type, subtype)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pyspark import cloudpickle
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.datasource import DataSource, DataSourceWriter, WriterCommitMessage

from lineage.model.column_lineage import column_lineage
from lineage.spark.capture import Tracker, track
from tests.spark.captured_records import Source, column_sources, made_by, short


def captured(log_root: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for path in sorted(log_root.glob("dt=*/hour=*/*.jsonl"))
            for line in path.read_text().splitlines()]


def records(log_root: Path) -> dict[str, dict[str, Any]]:
    """Field-operations records by the last part of their destination's name."""
    return {e["payload"]["destination"]["name"].rsplit("/", 1)[-1].rsplit(".", 1)[-1]: e["payload"]
            for e in captured(log_root) if e["kind"] == "field_operations"}


def accesses(log_root: Path) -> set[tuple[str, str]]:
    return {(e["payload"]["dataset"]["name"].rsplit("/", 1)[-1].rsplit(".", 1)[-1], e["payload"]["access"])
            for e in captured(log_root) if e["kind"] == "dataset_access"}


sources = column_sources
operation = made_by


def direct(*items: tuple[str, str, str]) -> set[Source]:
    return {(dataset, column, "DIRECT", subtype) for dataset, column, subtype in items}


@pytest.fixture
def lake(spark: SparkSession, tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "lake"
    spark.createDataFrame([(1, "John", "Smith", 31, "CA", ("Oakland", "94601")),
                           (2, "Ann", "Lee", 40, "NY", ("Albany", "12201"))],
                          "id int, first string, last string, age int, state string, "
                          "address struct<city: string, zip: string>").write.parquet(str(root / "people"))
    spark.createDataFrame([(1, 1, 10.0, "a,b"), (2, 1, 5.0, "c"), (3, 2, 7.5, "d,e")],
                          "id int, person int, amount double, tags string").write.parquet(str(root / "orders"))
    yield root


@pytest.fixture
def run_job(spark: SparkSession, log_root: Path) -> Callable[[Callable[[], None]], Tracker]:
    def run(job: Callable[[], None]) -> Tracker:
        with track(spark, namespace="default", application="cases", program="case", log_root=str(log_root)) as tracker:
            job()
        assert tracker.warnings == [], tracker.warnings
        return tracker
    return run


def test_identity_rename_literals_and_casts(spark: SparkSession, lake: Path, log_root: Path, run_job: Any) -> None:
    def job() -> None:
        people = spark.read.parquet(str(lake / "people"))
        people.select("id", F.col("first").alias("given"), F.lit("v1").alias("version"),
                      F.col("age").cast("string").alias("age_text")).write.parquet(str(lake / "out"))
    run_job(job)
    record = records(log_root)["out"]
    assert sources(record, "id") == direct(("people", "id", "IDENTITY"))
    assert sources(record, "given") == direct(("people", "first", "IDENTITY"))
    assert sources(record, "version") == set()  # a literal reads nothing
    assert sources(record, "age_text") == direct(("people", "age", "TRANSFORMATION"))
    assert operation(record, "age_text") == ("cast", "CAST(age AS string)")
    assert operation(record, "given")[0] == "read"  # a rename is no operation: the write reads it from the source


def test_arithmetic_concat_and_conditionals_over_several_inputs(spark: SparkSession, lake: Path, log_root: Path,
                                                               run_job: Any) -> None:
    def job() -> None:
        people = spark.read.parquet(str(lake / "people"))
        people.select(
            (F.col("age") + F.col("id")).alias("sum_of"),
            F.concat("first", F.lit(" "), "last").alias("full"),
            F.when(F.col("state") == "CA", F.col("first")).otherwise(F.col("last")).alias("chosen"),
            F.expr("if(age > 35, 'old', 'young')").alias("bracket"),
            F.coalesce("first", "last").alias("any_name"),
            F.when(F.col("age") > 0, F.col("age")).otherwise(0).alias("positive_age"),
            F.expr("nvl(first, state)").alias("nvl_name"),
            F.expr("nullif(first, last)").alias("unless_same"),
            F.expr("nvl2(state, first, last)").alias("by_state"),
        ).write.parquet(str(lake / "out"))
    run_job(job)
    record = records(log_root)["out"]
    assert sources(record, "sum_of") == direct(("people", "age", "TRANSFORMATION"), ("people", "id", "TRANSFORMATION"))
    assert operation(record, "sum_of") == ("add", "(age + id)")
    assert sources(record, "full") == direct(("people", "first", "TRANSFORMATION"),
                                             ("people", "last", "TRANSFORMATION"))
    assert operation(record, "full") == ("concat", "concat(first, ' ', last)")
    assert sources(record, "chosen") == direct(("people", "first", "TRANSFORMATION"),
                                               ("people", "last", "TRANSFORMATION")) | {
        ("people", "state", "INDIRECT", "CONDITIONAL")}
    assert sources(record, "bracket") == {("people", "age", "INDIRECT", "CONDITIONAL")}
    # coalesce tests its first argument for null: first is a value and a condition (issue 31 item 2)
    assert sources(record, "any_name") == direct(("people", "first", "TRANSFORMATION"),
                                                 ("people", "last", "TRANSFORMATION")) | {
        ("people", "first", "INDIRECT", "CONDITIONAL")}
    assert operation(record, "any_name")[0] == "coalesce"
    # age is both the value and the condition: each (source, kind) pair is kept (issue 31 item 1)
    assert sources(record, "positive_age") == {("people", "age", "DIRECT", "TRANSFORMATION"),
                                               ("people", "age", "INDIRECT", "CONDITIONAL")}
    # nvl and ifnull are a coalesce; nullif passes its first argument, compared with the second;
    # nvl2 tests its first and passes the other two (issue 31 item 2)
    assert sources(record, "nvl_name") == direct(("people", "first", "TRANSFORMATION"),
                                                 ("people", "state", "TRANSFORMATION")) | {
        ("people", "first", "INDIRECT", "CONDITIONAL")}
    assert sources(record, "unless_same") == direct(("people", "first", "TRANSFORMATION")) | {
        ("people", "first", "INDIRECT", "CONDITIONAL"), ("people", "last", "INDIRECT", "CONDITIONAL")}
    assert sources(record, "by_state") == direct(("people", "first", "TRANSFORMATION"),
                                                 ("people", "last", "TRANSFORMATION")) | {
        ("people", "state", "INDIRECT", "CONDITIONAL")}


def test_union_is_positional_and_a_subquery_and_cte_are_followed(spark: SparkSession, lake: Path, log_root: Path,
                                                                 run_job: Any) -> None:
    def job() -> None:
        spark.read.parquet(str(lake / "people")).createOrReplaceTempView("case_people")
        spark.read.parquet(str(lake / "orders")).createOrReplaceTempView("case_orders")
        spark.sql("select first as name, age as n from case_people "
                  "union all select tags, person from case_orders").write.parquet(str(lake / "unioned"))
        spark.sql("with adults as (select id, first from case_people where age > 18) "
                  "select a.first, (select max(amount) from case_orders o where o.person = a.id) as biggest "
                  "from adults a").write.parquet(str(lake / "ctes"))
    run_job(job)
    unioned = records(log_root)["unioned"]
    assert sources(unioned, "name") == direct(("people", "first", "IDENTITY"), ("orders", "tags", "IDENTITY"))
    assert sources(unioned, "n") == direct(("people", "age", "IDENTITY"), ("orders", "person", "IDENTITY"))
    ctes = records(log_root)["ctes"]
    assert direct(("people", "first", "IDENTITY")) <= sources(ctes, "first")
    assert ("people", "age", "INDIRECT", "FILTER") in sources(ctes, "first")
    assert ("orders", "amount", "DIRECT", "AGGREGATION") in sources(ctes, "biggest")
    # the subquery's dataset is read too
    assert ("orders", "read") in accesses(log_root) and ("people", "read") in accesses(log_root)


def test_explode_and_nested_struct_fields(spark: SparkSession, lake: Path, log_root: Path, run_job: Any) -> None:
    def job() -> None:
        orders = spark.read.parquet(str(lake / "orders"))
        orders.select("id", F.explode(F.split("tags", ",")).alias("tag")).write.parquet(str(lake / "tags"))
        people = spark.read.parquet(str(lake / "people"))
        people.select("id", F.col("address.city").alias("city")).write.parquet(str(lake / "cities"))
    run_job(job)
    tags = records(log_root)["tags"]
    assert sources(tags, "tag") == direct(("orders", "tags", "TRANSFORMATION"))
    assert sources(tags, "id") == direct(("orders", "id", "IDENTITY"))
    cities = records(log_root)["cities"]
    assert sources(cities, "city") == direct(("people", "address.city", "IDENTITY"))


def test_a_long_with_column_chain_keeps_every_step(spark: SparkSession, lake: Path, log_root: Path,
                                                   run_job: Any) -> None:
    def job() -> None:
        frame = spark.read.parquet(str(lake / "people"))
        for step in range(40):
            frame = frame.withColumn(f"c{step}", F.col(f"c{step - 1}") + 1 if step else F.col("age") * 2)
        frame = frame.withColumn("label", F.upper(F.concat_ws("-", "first", "c39")))
        frame.select("id", "c39", "label").write.parquet(str(lake / "chain"))
    run_job(job)
    chain = records(log_root)["chain"]
    assert sources(chain, "c39") == direct(("people", "age", "TRANSFORMATION"))
    assert sources(chain, "label") == direct(("people", "first", "TRANSFORMATION"), ("people", "age", "TRANSFORMATION"))
    assert operation(chain, "label")[0] == "upper"


def test_self_joins_and_the_same_column_name_in_two_inputs(spark: SparkSession, lake: Path, log_root: Path,
                                                           run_job: Any) -> None:
    def job() -> None:
        people = spark.read.parquet(str(lake / "people"))
        orders = spark.read.parquet(str(lake / "orders"))
        manager = people.alias("m")
        (people.alias("p").join(manager, F.col("p.age") < F.col("m.age"))
         .select(F.col("p.first").alias("junior"), F.col("m.first").alias("senior"),
                 F.col("m.last").alias("senior_last"))
         .write.parquet(str(lake / "pairs")))
        (orders.join(people, orders.person == people.id)
         .select(orders.id.alias("order_id"), people.id.alias("person_id")).write.parquet(str(lake / "ids")))
    run_job(job)
    pairs = records(log_root)["pairs"]
    assert sources(pairs, "junior") == direct(("people", "first", "IDENTITY")) | {
        ("people", "age", "INDIRECT", "JOIN")}
    assert sources(pairs, "senior") == sources(pairs, "junior")
    # both sides of the self-join are one dataset, read once, with both aliases' columns (issue 31 item 4)
    [read] = [op for op in pairs["operations"] if op["type"] == "read"]
    assert {"first", "last", "age"} <= set(read["outputs"])
    assert sources(pairs, "senior_last") == direct(("people", "last", "IDENTITY")) | {
        ("people", "age", "INDIRECT", "JOIN")}
    ids = records(log_root)["ids"]
    assert ("orders", "id", "DIRECT", "IDENTITY") in sources(ids, "order_id")
    assert ("people", "id", "DIRECT", "IDENTITY") not in sources(ids, "order_id")
    assert ("people", "id", "DIRECT", "IDENTITY") in sources(ids, "person_id")
    assert ("orders", "person", "INDIRECT", "JOIN") in sources(ids, "person_id")


def test_sql_insert_insert_overwrite_and_several_outputs(spark: SparkSession, lake: Path, log_root: Path,
                                                         run_job: Any) -> None:
    spark.sql(f"create table case_target (id int, label string) using parquet location '{lake}/target'")
    try:
        def job() -> None:
            spark.read.parquet(str(lake / "people")).createOrReplaceTempView("case_people")
            # reading the command's result back (Spark reports it with the command's plan) is no second write
            spark.sql("insert into case_target select id, upper(first) from case_people").collect()
            spark.sql("insert overwrite table case_target select id, lower(last) from case_people where age > 35")
            people = spark.read.parquet(str(lake / "people"))
            people.select("id", "state").write.mode("overwrite").json(str(lake / "states"))
            people.select("id", "last").write.mode("overwrite").csv(str(lake / "lasts"))
            people.select("id", "age").write.mode("overwrite").orc(str(lake / "ages"))
        tracker = run_job(job)
        assert tracker.writes == 5
        found = records(log_root)
        assert set(found) == {"case_target", "states", "lasts", "ages"}
        # the last write to a destination is the one kept under its name here; both are in the log
        target_records = [e["payload"] for e in captured(log_root)
                          if e["kind"] == "field_operations" and e["payload"]["destination"]["name"].endswith(
                              "case_target")]
        assert len(target_records) == 2
        labels = [sources(record, "label") for record in target_records]
        assert direct(("people", "first", "TRANSFORMATION")) in labels
        assert direct(("people", "last", "TRANSFORMATION")) | {("people", "age", "INDIRECT", "FILTER")} in labels
        assert sources(found["ages"], "age") == direct(("people", "age", "IDENTITY"))
        assert {("case_target", "write"), ("states", "write"), ("lasts", "write"), ("ages", "write"),
                ("people", "read")} == accesses(log_root)
    finally:
        spark.sql("drop table if exists case_target")


def test_a_hive_style_multi_insert_records_one_write_per_target(spark: SparkSession, lake: Path, log_root: Path,
                                                              run_job: Any) -> None:
    """FROM src INSERT INTO a SELECT ... INSERT INTO b SELECT ...: Spark runs one action whose plan
    is a union of insert commands; each target is a write with its own column lineage (issue 31
    item 4; before, only the read was recorded)."""
    spark.sql(f"create table case_ids (id int) using parquet location '{lake}/case_ids'")
    spark.sql(f"create table case_names (name string) using parquet location '{lake}/case_names'")
    try:
        def job() -> None:
            spark.read.parquet(str(lake / "people")).createOrReplaceTempView("case_multi_people")
            spark.sql("from case_multi_people insert into case_ids select id "
                      "insert into case_names select upper(first) where age > 35")
        tracker = run_job(job)
        assert tracker.writes == 2
        found = records(log_root)
        assert sources(found["case_ids"], "id") == direct(("people", "id", "IDENTITY"))
        assert sources(found["case_names"], "name") == direct(("people", "first", "TRANSFORMATION")) | {
            ("people", "age", "INDIRECT", "FILTER")}
        assert {("case_ids", "write"), ("case_names", "write"), ("people", "read")} == accesses(log_root)
    finally:
        spark.sql("drop table if exists case_ids")
        spark.sql("drop table if exists case_names")


class CaseSink(DataSource):
    """A data source V2 written in Python (Spark 4): writes to it are V2 AppendData /
    OverwriteByExpression plans, as Delta's or Iceberg's are."""

    @classmethod
    def name(cls) -> str:
        return "lineage_case_sink"

    def schema(self) -> str:
        return "id int, state string"

    def writer(self, schema: Any, overwrite: bool) -> DataSourceWriter:
        return CaseSinkWriter()


class CaseSinkWriter(DataSourceWriter):
    def write(self, iterator: Iterator[Any]) -> WriterCommitMessage:
        for _ in iterator:
            pass
        return WriterCommitMessage()


def test_table_writes_save_as_table_insert_into_write_to_and_v2_sources(spark: SparkSession, lake: Path,
                                                                        log_root: Path, run_job: Any) -> None:
    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # Spark's Python workers cannot import tests
    spark.dataSource.register(CaseSink)
    try:
        def job() -> None:
            people = spark.read.parquet(str(lake / "people"))
            people.select("id", "first").write.mode("overwrite").saveAsTable("case_saved")
            people.select("id", F.upper("last").alias("first")).write.insertInto("case_saved")
            people.select("id", "state").writeTo("case_v2").using("parquet").create()
            spark.table("case_saved").select("id", "first").write.mode("overwrite").parquet(str(lake / "from_table"))
            people.select("id", F.initcap("state").alias("state")).write.format("lineage_case_sink").mode(
                "append").save()
            people.select("id", "state").write.format("lineage_case_sink").mode("overwrite").save()
        tracker = run_job(job)
        assert tracker.writes == 6
        by_destination: dict[str, list[dict[str, Any]]] = {}
        for event in captured(log_root):
            if event["kind"] == "field_operations":
                by_destination.setdefault(short(event["payload"]["destination"]["name"]), []).append(event["payload"])
        assert {name: len(found) for name, found in by_destination.items()} == {
            "case_saved": 2, "case_v2": 1, "from_table": 1, "lineage_case_sink": 2}
        saved = by_destination["case_saved"]
        assert sources(saved[0], "first") == direct(("people", "first", "IDENTITY"))
        assert sources(saved[1], "first") == direct(("people", "last", "TRANSFORMATION"))
        assert sources(by_destination["case_v2"][0], "state") == direct(("people", "state", "IDENTITY"))
        # a table read back is named as the table, not as its files
        assert sources(by_destination["from_table"][0], "first") == direct(("case_saved", "first", "IDENTITY"))
        sink = by_destination["lineage_case_sink"]
        assert sources(sink[0], "state") == direct(("people", "state", "TRANSFORMATION"))
        assert operation(sink[0], "state") == ("initcap", "initcap(state)")
        assert sources(sink[1], "state") == direct(("people", "state", "IDENTITY"))
        assert {("case_saved", "read"), ("case_saved", "write"), ("case_v2", "write"),
                ("lineage_case_sink", "write")} <= accesses(log_root)
    finally:
        spark.sql("drop table if exists case_saved")
        spark.sql("drop table if exists case_v2")


def test_temp_views_cached_frames_and_local_data_are_followed(spark: SparkSession, lake: Path, log_root: Path,
                                                              run_job: Any) -> None:
    def job() -> None:
        people = spark.read.parquet(str(lake / "people")).filter("age > 18").cache()
        people.count()
        people.select("id", "first").write.parquet(str(lake / "from_cache"))
        people.createOrReplaceTempView("case_adults")
        spark.sql("select id, last from case_adults").write.parquet(str(lake / "from_view"))
        codes = spark.createDataFrame([("CA", "California"), ("NY", "New York")], "code string, label string")
        (people.join(codes, people.state == codes.code).select("id", F.col("label").alias("state_name"))
         .write.parquet(str(lake / "with_local")))
        people.unpersist()
    run_job(job)
    found = records(log_root)
    assert sources(found["from_cache"], "first") == direct(("people", "first", "IDENTITY")) | {
        ("people", "age", "INDIRECT", "FILTER")}
    assert sources(found["from_view"], "last") == direct(("people", "last", "IDENTITY")) | {
        ("people", "age", "INDIRECT", "FILTER")}
    local = sources(found["with_local"], "state_name")
    memory = {source for source in local if source[1] == "label"}
    assert len(memory) == 1 and next(iter(memory))[2:] == ("DIRECT", "IDENTITY")
    destination = found["with_local"]
    read_names = [op["inputs"][0]["source"]["name"] for op in destination["operations"] if op["type"] == "read"]
    assert any(name.startswith("memory/") or "localRelation" in name for name in read_names), read_names


def test_distinct_and_drop_duplicates_are_a_group_by(spark: SparkSession, lake: Path, log_root: Path,
                                                     run_job: Any) -> None:
    """SELECT DISTINCT groups by every column it keeps (INDIRECT GROUP_BY over all of them, as a
    GROUP BY on all of them would); dropDuplicates(keys) by its keys only. Before, both were
    passed through and recorded no grouping."""
    def job() -> None:
        orders = spark.read.parquet(str(lake / "orders"))
        orders.select("person", "tags").distinct().write.parquet(str(lake / "distinct_pairs"))
        orders.createOrReplaceTempView("orders_v")
        spark.sql("select distinct person from orders_v").write.parquet(str(lake / "distinct_sql"))
        orders.dropDuplicates(["person"]).select("person", "amount").write.parquet(str(lake / "deduplicated"))
    run_job(job)
    found = records(log_root)
    pairs = found["distinct_pairs"]
    for column, other in (("person", "tags"), ("tags", "person")):
        assert sources(pairs, column) >= {("orders", column, "DIRECT", "IDENTITY"),
                                          ("orders", other, "INDIRECT", "GROUP_BY")}
    assert sources(found["distinct_sql"], "person") == {("orders", "person", "DIRECT", "IDENTITY"),
                                                        ("orders", "person", "INDIRECT", "GROUP_BY")}  # itself
    assert ("orders", "person", "INDIRECT", "GROUP_BY") in sources(found["deduplicated"], "amount")
    assert ("orders", "amount", "INDIRECT", "GROUP_BY") not in sources(found["deduplicated"], "person")


def test_a_ranking_function_s_order_column_is_a_window_input_not_a_value(spark: SparkSession, lake: Path,
                                                                         log_root: Path, run_job: Any) -> None:
    """rank() over (partition by person order by amount): Spark gives rank its window's order
    columns as children; the rank holds none of their values, so amount is INDIRECT WINDOW, not
    DIRECT (as the OpenLineage specification has it)."""
    from pyspark.sql.window import Window

    def job() -> None:
        orders = spark.read.parquet(str(lake / "orders"))
        by_amount = Window.partitionBy("person").orderBy("amount")
        (orders.select("id", F.rank().over(by_amount).alias("rnk"), F.dense_rank().over(by_amount).alias("dense"),
                       F.percent_rank().over(by_amount).alias("pct"))
         .write.parquet(str(lake / "ranked")))
    run_job(job)
    ranked = records(log_root)["ranked"]
    for column in ("rnk", "dense", "pct"):
        found = sources(ranked, column)
        assert not {source for source in found if source[2] == "DIRECT"}, (column, found)
        assert {("orders", "amount", "INDIRECT", "WINDOW"), ("orders", "person", "INDIRECT", "WINDOW")} <= found


def test_a_window_s_keys_are_inputs_of_its_own_column_and_a_filter_on_it_of_every_column(
        spark: SparkSession, lake: Path, log_root: Path, run_job: Any) -> None:
    """The partition and order keys are INDIRECT WINDOW inputs of the window's output only; a
    filter on that output (``rn = 1``) makes its inputs INDIRECT FILTER of every written column
    (issue 31 item 3)."""
    from pyspark.sql.window import Window

    def job() -> None:
        orders = spark.read.parquet(str(lake / "orders"))
        by_person = Window.partitionBy("person").orderBy("amount")
        (orders.select("id", "tags", F.row_number().over(by_person).alias("rn"),
                       F.sum("amount").over(Window.partitionBy("person")).alias("person_total"))
         .write.parquet(str(lake / "windowed")))
        (orders.withColumn("rn", F.row_number().over(by_person)).where("rn = 1").select("id", "tags")
         .write.parquet(str(lake / "firsts")))
    run_job(job)
    windowed = records(log_root)["windowed"]
    assert sources(windowed, "id") == direct(("orders", "id", "IDENTITY"))  # no window input
    assert sources(windowed, "rn") == {("orders", "person", "INDIRECT", "WINDOW"),
                                       ("orders", "amount", "INDIRECT", "WINDOW")}
    assert sources(windowed, "person_total") == {("orders", "amount", "DIRECT", "AGGREGATION"),
                                                 ("orders", "person", "INDIRECT", "WINDOW")}
    firsts = records(log_root)["firsts"]
    for column in ("id", "tags"):
        assert {("orders", "person", "INDIRECT", "FILTER"), ("orders", "amount", "INDIRECT", "FILTER")} <= sources(
            firsts, column), column


def test_a_null_test_is_a_condition_not_masking(spark: SparkSession, lake: Path, log_root: Path,
                                                run_job: Any) -> None:
    """``tags IS NOT NULL`` in a filter and ``tags IS NULL`` in a CASE test tags without hiding it:
    INDIRECT FILTER and CONDITIONAL, not masked; a hash of it still is."""
    def job() -> None:
        orders = spark.read.parquet(str(lake / "orders"))
        (orders.where(F.col("tags").isNotNull())
         .select("id", F.when(F.col("tags").isNull(), 0).otherwise(1).alias("tagged"),
                 F.sha2("tags", 256).alias("tags_hash"))
         .write.parquet(str(lake / "null_tests")))
    run_job(job)
    record = records(log_root)["null_tests"]
    kinds = {(item["field"], item["transformation"]["type"], item["transformation"].get("subtype"),
              item["transformation"].get("masking", False))
             for op in record["operations"] for item in op["inputs"]
             if "field" in item and item.get("transformation") and item["field"] == "tags"}
    assert ("tags", "INDIRECT", "FILTER", False) in kinds
    assert ("tags", "INDIRECT", "CONDITIONAL", False) in kinds
    assert ("tags", "DIRECT", "TRANSFORMATION", True) in kinds  # sha2
    assert not {kind for kind in kinds if kind[2] in ("FILTER", "CONDITIONAL") and kind[3]}


def test_a_column_passed_through_a_sql_view_unchanged_is_identity(spark: SparkSession, lake: Path, log_root: Path,
                                                                   run_job: Any) -> None:
    """A view defined in SQL reads back through a cast to its stored column types, here the
    same types: the column is passed as is (IDENTITY), not transformed; a real cast still is."""
    def job() -> None:
        spark.read.parquet(str(lake / "orders")).createOrReplaceTempView("orders_raw")
        spark.sql("create or replace temp view orders_sql_v as select id, person, cast(amount as int) as whole "
                  "from orders_raw")
        spark.sql("select id, person, whole from orders_sql_v").write.parquet(str(lake / "through_view"))
    run_job(job)
    through = records(log_root)["through_view"]
    assert sources(through, "person") == direct(("orders", "person", "IDENTITY"))
    assert sources(through, "id") == direct(("orders", "id", "IDENTITY"))
    assert sources(through, "whole") == direct(("orders", "amount", "TRANSFORMATION"))


def test_rollup_grouping_sets_keep_each_column_s_sources(spark: SparkSession, lake: Path, log_root: Path,
                                                         run_job: Any) -> None:
    def job() -> None:
        orders = spark.read.parquet(str(lake / "orders"))
        (orders.rollup("person").agg(F.sum("amount").alias("total"), F.countDistinct("tags").alias("kinds"))
         .write.parquet(str(lake / "rolled")))
    run_job(job)
    rolled = records(log_root)["rolled"]
    # the grouping key written as is, and grouped on: both (source, kind) pairs are kept (issue 31 item 1)
    assert sources(rolled, "person") == direct(("orders", "person", "IDENTITY")) | {
        ("orders", "person", "INDIRECT", "GROUP_BY")}
    assert ("orders", "amount", "DIRECT", "AGGREGATION") in sources(rolled, "total")
    assert ("orders", "person", "INDIRECT", "GROUP_BY") in sources(rolled, "total")
    kinds = {source for source in sources(rolled, "kinds") if source[2] == "DIRECT"}
    assert kinds == direct(("orders", "tags", "AGGREGATION"))



def test_jdbc_reads_and_writes_are_named_by_the_table_not_the_url_s_secrets(spark: SparkSession, lake: Path,
                                                                           log_root: Path, run_job: Any) -> None:
    """A JDBC table read and written (Derby, which PySpark bundles, in memory): each is named
    by the OpenLineage spec's place and table, without the URL's properties or password, and
    the written column's sources cross from one table to the other."""
    url = "jdbc:derby:memory:lineage_cases;create=true;user=etl;password=s3cret"
    spark.sparkContext._jvm.System.setProperty("derby.stream.error.file", str(lake / "derby.log"))  # not the cwd
    spark.read.parquet(str(lake / "people")).select("id", "first", "age").write.jdbc(url, "PEOPLE", mode="overwrite")

    def job() -> None:
        people = spark.read.jdbc(url, "PEOPLE")
        people.select("id", F.upper("first").alias("shouted"), "age").filter(F.col("age") > 35).drop("age") \
            .write.jdbc(url, "SHOUTED", mode="overwrite")
    tracker = run_job(job)
    assert tracker.writes == 1
    events = captured(log_root)
    named = {e["payload"]["dataset"]["name"] for e in events if e["kind"] == "dataset_access"}
    assert named == {"derby:memory:lineage_cases/PEOPLE", "derby:memory:lineage_cases/SHOUTED"}
    assert not [line for line in (json.dumps(e) for e in events) if "s3cret" in line or "create=true" in line]
    record = records(log_root)["SHOUTED"]
    filtered = {("PEOPLE", "age", "INDIRECT", "FILTER")}
    assert sources(record, "shouted") == direct(("PEOPLE", "first", "TRANSFORMATION")) | filtered
    assert sources(record, "id") == direct(("PEOPLE", "id", "IDENTITY")) | filtered


def test_partition_folders_globs_and_lists_of_paths_name_their_datasets(spark: SparkSession, lake: Path,
                                                                        log_root: Path) -> None:
    """One day's folder, a glob over days and a written partition folder each name the dataset
    above them (the OpenLineage Spark integration's trimming), so daily runs meet on one dataset;
    one read of two datasets' folders records both reads, and each column it gives comes from
    both (issue 31 item 4; before, from the first, with a note)."""
    people = spark.read.parquet(str(lake / "people"))
    people.withColumn("dt", F.lit("2026-11-24")).write.partitionBy("dt").parquet(str(lake / "events"))
    people.write.parquet(str(lake / "people_archive"))
    with track(spark, namespace="default", application="cases", program="case", log_root=str(log_root)) as tracker:
        spark.read.parquet(str(lake / "events" / "dt=2026-11-24")).select("id", "first") \
            .write.mode("overwrite").parquet(str(lake / "daily" / "dt=2026-11-24"))
        spark.read.parquet(str(lake / "events" / "dt=2026-11-*")).select("id", "last") \
            .write.mode("overwrite").parquet(str(lake / "daily_last" / "2026" / "11" / "24"))
        spark.read.parquet(str(lake / "people"), str(lake / "people_archive")).select("id") \
            .write.mode("overwrite").parquet(str(lake / "ids"))
    assert tracker.writes == 3
    found = {(e["payload"]["dataset"]["name"].rsplit("/", 1)[-1], e["payload"]["access"])
             for e in captured(log_root) if e["kind"] == "dataset_access"}
    assert found == {("events", "read"), ("daily", "write"), ("daily_last", "write"), ("people", "read"),
                     ("people_archive", "read"), ("ids", "write")}
    assert sources(records(log_root)["daily"], "first") == direct(("events", "first", "IDENTITY"))
    assert sources(records(log_root)["daily_last"], "last") == direct(("events", "last", "IDENTITY"))
    assert sources(records(log_root)["ids"], "id") == direct(("people", "id", "IDENTITY"),
                                                             ("people_archive", "id", "IDENTITY"))
    assert tracker.warnings == []


def test_exists_reads_only_its_condition_and_a_position_masks_its_array(spark: SparkSession, lake: Path,
                                                                       log_root: Path, run_job: Any) -> None:
    """EXISTS (SELECT * ...) tests for rows: the subquery's columns are no inputs, its correlated
    condition is (before, every column it selected was a FILTER input of every written column).
    posexplode's position shows none of the array's values: masked (before, a plain transformation)."""
    def job() -> None:
        people, orders = spark.table("case_people_e").alias("p"), spark.table("case_orders_e").alias("o")
        (people.where(orders.where(F.col("o.person") == F.col("p.id").outer()).exists()).select("id")
         .write.parquet(str(lake / "with_orders")))
        orders.select("id", F.posexplode(F.split("tags", ",")).alias("pos", "tag")).write.parquet(str(lake / "tags"))
    spark.read.parquet(str(lake / "people")).createOrReplaceTempView("case_people_e")
    spark.read.parquet(str(lake / "orders")).createOrReplaceTempView("case_orders_e")
    run_job(job)
    found = records(log_root)
    assert sources(found["with_orders"], "id") == {("people", "id", "DIRECT", "IDENTITY"),
                                                   ("people", "id", "INDIRECT", "FILTER"),
                                                   ("orders", "person", "INDIRECT", "FILTER")}
    position = column_lineage(found["tags"])["pos"]
    assert {(s.field, s.type, s.subtype, s.masking) for s in position} == {("tags", "DIRECT", "TRANSFORMATION", True)}
    assert {s.masking for s in column_lineage(found["tags"])["tag"]} == {False}


def test_a_window_ordered_by_a_grouped_sum_reads_the_sum_and_leaves_the_key_a_grouping(
        spark: SparkSession, lake: Path, log_root: Path, run_job: Any) -> None:
    """rank() over (order by sum(amount)) of a GROUP BY person: amount is the window's input,
    person stays the grouping key (before, the record made person a WINDOW input of the rank too)."""
    spark.read.parquet(str(lake / "orders")).createOrReplaceTempView("case_orders_w")

    def job() -> None:
        spark.sql("select person, rank() over (order by sum(amount) desc) as place from case_orders_w "
                  "group by person").write.parquet(str(lake / "placed"))
    run_job(job)
    assert sources(records(log_root)["placed"], "place") == {("orders", "amount", "INDIRECT", "WINDOW"),
                                                             ("orders", "person", "INDIRECT", "GROUP_BY")}


def test_a_field_of_a_struct_built_in_the_query_reads_only_that_field_s_value(
        spark: SparkSession, lake: Path, log_root: Path, run_job: Any) -> None:
    """named_struct('given', first, 'years', age + 1) AS s, then s.given: given is first as is
    (IDENTITY), years reads age; inline over an array of built structs gives each output its
    field's values (before, every field read every input of the struct, as a TRANSFORMATION)."""
    spark.read.parquet(str(lake / "people")).createOrReplaceTempView("case_people_s")

    def job() -> None:
        spark.sql("select s.given, s.years from (select named_struct('given', first, 'years', age + 1) as s "
                  "from case_people_s)").write.parquet(str(lake / "built"))
        spark.sql("select inline(array(named_struct('name', first, 'part', 'first'), "
                  "named_struct('name', last, 'part', 'last'))) from case_people_s").write.parquet(str(lake / "rows"))
    run_job(job)
    found = records(log_root)
    assert sources(found["built"], "given") == direct(("people", "first", "IDENTITY"))
    assert sources(found["built"], "years") == direct(("people", "age", "TRANSFORMATION"))
    assert sources(found["rows"], "name") == direct(("people", "first", "IDENTITY"), ("people", "last", "IDENTITY"))
    assert sources(found["rows"], "part") == set()  # literals in both structs


def test_a_correlated_scalar_subquery_s_conditions_are_inputs_of_its_column_only(
        spark: SparkSession, lake: Path, log_root: Path, run_job: Any) -> None:
    """(select sum(amount) from orders o where o.person = p.id) AS spent: the correlation picks the
    summed rows of spent (people.id and orders.person FILTER inputs of spent), and chooses no row
    of the query (before, people.id reached spent as a value and orders.person filtered id too)."""
    spark.read.parquet(str(lake / "people")).createOrReplaceTempView("case_people_q")
    spark.read.parquet(str(lake / "orders")).createOrReplaceTempView("case_orders_q")

    def job() -> None:
        spark.sql("select p.id, (select sum(o.amount) from case_orders_q o where o.person = p.id) as spent "
                  "from case_people_q p").write.parquet(str(lake / "spent"))
    run_job(job)
    spent = records(log_root)["spent"]
    assert sources(spent, "id") == direct(("people", "id", "IDENTITY"))
    assert sources(spent, "spent") == {("orders", "amount", "DIRECT", "AGGREGATION"),
                                       ("orders", "person", "INDIRECT", "FILTER"),
                                       ("people", "id", "INDIRECT", "FILTER")}


def test_struct_fields_subqueries_and_ctes_across_the_shapes_they_meet(spark: SparkSession, lake: Path,
                                                                      log_root: Path, run_job: Any) -> None:
    """Where the rules above meet: a built struct's field after a UNION reads every branch's
    value; inline over structs repeating a name keeps each position; a subquery over a CTE scopes
    the CTE's filter to the subquery's column, as the same query written inline does; a subquery
    inside a built struct is one operation; a CASE inside a window's order key is a WINDOW input."""
    from pyspark.sql.window import Window

    spark.read.parquet(str(lake / "people")).createOrReplaceTempView("case_people_m")
    spark.read.parquet(str(lake / "orders")).createOrReplaceTempView("case_orders_m")

    def job() -> None:
        spark.sql("select s.g from (select named_struct('g', first) s from case_people_m union all "
                  "select named_struct('g', last) s from case_people_m)").write.parquet(str(lake / "unioned"))
        spark.sql("select inline(array(named_struct('a', first, 'a', last))) from case_people_m"
                  ).toDF("a1", "a2").write.parquet(str(lake / "repeated"))
        spark.sql("with big as (select * from case_orders_m where amount > 5) "
                  "select id, (select max(amount) from big) as m from case_people_m").write.parquet(str(lake / "cte"))
        spark.sql("select named_struct('a', (select max(amount) from case_orders_m), 'b', first) s "
                  "from case_people_m").write.parquet(str(lake / "struct_sub"))
        people = spark.table("case_people_m")
        by_case = Window.orderBy(F.when(F.col("age") > 3, F.col("first")))
        people.select("id", F.rank().over(by_case).alias("r")).write.parquet(str(lake / "case_key"))
    run_job(job)
    found = records(log_root)
    assert sources(found["unioned"], "g") == direct(("people", "first", "IDENTITY"), ("people", "last", "IDENTITY"))
    assert sources(found["repeated"], "a1") == direct(("people", "first", "IDENTITY"))
    assert sources(found["repeated"], "a2") == direct(("people", "last", "IDENTITY"))
    assert sources(found["cte"], "id") == direct(("people", "id", "IDENTITY"))
    assert sources(found["cte"], "m") == {("orders", "amount", "DIRECT", "AGGREGATION"),
                                          ("orders", "amount", "INDIRECT", "FILTER")}
    names = [op["name"] for op in found["struct_sub"]["operations"] if op["type"] == "transform"]
    assert names.count("max") == 1, names
    assert sources(found["case_key"], "r") == {("people", "age", "INDIRECT", "WINDOW"),
                                               ("people", "first", "INDIRECT", "WINDOW")}


def test_a_lateral_join_is_captured_read_generically(spark: SparkSession, lake: Path, log_root: Path) -> None:
    """LATERAL (SELECT ... WHERE o.person = p.id): a plan node the analysis reads generically, with
    its note, and a captured write naming both datasets (before, naming the lateral subquery's
    leaves failed and the write was not captured at all)."""
    spark.read.parquet(str(lake / "people")).createOrReplaceTempView("case_people_l")
    spark.read.parquet(str(lake / "orders")).createOrReplaceTempView("case_orders_l")
    with track(spark, namespace="default", application="cases", program="lateral", log_root=str(log_root)) as tracker:
        spark.sql("select p.id, x.m from case_people_l p, lateral (select max(amount) m from case_orders_l o "
                  "where o.person = p.id) x").write.parquet(str(lake / "lateral"))
    assert len(tracker.warnings) == 1 and "read generically" in tracker.warnings[0] \
        and "LateralJoin" in tracker.warnings[0], tracker.warnings
    assert tracker.writes == 1
    found = records(log_root)["lateral"]
    assert ("people", "id", "DIRECT", "IDENTITY") in sources(found, "id")
    assert {("orders", "read"), ("people", "read"), ("lateral", "write")} <= accesses(log_root)

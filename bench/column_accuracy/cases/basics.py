"""Projections, conditionals and filters over one table, in SQL and DataFrame forms."""

from __future__ import annotations

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from bench.column_accuracy.case import Case, Outputs


def _rename_and_literal(spark: SparkSession, out: Outputs) -> None:
    spark.sql("select id, first as given, 'v1' as version from people").write.parquet(out("out"))


def _arithmetic_and_cast(spark: SparkSession, out: Outputs) -> None:
    (spark.table("orders")
     .select((F.col("amount") * F.col("quantity")).alias("total"), F.col("id").cast("string").alias("ref"))
     .write.parquet(out("out")))


def _case_when_value_and_condition(spark: SparkSession, out: Outputs) -> None:
    spark.sql("select id, case when age > 18 then age else 0 end as adult_age from people").write.parquet(out("out"))


def _coalesce(spark: SparkSession, out: Outputs) -> None:
    spark.sql("select coalesce(email, first) as contact from people").write.parquet(out("out"))


def _filter_is_every_columns_input(spark: SparkSession, out: Outputs) -> None:
    spark.table("people").filter("state = 'CA'").select("id", "last").write.parquet(out("out"))


def _null_test_filter_is_not_masking(spark: SparkSession, out: Outputs) -> None:
    spark.sql("select id from people where email is not null").write.parquet(out("out"))


def _hash_masks(spark: SparkSession, out: Outputs) -> None:
    (spark.table("people").select("id", F.sha2("ssn", 256).alias("ssn_hash"), F.length("email").alias("email_len"))
     .write.parquet(out("out")))


def _sort(spark: SparkSession, out: Outputs) -> None:
    spark.sql("select id, first from people order by age desc").write.parquet(out("out"))


def _upper_concat(spark: SparkSession, out: Outputs) -> None:
    spark.sql("select upper(concat(first, ' ', last)) as full_name from people").write.parquet(out("out"))


def _if_function(spark: SparkSession, out: Outputs) -> None:
    spark.sql("select if(quantity > 1, amount, 0.0) as bulk_amount from orders").write.parquet(out("out"))


CASES = [
    Case("rename_and_literal", "projection", "sql", _rename_and_literal,
         {"out": {"id": "people.id IDENTITY", "given": "people.first IDENTITY", "version": ""}}),
    Case("arithmetic_and_cast", "projection", "dataframe", _arithmetic_and_cast,
         {"out": {"total": "orders.amount TRANSFORMATION, orders.quantity TRANSFORMATION",
                  "ref": "orders.id TRANSFORMATION"}}),
    Case("case_when_value_and_condition", "conditional", "sql", _case_when_value_and_condition,
         {"out": {"id": "people.id IDENTITY",
                  "adult_age": "people.age TRANSFORMATION, people.age CONDITIONAL"}}),
    Case("coalesce_tests_all_but_its_last", "conditional", "sql", _coalesce,
         {"out": {"contact": "people.email TRANSFORMATION, people.first TRANSFORMATION, people.email CONDITIONAL"}}),
    Case("filter_is_every_columns_input", "filter", "dataframe", _filter_is_every_columns_input,
         {"out": {"id": "people.id IDENTITY, people.state FILTER",
                  "last": "people.last IDENTITY, people.state FILTER"}}),
    Case("null_test_filter_is_not_masking", "filter", "sql", _null_test_filter_is_not_masking,
         {"out": {"id": "people.id IDENTITY, people.email FILTER"}}),
    Case("hashes_and_lengths_mask", "projection", "dataframe", _hash_masks,
         {"out": {"id": "people.id IDENTITY", "ssn_hash": "people.ssn TRANSFORMATION masked",
                  "email_len": "people.email TRANSFORMATION masked"}}),
    Case("order_by_is_a_sort", "sort", "sql", _sort,
         {"out": {"id": "people.id IDENTITY, people.age SORT", "first": "people.first IDENTITY, people.age SORT"}}),
    Case("nested_functions_transform", "projection", "sql", _upper_concat,
         {"out": {"full_name": "people.first TRANSFORMATION, people.last TRANSFORMATION"}}),
    Case("if_value_and_condition", "conditional", "sql", _if_function,
         {"out": {"bulk_amount": "orders.amount TRANSFORMATION, orders.quantity CONDITIONAL"}}),
]

"""The *Metadata and Data Discovery* design's PurchaseHistory application, as PySpark programs in namespace ``default``.

purchaseStream -> PurchaseFlow (flow) -> purchases, frequentCustomers
purchases -> PurchaseHistoryBuilder (mapreduce) -> history, frequentCustomers
history -> PurchaseHistoryService (service)
"""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from lineage import FieldOperation, RunContext, Source

NAMESPACE = "default"
APPLICATION = "PurchaseHistory"
FREQUENT_PURCHASES = 3


def parse_purchases(lines: DataFrame) -> DataFrame:
    """``customer bought N product for $P`` -> customer, quantity, product, price."""
    pattern = r"^(\S+) bought (\d+) (\S+) for \$(\d+)$"
    return lines.select(
        F.regexp_extract("value", pattern, 1).alias("customer"),
        F.regexp_extract("value", pattern, 2).cast("int").alias("quantity"),
        F.regexp_extract("value", pattern, 3).alias("product"),
        F.regexp_extract("value", pattern, 4).cast("int").alias("price"),
    )


def frequent_customers(purchases: DataFrame) -> DataFrame:
    return (
        purchases.groupBy("customer").agg(F.count(F.lit(1)).alias("purchase_count"))
        .where(F.col("purchase_count") >= FREQUENT_PURCHASES)
        .select("customer", "purchase_count")
    )


def build_history(purchases: DataFrame) -> DataFrame:
    return purchases.groupBy("customer").agg(
        F.collect_list(F.struct("product", "quantity", "price")).alias("purchases"),
        F.sum(F.col("quantity") * F.col("price")).alias("total_spent"),
    ).select("customer", "purchases", "total_spent")


def schema_fields(frame: DataFrame) -> list[tuple[str, str, bool]]:
    """A DataFrame's top-level fields as (name, type, nullable), as the client reports schemas."""
    return [(field.name, field.dataType.simpleString(), field.nullable) for field in frame.schema.fields]


def run_flow(spark: SparkSession, stream_path: Path, data_root: Path) -> RunContext:
    """PurchaseFlow: reads the stream (reader), writes purchases and frequentCustomers (collector)."""
    with RunContext(NAMESPACE, APPLICATION, "flow", "PurchaseFlow") as run:
        lines = spark.read.text(str(stream_path))
        run.read("purchaseStream", dataset_type="stream", component="reader")
        purchases = parse_purchases(lines)
        purchases.write.mode("append").parquet(str(data_root / "purchases"))
        run.write("purchases", component="collector")
        run.record_schema("purchases", schema_fields(purchases))
        stored = spark.read.parquet(str(data_root / "purchases"))
        run.read("purchases", component="collector")
        frequent_customers(stored).write.mode("overwrite").parquet(str(data_root / "frequentCustomers"))
        run.write("frequentCustomers", component="collector")
    return run


def run_builder(spark: SparkSession, data_root: Path) -> RunContext:
    """PurchaseHistoryBuilder: reads purchases, writes history and frequentCustomers."""
    with RunContext(NAMESPACE, APPLICATION, "mapreduce", "PurchaseHistoryBuilder") as run:
        purchases = spark.read.parquet(str(data_root / "purchases"))
        run.read("purchases")
        history = build_history(purchases)
        history.write.mode("overwrite").parquet(str(data_root / "history"))
        run.write("history")
        run.record_schema("history", schema_fields(history))
        frequent_customers(purchases).write.mode("overwrite").parquet(str(data_root / "frequentCustomersByBuilder"))
        run.write("frequentCustomers")
        run.record_field_operations(
            "history",
            [
                FieldOperation("read", [Source("purchases")], ["customer", "product", "quantity", "price"],
                               "read purchases"),
                FieldOperation("collect", ["product", "quantity", "price"], ["purchases"],
                               "collect each customer's purchases"),
                FieldOperation("spend", ["quantity", "price"], ["total_spent"], "sum of quantity * price"),
                FieldOperation("write", ["customer", "purchases", "total_spent"],
                               ["customer", "purchases", "total_spent"], "write history", type="write"),
            ],
        )
    return run


def run_service(spark: SparkSession, data_root: Path) -> RunContext:
    """PurchaseHistoryService: serves history (access type not declared, as in the *Metadata and
    Data Discovery* design)."""
    with RunContext(NAMESPACE, APPLICATION, "service", "PurchaseHistoryService") as run:
        history = spark.read.parquet(str(data_root / "history"))
        run.record_access("history", "unknown")
        history.orderBy(F.desc("total_spent")).limit(3).collect()
    return run

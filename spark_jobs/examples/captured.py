"""The design documents' examples again, as plain PySpark under ``lineage.spark.track``: the same
Spark code as ``user_profiles`` and ``purchase_history``, with no access or field operation
written by hand. Their lineage comes from Spark's plans; datasets are named by what they
physically are (``file`` paths), in the same warehouse namespaces, under applications named
``Captured...`` so the hand-recorded ones stay beside them for comparison.
"""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from lineage import RunContext
from lineage.spark.capture import Tracker, track
from spark_jobs.examples import purchase_history, user_profiles

PREFIX = "Captured"


def run_user_profiles(spark: SparkSession, input_path: Path, output_path: Path) -> RunContext:
    """The *Field Level Lineage* design's pipeline: read the user data, parse body, concat names,
    create id, write. ``input_path`` is a file of the user data folder, which is read whole."""
    with track(spark, namespace=user_profiles.NAMESPACE, application=PREFIX + user_profiles.APPLICATION,
               program=user_profiles.PROGRAM, program_type="mapreduce") as tracker:
        # the folder of user data files is the dataset (a path is named as given, file or folder)
        bodies = spark.read.text(str(input_path.parent)).withColumnRenamed("value", "body")
        profiles = user_profiles.generate_ids(user_profiles.concatenate_names(user_profiles.parse_bodies(bodies)))
        profiles.write.mode("overwrite").parquet(str(output_path))
    return tracker.run


def _purchase_history(spark: SparkSession, program: str, program_type: str) -> Tracker:
    """A run of a PurchaseHistory program, captured under the Captured application."""
    return track(spark, namespace=purchase_history.NAMESPACE, application=PREFIX + purchase_history.APPLICATION,
                 program=program, program_type=program_type)


def run_flow(spark: SparkSession, stream_path: Path, data_root: Path) -> RunContext:
    """PurchaseFlow: the stream's folder (``stream_path``'s) -> purchases; purchases -> frequentCustomers."""
    with _purchase_history(spark, "PurchaseFlow", "flow") as tracker:
        purchases = purchase_history.parse_purchases(spark.read.text(str(stream_path.parent)))
        purchases.write.mode("append").parquet(str(data_root / "purchases"))
        stored = spark.read.parquet(str(data_root / "purchases"))
        purchase_history.frequent_customers(stored).write.mode("overwrite").parquet(
            str(data_root / "frequentCustomers"))
    return tracker.run


def run_builder(spark: SparkSession, data_root: Path) -> RunContext:
    """PurchaseHistoryBuilder: purchases -> history, frequentCustomers."""
    with _purchase_history(spark, "PurchaseHistoryBuilder", "mapreduce") as tracker:
        purchases = spark.read.parquet(str(data_root / "purchases"))
        purchase_history.build_history(purchases).write.mode("overwrite").parquet(str(data_root / "history"))
        purchase_history.frequent_customers(purchases).write.mode("overwrite").parquet(
            str(data_root / "frequentCustomers"))
    return tracker.run


def run_service(spark: SparkSession, data_root: Path) -> RunContext:
    """PurchaseHistoryService: reads history to serve it (a ``collect``, captured as a read)."""
    with _purchase_history(spark, "PurchaseHistoryService", "service") as tracker:
        spark.read.parquet(str(data_root / "history")).orderBy(F.desc("total_spent")).limit(3).collect()
    return tracker.run

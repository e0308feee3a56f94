"""The *Field Level Lineage* design's pipeline: File -> Parser -> Name-Concatenator -> IdGenerator -> Store.

Reads ``user_data`` (CSV bodies), writes ``mytableds`` in namespace ``myns``, and records the
field operations exactly as the *Field Level Lineage* design's sample program does (read, parse, concat, drop, drop,
create).
"""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from lineage import FieldOperation, RunContext, Source

NAMESPACE = "myns"
APPLICATION = "UserProfilePipeline"
PROGRAM = "ETLMapReduce"
SOURCE = "user_data"
DESTINATION = "mytableds"
DESTINATION_FIELDS = ("id", "name", "age", "city", "state")


def field_operations() -> list[FieldOperation]:
    """The operations of the *Field Level Lineage* design's sample code, in its order."""
    return [
        FieldOperation("read", [Source(SOURCE, NAMESPACE)], ["offset", "body"], "Reading the data from the file"),
        FieldOperation("parse", ["body"], ["first_name", "last_name", "age", "city", "state"],
                       "parsing the input body field"),
        FieldOperation("concat", ["first_name", "last_name"], ["name"], "concatenating the first name and last name"),
        FieldOperation("drop", ["first_name"], [], "deleting the first name field", id="drop_first_name"),
        FieldOperation("drop", ["last_name"], [], "deleting the last name field", id="drop_last_name"),
        FieldOperation("create", ["name"], ["id"], "creating unique id from the name field"),
    ]


def parse_bodies(bodies: DataFrame) -> DataFrame:
    """Parser: body -> first_name, last_name, age, city, state."""
    parts = F.split(F.col("body"), ",")
    return bodies.select(
        parts.getItem(0).alias("first_name"),
        parts.getItem(1).alias("last_name"),
        parts.getItem(2).cast("int").alias("age"),
        parts.getItem(3).alias("city"),
        parts.getItem(4).alias("state"),
    )


def concatenate_names(users: DataFrame) -> DataFrame:
    """Name-Concatenator: first_name + last_name -> name; drops the parts."""
    return users.select(
        F.concat_ws(" ", "first_name", "last_name").alias("name"), "age", "city", "state"
    )


def generate_ids(users: DataFrame) -> DataFrame:
    """IdGenerator: name -> id (``JohnSmith`` + a stable number)."""
    return users.select(
        F.concat(F.regexp_replace("name", " ", ""), F.lpad((F.abs(F.hash("name")) % 1000).cast("string"), 3, "0"))
        .alias("id"),
        "name", "age", "city", "state",
    )


def run(spark: SparkSession, input_path: Path, output_path: Path) -> RunContext:
    """One run of the pipeline; returns its finished run context."""
    with RunContext(NAMESPACE, APPLICATION, "mapreduce", PROGRAM) as lineage_run:
        bodies = spark.read.text(str(input_path)).withColumnRenamed("value", "body")
        lineage_run.read(SOURCE, component="File")
        profiles = generate_ids(concatenate_names(parse_bodies(bodies)))
        profiles.write.mode("overwrite").parquet(str(output_path))
        lineage_run.write(DESTINATION, component="Store")
        lineage_run.record_field_operations(DESTINATION, field_operations(), destination_fields=DESTINATION_FIELDS)
    return lineage_run

from __future__ import annotations

import json

from pyspark.sql import functions as F
from pyspark.testing import assertDataFrameEqual

from lineage.model.events import PARSED_COLUMNS
from spark_jobs.compaction.transforms import parse_log_lines
from tests.factories import access, event


def test_parse_gives_one_row_per_line_valid_or_rejected(spark) -> None:  # type: ignore[no-untyped-def]
    good = access("purchases", event_id="e-1")
    unknown_kind = json.dumps(event("nope", event_id="e-2"))
    text = "\n".join([json.dumps(good), "{oops", "", unknown_kind, json.dumps(good)]) + "\n"
    files = spark.createDataFrame([("file:/logs/a.jsonl", text)], ["file_path", "value"])
    parsed = parse_log_lines(files, 1_048_576)

    assert tuple(parsed.columns) == tuple(PARSED_COLUMNS)
    assertDataFrameEqual(
        parsed.select("source_file", "line_number", "event_id", "dataset", "access", "raw_text"),
        spark.createDataFrame(
            [
                ("file:/logs/a.jsonl", 1, "e-1", "purchases", "read", None),
                ("file:/logs/a.jsonl", 2, None, None, None, "{oops"),
                ("file:/logs/a.jsonl", 4, None, None, None, unknown_kind),
                ("file:/logs/a.jsonl", 5, "e-1", "purchases", "read", None),
            ],
            "source_file string, line_number long, event_id string, dataset string, access string, raw_text string",
        ),
    )
    reasons = [row["reason"] for row in parsed.where(F.col("reason").isNotNull()).orderBy("line_number").collect()]
    assert reasons[0].startswith("malformed JSON at column 2")
    assert "kind must be one of" in reasons[1]


def test_parse_handles_many_files_and_empty_ones(spark) -> None:  # type: ignore[no-untyped-def]
    files = spark.createDataFrame(
        [(f"file:/logs/{index}.jsonl", json.dumps(access(f"d{index}")) + "\n") for index in range(30)]
        + [("file:/logs/empty.jsonl", "")],
        ["file_path", "value"],
    )
    parsed = parse_log_lines(files, 1_048_576)
    assert parsed.count() == 30
    assert parsed.where(F.col("reason").isNotNull()).count() == 0


def test_a_dataset_event_parses_on_executors_into_run_less_rows(spark) -> None:  # type: ignore[no-untyped-def]
    """An OpenLineage DatasetEvent, wrapped as the endpoint wraps it: Spark's parse expands it
    into the dataset's facets and its observed schema, with no run."""
    from lineage.naming.identity import NO_MAPPING
    from lineage.openlineage.mapping import wrap

    declared = wrap({"eventTime": "2026-11-21T05:00:00Z", "producer": "p", "schemaURL": "s", "dataset": {
        "namespace": "s3://lake", "name": "orders", "facets": {"schema": {"fields": [{"name": "id"}]}}}}, NO_MAPPING)
    files = spark.createDataFrame([("file:/logs/a.jsonl", json.dumps(declared) + "\n")], ["file_path", "value"])
    rows = parse_log_lines(files, 1_048_576).orderBy("event_id").collect()
    assert [(row["kind"], row["dataset"], row["run_id"], row["application"], row["reason"]) for row in rows] == [
        ("dataset_facets", "s3://lake/orders", None, None, None), ("metadata_change", None, None, None, None)]

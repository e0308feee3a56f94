from __future__ import annotations

import json

from pyspark.testing import assertDataFrameEqual

from spark_jobs.compaction.transforms import (
    deduplicate_events,
    lines_per_file,
    parse_log_lines,
    quarantined_lines,
    valid_events,
)
from tests.factories import access, event


def test_parse_splits_valid_events_from_quarantined_lines(spark) -> None:  # type: ignore[no-untyped-def]
    good = access("purchases", event_id="e-1")
    text = "\n".join([json.dumps(good), "{oops", "", json.dumps(event("nope", event_id="e-2"))]) + "\n"
    files = spark.createDataFrame([("file:/logs/a.jsonl", text)], ["file_path", "value"])
    parsed = parse_log_lines(files, 1_048_576)

    assertDataFrameEqual(
        quarantined_lines(parsed).select("source_file", "line_number", "raw_text"),
        spark.createDataFrame(
            [("file:/logs/a.jsonl", 2, "{oops"), ("file:/logs/a.jsonl", 4, json.dumps(event("nope", event_id="e-2")))],
            ["source_file", "line_number", "raw_text"],
        ),
    )
    reasons = [row["reason"] for row in quarantined_lines(parsed).orderBy("line_number").collect()]
    assert reasons[0].startswith("malformed JSON at column 2")
    assert "kind must be one of" in reasons[1]
    assertDataFrameEqual(
        valid_events(parsed).select("event_id", "dataset", "access", "line_number"),
        spark.createDataFrame([("e-1", "purchases", "read", 1)], ["event_id", "dataset", "access", "line_number"]),
    )
    assertDataFrameEqual(
        lines_per_file(parsed), spark.createDataFrame([("file:/logs/a.jsonl", 3)], ["source_file", "lines"])
    )


def test_deduplicate_keeps_the_first_delivery_of_each_event_id(spark) -> None:  # type: ignore[no-untyped-def]
    first = access("purchases", event_id="same")
    again = access("history", event_id="same")
    other = access("purchases", event_id="other")
    files = spark.createDataFrame(
        [("file:/b.jsonl", json.dumps(again)), ("file:/a.jsonl", json.dumps(first) + "\n" + json.dumps(other))],
        ["file_path", "value"],
    )
    deduplicated = deduplicate_events(valid_events(parse_log_lines(files, 1_048_576)))
    assertDataFrameEqual(
        deduplicated.select("event_id", "dataset", "source_file"),
        spark.createDataFrame(
            [("same", "purchases", "file:/a.jsonl"), ("other", "purchases", "file:/a.jsonl")],
            ["event_id", "dataset", "source_file"],
        ),
    )

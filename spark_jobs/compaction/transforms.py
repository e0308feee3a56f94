"""DataFrame -> DataFrame transforms of the compaction (no IO here).

Parsing runs the core's ``parse_line`` in Python (``mapInArrow``): the JSON Schema is the
format's single home, so Spark does not restate its rules in SQL.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from lineage.events import STAGED_COLUMNS, Rejection, parse_line, quarantine_text, to_staged_row

_INT_COLUMNS = {"event_time_us", "line_number"}
PARSED_SCHEMA = T.StructType(
    [
        T.StructField(name, T.LongType() if name in _INT_COLUMNS else T.StringType(), nullable=True)
        for name in STAGED_COLUMNS
    ]
    + [T.StructField("reason", T.StringType()), T.StructField("raw_text", T.StringType())]
)
_ARROW_SCHEMA = pa.schema(
    [pa.field(f.name, pa.int64() if f.name in _INT_COLUMNS else pa.string()) for f in PARSED_SCHEMA.fields]
)
_OUTPUT_ROWS_PER_BATCH = 20_000


def parse_log_lines(log_files: DataFrame, max_event_bytes: int) -> DataFrame:
    """One row per non-blank line of each file: staged columns, or ``reason`` + ``raw_text``.

    ``log_files`` has ``file_path`` and ``value`` (the whole file's text).
    """

    def parse_batches(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        columns: dict[str, list[Any]] = {name: [] for name in _ARROW_SCHEMA.names}
        for batch in batches:
            for file_path, text in zip(
                batch.column("file_path").to_pylist(), batch.column("value").to_pylist(), strict=True
            ):
                for line_number, line in enumerate((text or "").split("\n"), start=1):
                    if not line.strip():
                        continue
                    _append(columns, _parse_one(line, file_path, line_number, max_event_bytes))
                    if len(columns["source_file"]) >= _OUTPUT_ROWS_PER_BATCH:
                        yield pa.RecordBatch.from_pydict(columns, schema=_ARROW_SCHEMA)
                        columns = {name: [] for name in _ARROW_SCHEMA.names}
        if columns["source_file"]:
            yield pa.RecordBatch.from_pydict(columns, schema=_ARROW_SCHEMA)

    return log_files.select("file_path", "value").mapInArrow(parse_batches, PARSED_SCHEMA)


def _parse_one(line: str, file_path: str, line_number: int, max_event_bytes: int) -> dict[str, Any]:
    parsed = parse_line(line, max_event_bytes)
    if isinstance(parsed, Rejection):
        row: dict[str, Any] = dict.fromkeys(_ARROW_SCHEMA.names)
        row.update(source_file=file_path, line_number=line_number, reason=parsed.reason, raw_text=quarantine_text(line))
        return row
    row = to_staged_row(parsed, file_path, line_number)
    row["reason"] = None
    row["raw_text"] = None
    return row


def _append(columns: dict[str, list[Any]], row: dict[str, Any]) -> None:
    for name, values in columns.items():
        values.append(row[name])


def quarantined_lines(parsed_lines: DataFrame) -> DataFrame:
    """The lines that failed validation, with their reason and where they came from."""
    return parsed_lines.where(F.col("reason").isNotNull()).select(
        "source_file", "line_number", "reason", "raw_text"
    )


def valid_events(parsed_lines: DataFrame) -> DataFrame:
    """The lines that are valid events, as staged columns."""
    return parsed_lines.where(F.col("reason").isNull()).select(*STAGED_COLUMNS)


def deduplicate_events(events: DataFrame) -> DataFrame:
    """One row per (namespace, event_id): the first delivery by (source_file, line_number)."""
    first_delivery = Window.partitionBy("namespace", "event_id").orderBy("source_file", "line_number")
    return (
        events.withColumn("delivery", F.row_number().over(first_delivery))
        .where(F.col("delivery") == 1)
        .select(*STAGED_COLUMNS)
    )


def lines_per_file(parsed_lines: DataFrame) -> DataFrame:
    """Non-blank line count of each file, for the manifest."""
    return parsed_lines.groupBy("source_file").agg(F.count(F.lit(1)).alias("lines"))

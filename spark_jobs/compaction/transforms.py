"""DataFrame -> DataFrame transforms of the compaction (no IO here).

Parsing runs the core's ``parse_line`` in Python (``mapInArrow``): the JSON Schema is the
format's single home, so Spark does not restate its rules in SQL. Every line comes out as one
row (valid events with ``reason`` null, rejected lines with their reason and raw text), so the
job stages all of them in a single pass over the files; a line carrying an OpenLineage event
comes out as the native events it stands for (``lineage.openlineage.mapping.expand``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import types as T

from lineage.errors import InvalidEventError
from lineage.model.events import PARSED_COLUMNS, Rejection, parse_line, quarantine_text, to_staged_row
from lineage.naming.identity import NO_MAPPING, NamespaceMap
from lineage.openlineage.mapping import KIND as OPENLINEAGE
from lineage.openlineage.mapping import expand, kept_verbatim

PARSED_SCHEMA = T.StructType([
    T.StructField(name, T.LongType() if sql_type == "bigint" else T.StringType(), nullable=True)
    for name, sql_type in PARSED_COLUMNS.items()
])
_ARROW_SCHEMA = pa.schema([
    pa.field(name, pa.int64() if sql_type == "bigint" else pa.string()) for name, sql_type in PARSED_COLUMNS.items()
])
_OUTPUT_ROWS_PER_BATCH = 20_000


def parse_arrow_batches(batches: Iterator[pa.RecordBatch], max_event_bytes: int,
                        namespaces: NamespaceMap = NO_MAPPING, latest: datetime | None = None
                        ) -> Iterator[pa.RecordBatch]:
    """Arrow batches of (file_path, value) files -> Arrow batches of parsed lines (PARSED_COLUMNS)."""
    columns: dict[str, list[Any]] = {name: [] for name in _ARROW_SCHEMA.names}
    for batch in batches:
        for file_path, raw in zip(
            batch.column("file_path").to_pylist(), batch.column("value").cast(pa.binary()).to_pylist(), strict=True
        ):
            text, valid = _decoded(raw or b"")
            for line_number, line in enumerate(text.split("\n"), start=1):
                if not line.strip():
                    continue
                if not valid and _SURROGATE.search(line):
                    rows = [_rejected(_visible(line), file_path, line_number, "the line is not valid UTF-8")]
                else:
                    rows = _parse_one(line, file_path, line_number, max_event_bytes, namespaces, latest)
                for row in rows:
                    _append(columns, row)
                if len(columns["source_file"]) >= _OUTPUT_ROWS_PER_BATCH:
                    yield pa.RecordBatch.from_pydict(columns, schema=_ARROW_SCHEMA)
                    columns = {name: [] for name in _ARROW_SCHEMA.names}
    if columns["source_file"]:
        yield pa.RecordBatch.from_pydict(columns, schema=_ARROW_SCHEMA)


def parse_log_lines(log_files: DataFrame, max_event_bytes: int, namespaces: NamespaceMap = NO_MAPPING) -> DataFrame:
    """Rows of each non-blank line of each file: staged columns, or ``reason`` + ``raw_text``.

    ``log_files`` has ``file_path`` and ``value`` (the whole file's text).
    """
    return log_files.select("file_path", "value").mapInArrow(
        lambda batches: parse_arrow_batches(batches, max_event_bytes, namespaces), PARSED_SCHEMA
    )


def _parse_one(line: str, file_path: str, line_number: int, max_event_bytes: int,
               namespaces: NamespaceMap, latest: datetime | None = None) -> list[dict[str, Any]]:
    parsed = parse_line(line, max_event_bytes, latest)
    if isinstance(parsed, Rejection):
        return [_rejected(line, file_path, line_number, parsed.reason)]
    events, line_id = [parsed], None
    if parsed["kind"] == OPENLINEAGE:
        try:
            kept = kept_verbatim(parsed, namespaces)
            events = [*([kept] if kept else []), *expand(parsed, namespaces)]
        except InvalidEventError as exc:
            return [_rejected(line, file_path, line_number, str(exc))]
        line_id = parsed["event_id"]  # the ledger records the line, not each event it stands for
    rows = []
    for event in events:
        row = to_staged_row(event, file_path, line_number)
        row["line_id"] = line_id
        row["reason"] = None
        row["raw_text"] = None
        rows.append(row)
    return rows


_SURROGATE = re.compile("[\udc80-\udcff]")


def _decoded(raw: bytes) -> tuple[str, bool]:
    """A file's text, and whether it was valid UTF-8 (when not, its bad bytes are kept as
    surrogates, so only the lines holding them are refused)."""
    try:
        return raw.decode("utf-8"), True
    except UnicodeDecodeError:
        return raw.decode("utf-8", errors="surrogateescape"), False


def _visible(line: str) -> str:
    """A line with bad bytes, storable as text: each bad byte written ``\\xNN``."""
    return line.encode("utf-8", errors="surrogateescape").decode("utf-8", errors="backslashreplace")


def _rejected(line: str, file_path: str, line_number: int, reason: str) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(_ARROW_SCHEMA.names)
    row.update(source_file=file_path, line_number=line_number, reason=reason, raw_text=quarantine_text(line))
    return row


def _append(columns: dict[str, list[Any]], row: dict[str, Any]) -> None:
    for name, values in columns.items():
        values.append(row[name])

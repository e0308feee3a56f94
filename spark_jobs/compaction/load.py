"""Load DataFrames into warehouse staging tables with COPY, from Spark's partitions.

Each partition streams its Arrow batches as CSV into ``COPY ... FROM STDIN``: no JDBC jar,
no per-row Python work. Staging tables are plain (unlogged) tables; the merge that follows
reads them in one transaction.
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Sequence

import pyarrow as pa
import pyarrow.csv as pa_csv
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from lineage.settings import libpq_url

_COPIED = T.StructType([T.StructField("rows", T.LongType())])


def copy_into(frame: DataFrame, database_url: str, table: str, columns: Sequence[str]) -> int:
    """COPY ``columns`` of ``frame`` into ``table`` (an existing staging table); returns rows copied."""
    url = libpq_url(database_url)
    column_list = ", ".join(f'"{name}"' for name in columns)
    statement = f"COPY {table} ({column_list}) FROM STDIN WITH (FORMAT csv)"

    def copy_partition(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import psycopg

        copied = 0
        options = pa_csv.WriteOptions(include_header=False, quoting_style="needed")
        with psycopg.connect(url) as conn, conn.cursor() as cursor, cursor.copy(statement) as copy:  # type: ignore[arg-type]
            for batch in batches:
                if batch.num_rows == 0:
                    continue
                buffer = io.BytesIO()
                pa_csv.write_csv(batch, buffer, write_options=options)
                copy.write(buffer.getvalue())
                copied += batch.num_rows
        yield pa.RecordBatch.from_pydict({"rows": [copied]}, schema=pa.schema([("rows", pa.int64())]))

    result = frame.select(*columns).mapInArrow(copy_partition, _COPIED).agg(F.sum("rows")).collect()[0][0]
    return int(result or 0)

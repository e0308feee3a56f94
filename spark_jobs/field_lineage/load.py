"""The field lineage job's IO, done by the executors: each task reads its share of the
records from PostgreSQL and COPYs what it derived into the job's staging tables, so no
record travels through the driver (it sees ranges, bucket numbers and row counts only).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import psycopg
import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from lineage.settings import libpq_url
from spark_jobs.compaction.load import copy_arrow_batches
from spark_jobs.field_lineage.transforms import NEW_SETS_SCHEMA, PENDING_SCHEMA
from warehouse.db.field_lineage_staging import FieldStaging, PendingRange, read_new_sets, read_pending

BATCH_ROWS = 2_000
_COPIED = T.StructType([T.StructField("rows", T.LongType())])
_COPIED_ARROW = pa.schema([("rows", pa.int64())])
Rows = Iterator[list[tuple[str, ...]]]


def pending_records(spark: SparkSession, database_url: str, parts: Sequence[PendingRange]) -> DataFrame:
    """(namespace, event_id, payload) of the pending records in ``parts``, one task per range."""
    return _read(spark, database_url, len(parts), PENDING_SCHEMA,
                 lambda conn, index: read_pending(conn, parts[index], BATCH_ROWS))


def new_set_records(spark: SparkSession, database_url: str, staging: FieldStaging, buckets: int) -> DataFrame:
    """(fingerprint, namespace, payload), one record per staged operation set not stored yet,
    read in ``buckets`` tasks by fingerprint hash."""
    return _read(spark, database_url, buckets, NEW_SETS_SCHEMA,
                 lambda conn, index: read_new_sets(conn, staging, index, buckets, BATCH_ROWS))


def copy_into(frame: DataFrame, database_url: str, table: str) -> int:
    """COPY ``frame``'s rows into ``table`` (columns by name) from the executors; returns rows."""
    url, columns = libpq_url(database_url), list(frame.columns)

    def copy(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        yield pa.RecordBatch.from_pydict({"rows": [copy_arrow_batches(batches, url, table, columns)]},
                                         schema=_COPIED_ARROW)

    return int(frame.mapInArrow(copy, _COPIED).agg(F.sum("rows")).collect()[0][0] or 0)


def _read(spark: SparkSession, database_url: str, tasks: int, schema: T.StructType,
          rows_of: Callable[[psycopg.Connection, int], Rows]) -> DataFrame:
    """A DataFrame of ``schema`` whose task ``i`` (of ``tasks``) yields ``rows_of(conn, i)``,
    read over the task's own connection."""
    url = libpq_url(database_url)
    arrow_schema = pa.schema([pa.field(field.name, pa.string()) for field in schema.fields])

    def read(indexes: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        with psycopg.connect(url) as conn:
            for batch in indexes:
                for index in batch.column("id").to_pylist():
                    for rows in rows_of(conn, index):
                        columns = [pa.array(column, pa.string()) for column in zip(*rows, strict=True)]
                        yield pa.RecordBatch.from_arrays(columns, schema=arrow_schema)

    return spark.range(0, tasks, 1, numPartitions=tasks).mapInArrow(read, schema)

"""Access types recorded through a real Spark run: a dataset class whose methods read and write
parquet with Spark, used inside a RunContext, then the real compaction into PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame

from lineage.client.access_types import lineage_dataset, read_only, write_only
from lineage.client.run_context import RunContext
from spark_jobs.compaction.job import run_compaction
from tests.factories import move_into_hour
from warehouse.db.connection import connect


@lineage_dataset
class ParquetTable:
    def __init__(self, spark: Any, root: Path, name: str) -> None:
        self.spark, self.path, self.dataset_name = spark, str(root / name), name

    @read_only
    def load(self) -> DataFrame:
        return self.spark.read.parquet(self.path)

    @write_only
    def save(self, frame: DataFrame) -> None:
        frame.write.mode("overwrite").parquet(self.path)

    def count(self) -> int:
        """Unannotated: read_write when called from a program."""
        return int(self.load().count())


def test_a_spark_job_using_annotated_datasets_records_reads_and_writes(
    spark, warehouse_db: str, log_root: Path, settings_for, tmp_path: Path  # type: ignore[no-untyped-def]
) -> None:
    spark.createDataFrame([(1, "a"), (2, "b")], "id int, name string").write.parquet(str(tmp_path / "raw"))
    with RunContext("default", "Etl", "spark", "Copy", run_id="copy-1", log_root=str(log_root)) as run:
        raw, clean = ParquetTable(spark, tmp_path, "raw"), ParquetTable(spark, tmp_path, "clean")
        clean.save(raw.load().where("id > 1"))
        assert clean.count() == 1
    move_into_hour(log_root, run.files)
    run_compaction(spark, interval_end=datetime(2026, 11, 21, 6, tzinfo=UTC), settings=settings_for(warehouse_db))
    with connect(warehouse_db) as conn:
        rows = conn.execute("select dataset, access from lineage.access_details where run_id = 'copy-1' "
                            "order by dataset, access").fetchall()
    assert rows == [("clean", "read_write"), ("clean", "write"), ("raw", "read")]

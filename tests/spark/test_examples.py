"""The example pipelines run on Spark and record the seeds' lineage."""

from __future__ import annotations

import json
from pathlib import Path

from spark_jobs.examples import purchase_history, sample_data, user_profiles


def recorded(run) -> list[dict]:  # type: ignore[no-untyped-def, type-arg]
    return [json.loads(line) for path in run.files for line in Path(path).read_text().splitlines()]


def test_seed_004_pipeline_writes_its_table_and_records_its_operations(spark, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("LINEAGE_LOG_ROOT", str(tmp_path / "logs"))
    source = sample_data.write_user_data(tmp_path / "user_data", rows=20, seed=1)
    run = user_profiles.run(spark, source, tmp_path / "mytableds")

    table = spark.read.parquet(str(tmp_path / "mytableds"))
    assert table.columns == ["id", "name", "age", "city", "state"]
    assert table.count() == 20
    events = recorded(run)
    assert [e["kind"] for e in events] == ["run_start", "dataset_access", "dataset_access", "field_operations",
                                           "run_end"]
    assert {e["namespace"] for e in events} == {"myns"}
    operations = events[3]["payload"]["operations"]
    assert [op["name"] for op in operations] == ["read", "parse", "concat", "drop", "drop", "create"]
    assert operations[0]["inputs"] == [{"source": {"type": "dataset", "name": "user_data", "namespace": "myns"}}]
    assert events[3]["payload"]["destination"]["name"] == "mytableds"


def test_seed_001_purchase_history_records_reads_and_writes(spark, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("LINEAGE_LOG_ROOT", str(tmp_path / "logs"))
    stream = sample_data.write_purchase_events(tmp_path / "purchaseStream", rows=50, seed=2)
    runs = [purchase_history.run_flow(spark, stream, tmp_path), purchase_history.run_builder(spark, tmp_path),
            purchase_history.run_service(spark, tmp_path)]
    accesses = [
        (e["run"]["program"], e["payload"]["dataset"]["name"], e["payload"]["access"], e["payload"].get("component"))
        for run in runs for e in recorded(run) if e["kind"] == "dataset_access"
    ]
    assert accesses == [
        ("PurchaseFlow", "purchaseStream", "read", "reader"),
        ("PurchaseFlow", "purchases", "write", "collector"),
        ("PurchaseFlow", "purchases", "read", "collector"),
        ("PurchaseFlow", "frequentCustomers", "write", "collector"),
        ("PurchaseHistoryBuilder", "purchases", "read", None),
        ("PurchaseHistoryBuilder", "history", "write", None),
        ("PurchaseHistoryBuilder", "frequentCustomers", "write", None),
        ("PurchaseHistoryService", "history", "unknown", None),
    ]
    assert spark.read.parquet(str(tmp_path / "history")).count() > 0

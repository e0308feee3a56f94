"""The example pipelines run on Spark and record the seeds' lineage."""

from __future__ import annotations

import json
import os
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


def _short(name: str) -> str:
    return name.rsplit("/", 1)[-1]


def _accesses(runs) -> set[tuple[str, str, str]]:  # type: ignore[no-untyped-def]
    return {(e["run"]["program"], _short(e["payload"]["dataset"]["name"]), e["payload"]["access"])
            for run in runs for e in recorded(run) if e["kind"] == "dataset_access"}


def _paths(run, destination: str):  # type: ignore[no-untyped-def]
    from lineage.model.field_paths import field_paths, normalize

    payload = next(e["payload"] for e in recorded(run) if e["kind"] == "field_operations"
                   and _short(e["payload"]["destination"]["name"]) == destination)
    return field_paths(normalize(payload, "default"))


def _sources(run, destination: str, rename: dict[str, str]) -> dict[str, set[tuple[str, str]]]:  # type: ignore[no-untyped-def]
    """Each destination field's source fields (dataset, field), from the record's field paths."""
    return {path.field: {(_short(source.name), rename.get(field, field)) for source, field in path.source_fields}
            for path in _paths(run, destination)}


def _steps(run, destination: str) -> dict[str, list[str]]:  # type: ignore[no-untyped-def]
    """Each destination field's path as the names of its transform operations, in order."""
    return {path.field: [op.name for op in path.operations if op.type == "transform"]
            for path in _paths(run, destination)}


def test_the_examples_as_plain_pyspark_under_track_give_the_hand_recorded_lineage(
        spark, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The seed programs run twice: as recorded by hand, and as plain PySpark under ``track``."""
    from spark_jobs.examples import captured

    monkeypatch.setenv("LINEAGE_LOG_ROOT", str(tmp_path / "logs"))
    user_data = sample_data.write_user_data(tmp_path / "user_data", rows=20, seed=1)
    stream = sample_data.write_purchase_events(tmp_path / "purchaseStream", rows=50, seed=2)
    hand = [user_profiles.run(spark, user_data, tmp_path / "hand" / "mytableds"),
            purchase_history.run_flow(spark, stream, tmp_path / "hand"),
            purchase_history.run_builder(spark, tmp_path / "hand"),
            purchase_history.run_service(spark, tmp_path / "hand")]
    auto = [captured.run_user_profiles(spark, user_data, tmp_path / "auto" / "mytableds"),
            captured.run_flow(spark, stream, tmp_path / "auto"), captured.run_builder(spark, tmp_path / "auto"),
            captured.run_service(spark, tmp_path / "auto")]
    assert [run.status for run in auto] == ["completed"] * 4

    # dataset lineage: the same reads and writes, program by program. Two differences, both
    # the hand-recorded side's: it names the service's read "unknown" (a capture sees a read),
    # and its builder writes frequentCustomersByBuilder while recording frequentCustomers.
    assert _accesses(auto) == {
        ("ETLMapReduce", "user_data", "read"), ("ETLMapReduce", "mytableds", "write"),
        ("PurchaseFlow", "purchaseStream", "read"), ("PurchaseFlow", "purchases", "write"),
        ("PurchaseFlow", "purchases", "read"), ("PurchaseFlow", "frequentCustomers", "write"),
        ("PurchaseHistoryBuilder", "purchases", "read"), ("PurchaseHistoryBuilder", "history", "write"),
        ("PurchaseHistoryBuilder", "frequentCustomers", "write"),
        ("PurchaseHistoryService", "history", "read"),
    }
    assert _accesses(hand) - {("PurchaseHistoryService", "history", "unknown")} == _accesses(auto) - {
        ("PurchaseHistoryService", "history", "read")}

    # field lineage: every destination field comes from the same source fields. The text file's
    # column is `value`; the hand-written record calls it `body`, the name the job gives it.
    assert _sources(auto[0], "mytableds", {"value": "body"}) == _sources(hand[0], "mytableds", {}) == {
        field: {("user_data", "body")} for field in ("id", "name", "age", "city", "state")}
    # and through the same steps: the design's parse, concat and create are, in Spark's words,
    # one split (five columns from one call), a concat_ws and a concat
    assert _steps(hand[0], "mytableds") == {
        "id": ["parse", "concat", "create"], "name": ["parse", "concat"], "age": ["parse"], "city": ["parse"],
        "state": ["parse"]}
    assert _steps(auto[0], "mytableds") == {
        "id": ["split", "concat_ws", "concat"], "name": ["split", "concat_ws"], "age": ["split"], "city": ["split"],
        "state": ["split"]}
    history = {"customer": {("purchases", "customer")},
               "purchases": {("purchases", "product"), ("purchases", "quantity"), ("purchases", "price")},
               "total_spent": {("purchases", "quantity"), ("purchases", "price")}}
    assert _sources(hand[2], "history", {}) == history
    # the capture also names the grouping key, an INDIRECT (GROUP_BY) input of each aggregate, which
    # the hand-written record leaves out; the key itself is written as is and grouped on: both
    # kinds kept, through a group_by step the hand-written record has not (issue 31 item 1)
    assert _sources(auto[2], "history", {}) == {
        field: found | {("purchases", "customer")} for field, found in history.items()}
    assert _steps(hand[2], "history") == {"customer": [], "purchases": ["collect"], "total_spent": ["spend"]}
    assert _steps(auto[2], "history") == {"customer": ["group_by"], "purchases": ["collect_list"],
                                          "total_spent": ["sum"]}


def test_the_captured_examples_compact_into_runs_accesses_and_field_paths(
        spark, tmp_path: Path, monkeypatch, warehouse_db: str) -> None:  # type: ignore[no-untyped-def]
    """What ``make demo`` does with the captured examples: their events (format v2, datasets named
    by their physical identity) compact with nothing quarantined, into runs, accesses and field
    paths the API reads."""
    from datetime import UTC, datetime, timedelta

    from lineage.settings import Settings
    from spark_jobs.compaction.job import run_compaction
    from spark_jobs.examples import captured
    from spark_jobs.field_lineage.job import run_field_lineage
    from tests.warehouse.test_compaction import rows
    from warehouse.db import namespace_store
    from warehouse.db.connection import connect

    log_root = tmp_path / "logs"
    monkeypatch.setenv("LINEAGE_LOG_ROOT", str(log_root))
    user_data = sample_data.write_user_data(tmp_path / "user_data", rows=20, seed=1)
    stream = sample_data.write_purchase_events(tmp_path / "purchaseStream", rows=50, seed=2)
    captured.run_user_profiles(spark, user_data, tmp_path / "auto" / "mytableds")
    captured.run_flow(spark, stream, tmp_path / "auto")
    captured.run_builder(spark, tmp_path / "auto")
    with connect(warehouse_db, autocommit=True) as conn:
        namespace_store.create_namespace(conn, "myns", None)
    settings = Settings.from_env({**os.environ, "LINEAGE_LOG_ROOT": str(log_root),
                                  "LINEAGE_DATABASE_URL": warehouse_db})
    summary = run_compaction(spark, interval_end=datetime.now(UTC) + timedelta(hours=1), settings=settings)
    assert summary.quarantined == 0 and summary.events_compacted == summary.events_read
    fields = run_field_lineage(spark, settings)
    # one record per write: mytableds, purchases, frequentCustomers (twice: the flow's and the
    # builder's, the same plan, so one operation set), history
    assert (fields.quarantined, fields.records, fields.sets_added) == (0, 5, 4)
    assert sorted(rows(warehouse_db, "select application, program, status from lineage.runs r "
                                     "join lineage.programs p using (program_key)")) == [
        ("CapturedPurchaseHistory", "PurchaseFlow", "completed"),
        ("CapturedPurchaseHistory", "PurchaseHistoryBuilder", "completed"),
        ("CapturedUserProfilePipeline", "ETLMapReduce", "completed")]
    sources = rows(warehouse_db, "select distinct d.dataset, p.field, src->>'field' from lineage.field_paths p "
                                 "join lineage.field_operation_sets s on s.fingerprint = p.set_fingerprint "
                                 "join lineage.datasets d on d.dataset = s.destination "
                                 "cross join jsonb_array_elements(p.path->'sources') src "
                                 "where d.dataset like '%mytableds' order by 2")
    assert [(field, source) for _, field, source in sources] == [
        ("age", "value"), ("city", "value"), ("id", "value"), ("name", "value"), ("state", "value")]

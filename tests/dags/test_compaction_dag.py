"""The compaction DAG end to end through ``airflow dags test``: Spark, GX, dbt, assets."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import psycopg

from tests.airflow_support import airflow_dags_test, airflow_env, ensure_airflow_db, libpq
from tests.factories import access, event, write_log
from warehouse.db import incident_store, metadata_search
from warehouse.service.search_query import parse_query


def dags_test(log_root: Path, warehouse: str, logical_date: str) -> str:
    completed = subprocess.run(
        [*airflow_dags_test(), "lineage_compaction", logical_date],
        env=airflow_env(LINEAGE_LOG_ROOT=str(log_root), AIRFLOW_CONN_LINEAGE_WAREHOUSE=libpq(warehouse),
                        LINEAGE_DATABASE_URL=warehouse),
        capture_output=True, text=True, timeout=600, check=False,
    )
    output = completed.stdout + completed.stderr
    assert completed.returncode == 0, output[-4000:]
    assert "state=success" in output, output[-4000:]
    return output


def query(url: str, sql: str) -> list[tuple]:  # type: ignore[type-arg]
    with psycopg.connect(libpq(url)) as conn:
        return [tuple(row) for row in conn.execute(sql).fetchall()]  # type: ignore[arg-type]


def test_dag_compacts_checks_builds_marts_and_emits_assets(warehouse_db: str, log_root: Path) -> None:
    ensure_airflow_db()
    run = {"application": "PurchaseHistory", "program_type": "flow", "program": "PurchaseFlow", "run_id": "r-1"}
    legacy = {"application": "Legacy", "program_type": "spark", "program": "Export", "run_id": "l-1"}
    write_log(log_root, [
        # the day before: a legacy export (its write disappears on 11-21, a day not over yet)
        event("run_start", run=legacy, event_time="2026-11-20T05:00:00Z"),
        access("legacy", "write", run=legacy, event_time="2026-11-20T05:01:00Z"),
        event("run_end", {"status": "completed"}, run=legacy, event_time="2026-11-20T05:05:00Z"),
        event("run_start", run=run, event_time="2026-11-21T05:00:00Z"),
        access("purchaseStream", run=run),
        access("purchases", "write", run=run),
        event("field_operations", {"destination": {"name": "purchases"}, "operations": [
            {"name": "read", "inputs": [{"source": {"name": "purchaseStream", "type": "stream"}}], "outputs": ["body"]},
            {"name": "parse", "inputs": [{"field": "body"}], "outputs": ["customer", "item"]}],
            "destination_fields": ["customer", "item"]}, run=run),
        "not json at all",
        event("metadata_change", {"entity": [["namespace", "default"], ["dataset", "purchases"]],
                                  "operation": "add_tags", "tags": ["from-a-program"]}, run=run),
        event("run_end", {"status": "completed"}, run=run, event_time="2026-11-21T05:05:00Z"),
    ])
    output = dags_test(log_root, warehouse_db, "2026-11-21T06:00:00+00:00")

    assert "SUMMARY" in output
    assert "files=1 late_files=0 events_read=10 compacted=9 duplicates=0 quarantined=1" in output
    assert "field_records=1 metadata_events=1 metadata_changes=1" in output
    assert query(warehouse_db, "select d.dataset, p.field, p.path->'sources'->0->>'field' from lineage.field_paths p "
                               "join lineage.field_operation_sets s on s.fingerprint = p.set_fingerprint "
                               "join lineage.datasets d on d.dataset = s.destination order by p.field") == [
        ("purchases", "customer", "body"), ("purchases", "item", "body")]
    assert query(warehouse_db, "select dataset, field, run_count from lineage_marts.field_provenance "
                               "order by field") == [
        ("purchases", "customer", 1), ("purchases", "item", 1)]
    assert query(warehouse_db, "select source_dataset, source_field, destination_field, run_count "
                               "from lineage_marts.field_impact_edges order by destination_field") == [
        ("purchaseStream", "body", "customer", 1), ("purchaseStream", "body", "item", 1)]
    assert query(warehouse_db, "select program_run_id, status, datasets_read, datasets_written "
                               "from lineage_marts.program_runs order by 1") == [
        ("default.Legacy.spark.Export.l-1", "completed", 0, 1),
        ("default.PurchaseHistory.flow.PurchaseFlow.r-1", "completed", 1, 1)]
    assert query(warehouse_db, "select data_id, program_id, access, run_count from lineage_marts.dataset_lineage_edges "
                               "order by data_id") == [
        ("dataset.default.legacy", "spark.default.Legacy.Export", "write", 1),
        ("dataset.default.purchaseStream", "flow.default.PurchaseHistory.PurchaseFlow", "read", 1),
        ("dataset.default.purchases", "flow.default.PurchaseHistory.PurchaseFlow", "write", 1)]
    batch_id = query(warehouse_db, "select batch_id from lineage.compaction_batches")[0][0]
    airflow_db = airflow_env()["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"]
    events = query(airflow_db, "select a.name, e.extra::text from asset_event e join asset a on a.id = e.asset_id "
                               f"where e.extra::text like '%{batch_id}%' order by a.name")
    assert [name for name, _ in events] == [
        "lineage_dataset_accesses", "lineage_marts", "lineage_metadata_changes", "lineage_pending_events",
        "lineage_runs"]
    # What changed on 11-21, one asset event per dataset through the alias: the flow's read and
    # write appeared, and the field source purchases.customer <- purchaseStream.body
    changed = query(airflow_db, "select a.name, a.uri, e.extra::text from asset_event e join asset a on a.id = "
                                "e.asset_id where a.name like 'lineage_dataset.%' order by a.name")
    assert [(name, uri) for name, uri, _ in changed] == [
        ("lineage_dataset.default.dataset.purchaseStream", "lineage://warehouse/datasets/default/dataset/purchaseStream"),
        ("lineage_dataset.default.dataset.purchases", "lineage://warehouse/datasets/default/dataset/purchases")]
    purchases = json.loads(changed[1][2])
    assert (purchases["day"], purchases["dataset"]) == ("2026-11-21", "purchases")
    assert sorted((c["kind"], c["change"], c.get("access", c.get("field"))) for c in purchases["changes"]) == [
        ("edge", "appeared", "write"), ("field_source", "appeared", "customer"), ("field_source", "appeared", "item")]
    assert "announced 4 lineage changes of 2 datasets" in output  # legacy's disappearance waits for the day's end
    assert "no incident reached a dataset not announced yet" in output
    change_ids = [row[0] for row in query(warehouse_db, "select change_id from lineage.metadata_changes")]
    assert json.loads(dict(events)["lineage_metadata_changes"])["change_ids"] == change_ids
    assert query(warehouse_db, "select entity_key, scope from lineage.search_index "
                               "where kind = 'tag' and term = 'from-a-program'") == [
        ("namespace=default,dataset=purchases", "SYSTEM")]  # the search index, rebuilt after dbt
    with psycopg.connect(libpq(warehouse_db)) as conn:
        found = metadata_search.search(conn, parse_query("purchase*"))
    assert {"purchaseStream", "purchases", "PurchaseHistory", "PurchaseFlow"} <= {
        r["entity"]["details"][-1]["value"] for r in found["results"]}  # the compacted entities, by name

    # The same interval again: nothing new, nothing changed, no asset events but the blast radius
    # of an incident recorded since (purchases' write was bad): one event for the dataset it reached.
    tables = "select * from lineage.runs, lineage.dataset_accesses, lineage.quarantine"
    before = query(warehouse_db, tables)
    with psycopg.connect(libpq(warehouse_db)) as conn:
        incident_store.record(conn, "default", "dataset", "purchases", datetime(2026, 11, 21, 5, tzinfo=UTC),
                              datetime(2026, 11, 21, 6, tzinfo=UTC), "customer is null", "test")
    again = dags_test(log_root, warehouse_db, "2026-11-21T06:00:01+00:00")
    assert "events_read=0 compacted=0" in again
    assert "nothing new was compacted, derived, applied or propagated; the marts are current" in again  # skipped
    assert "no lineage change is due; no asset event emitted" in again  # each change announced once
    affected = query(airflow_db, "select a.name, a.uri, e.extra::text from asset_event e join asset a on a.id = "
                                 "e.asset_id where a.name like 'lineage_affected.%' order by a.name")
    assert [(name, uri) for name, uri, _ in affected] == [
        ("lineage_affected.default.dataset.purchases", "lineage://warehouse/affected/default/dataset/purchases")]
    bad = json.loads(affected[0][2])
    assert (bad["dataset"], bad["level"], bad["stillAffected"], bad["incident"]["reason"]) == (
        "purchases", 0, True, "customer is null")
    assert "announced 1 datasets reached by 1 incidents" in again
    assert query(warehouse_db, tables) == before
    assert query(warehouse_db, "select count(*) from lineage.compaction_batches") == [(1,)]


def test_a_batch_failing_its_check_blocks_the_marts_through_re_runs_until_acknowledged(
        warehouse_db: str, log_root: Path) -> None:
    """The quality gate through real DAG runs. Before, the batch committed, the check failed,
    and a re-run (nothing new to compact) skipped the check and published the marts anyway."""
    ensure_airflow_db()
    write_log(log_root, [event("run_start", event_time="2026-11-21T05:10:00Z"), access("purchases"),
                         event("run_end", {"status": "completed"}, event_time="2026-11-21T05:00:00Z")])
    env = airflow_env(LINEAGE_LOG_ROOT=str(log_root), AIRFLOW_CONN_LINEAGE_WAREHOUSE=libpq(warehouse_db),
                      LINEAGE_DATABASE_URL=warehouse_db)

    def run(logical_date: str) -> str:
        done = subprocess.run([*airflow_dags_test(), "lineage_compaction", logical_date], env=env,
                              capture_output=True, text=True, timeout=600, check=False)
        return done.stdout + done.stderr

    marts = "select count(*) from information_schema.tables where table_schema = 'lineage_marts'"
    first = run("2026-11-21T06:00:00+00:00")
    assert "state=failed" in first and "expect_column_pair_values_a_to_be_greater_than_b: FAILED" in first
    batch = query(warehouse_db, "select batch_id, quality from lineage.compaction_batches")
    assert [quality for _, quality in batch] == ["failed"]
    assert query(warehouse_db, marts) == [(0,)]  # no mart was built over it

    again = run("2026-11-21T07:00:00+00:00")  # the next run: nothing new, and still blocked
    assert "state=failed" in again and f"batch {batch[0][0]} failed" in again
    assert query(warehouse_db, marts) == [(0,)]

    acknowledged = subprocess.run([sys.executable, "-m", "warehouse.pipeline.quality", "acknowledge", batch[0][0],
                                   "--reason", "one host's clock; accepted"], env=env, capture_output=True,
                                  text=True, timeout=120, check=False)
    assert acknowledged.returncode == 0, acknowledged.stderr
    status = subprocess.run([sys.executable, "-m", "warehouse.pipeline.quality", "status"], env=env,
                            capture_output=True, text=True, timeout=120, check=False)
    assert status.returncode == 0 and "no batch blocks the marts" in status.stdout

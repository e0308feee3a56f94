"""The field lineage job derives the same warehouse on Spark and in its own process (the path a
small batch takes, ``LINEAGE_FIELD_LINEAGE_IN_PROCESS_RECORDS``): the same log, compacted into two
databases, derived once each way, gives the same operation sets, paths, flows, run rows and
quarantine; and ``derive_pending`` (the DAGs' stage) picks the path by how many records wait."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import psycopg
import pytest

from lineage.settings import Settings
from spark_jobs.compaction.job import run_compaction
from spark_jobs.field_lineage import job
from spark_jobs.field_lineage.job import derive_pending, run_field_lineage
from tests.airflow_support import libpq
from tests.conftest import create_scratch_db, drop_scratch_db
from tests.factories import write_log
from tests.plugin.test_field_lineage_api import (
    CHANGED_OPERATIONS,
    END,
    NO_READ,
    REPORT,
    SCORES,
    SEED_OPERATIONS,
    TOTALS,
    profiles,
    run,
)

LOG = [*run("ETLMapReduce", "r1", 1, [profiles(SEED_OPERATIONS)]),
       *run("ETLMapReduce", "r2", 2, [profiles(SEED_OPERATIONS)]),
       *run("ETLMapReduce", "r3", 3, [profiles(CHANGED_OPERATIONS)]),
       *run("Scoring", "s1", 5, [SCORES, NO_READ]),
       *run("Totals", "t1", 6, [TOTALS, REPORT], version=2)]
# what the derivation stored, without surrogate keys and clocks
STORED = {
    "sets": "select fingerprint, destination_namespace, destination_type, destination, descriptions::text, "
            "warnings::text, derived_with from lineage.field_operation_sets order by 1",
    "paths": "select set_fingerprint, field, path_fingerprint, path::text from lineage.field_paths order by 1, 2",
    "flows": "select source_namespace, source_type, source, source_field, flow_fingerprint, flow::text "
             "from lineage.field_source_flows order by 1, 2, 3, 4, 5",
    "runs": "select d.dataset, r.run_id, f.set_fingerprint from lineage.field_lineage_runs f "
            "join lineage.datasets d using (dataset_key) join lineage.runs r using (run_key) order by 1, 2, 3",
    "quarantine": "select reason, raw_text from lineage.quarantine order by 1, 2",
    "pending": "select count(*) from lineage.pending_events where kind = 'field_operations' and processed_at is null",
}


def _settings(url: str, log_root: Path, **env: str) -> Settings:
    return Settings.from_env({**os.environ, "LINEAGE_LOG_ROOT": str(log_root), "LINEAGE_DATABASE_URL": url,
                              "LINEAGE_AUTO_CREATE_NAMESPACES": "true", **env})


def _stored(url: str) -> dict[str, list[tuple[Any, ...]]]:
    with psycopg.connect(libpq(url)) as conn:
        return {name: conn.execute(query).fetchall() for name, query in STORED.items()}  # type: ignore[arg-type]


@pytest.fixture
def two_warehouses(tmp_path: Path) -> Any:
    log_root = tmp_path / "raw-events"
    write_log(log_root, LOG)
    urls = [create_scratch_db("fl_spark"), create_scratch_db("fl_local")]
    for url in urls:
        run_compaction(None, interval_end=END, settings=_settings(url, log_root))
    yield [_settings(url, log_root) for url in urls]
    for url in urls:
        drop_scratch_db(url)


def test_spark_and_the_job_s_own_process_store_the_same_field_lineage(spark, two_warehouses) -> None:  # type: ignore[no-untyped-def]
    on_spark, in_process = two_warehouses
    spark_summary = run_field_lineage(spark, on_spark, chunk_records=3)
    local_summary = run_field_lineage(None, in_process, chunk_records=3)
    counts = ("records", "sets_added", "paths_added", "runs_recorded", "quarantined")
    assert [getattr(spark_summary, name) for name in counts] == [getattr(local_summary, name) for name in counts]
    assert local_summary.records == 6  # the record without a read was quarantined by the compaction
    stored = _stored(on_spark.database_url)
    assert stored == _stored(in_process.database_url)
    assert len(stored["sets"]) == local_summary.sets_added >= 4 and stored["pending"] == [(0,)]
    assert run_field_lineage(None, in_process).records == 0  # processed records are not read twice


def test_the_dag_stage_starts_spark_only_past_its_in_process_limit(two_warehouses, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    small, large = two_warehouses
    sessions: list[str] = []

    def no_jvm(name: str, settings: Settings) -> None:
        sessions.append(name)  # stands in for the JVM: run_field_lineage is then handed None
        return None

    monkeypatch.setattr(job, "build_session", no_jvm)
    monkeypatch.setenv("LINEAGE_FIELD_LINEAGE_IN_PROCESS_RECORDS", "6")
    assert derive_pending(small.database_url).records == 6 and sessions == []  # 6 waiting: in this process
    monkeypatch.setenv("LINEAGE_FIELD_LINEAGE_IN_PROCESS_RECORDS", "5")
    assert derive_pending(large.database_url).records == 6 and sessions == ["lineage-field-lineage"]
    assert derive_pending(large.database_url).records == 0 and len(sessions) == 1  # nothing waits: no session

"""How the marts' build runs under dbt-ol: the command, and the environment that points dbt-ol at
our transport (the build itself is proven end to end in tests/dags/test_openlineage_producers.py)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from lineage.settings import CHECKOUT, Settings
from warehouse.pipeline.dbt_build import DbtResult, ParentRun, dbt_command, openlineage_env

DBT_VENV = CHECKOUT / ".venv-dbt" / "bin"


def settings(tmp_path: Path, **env: str) -> Settings:
    return Settings.from_env({"LINEAGE_HOME": str(tmp_path), "LINEAGE_DBT_BIN": "/opt/dbt-venv/bin/dbt", **env})


def test_dbt_ol_beside_dbt_runs_the_build_only_when_the_setting_is_on(tmp_path: Path) -> None:
    assert dbt_command(settings(tmp_path)) == ["/opt/dbt-venv/bin/dbt"]
    assert dbt_command(settings(tmp_path, LINEAGE_DBT_OPENLINEAGE="true")) == ["/opt/dbt-venv/bin/dbt-ol"]
    assert dbt_command(settings(tmp_path, LINEAGE_DBT_OPENLINEAGE="true", LINEAGE_DBT_BIN="dbt")) == ["dbt-ol"]


def test_dbt_ol_writes_through_our_transport_with_its_dbt_first_on_the_path(tmp_path: Path) -> None:
    env = openlineage_env(settings(tmp_path, LINEAGE_LOG_ROOT="s3a://lake/raw"), {"PATH": "/usr/bin"},
                          ParentRun("airflow/lineage_compaction.build_marts/r-1", "airflow/lineage_compaction/r-0"))
    assert env["OPENLINEAGE__TRANSPORT__TYPE"] == "lineage.transport.openlineage.RawLogTransport"
    assert env["OPENLINEAGE__TRANSPORT__LOG_ROOT"] == "s3a://lake/raw"
    assert env["PATH"] == "/opt/dbt-venv/bin" + os.pathsep + "/usr/bin"
    assert env["OPENLINEAGE_PARENT_ID"] == "airflow/lineage_compaction.build_marts/r-1"
    assert env["OPENLINEAGE_ROOT_PARENT_ID"] == "airflow/lineage_compaction/r-0"
    # The PYTHONPATH entry holds the lineage package and nothing else of this environment.
    path = Path(env["PYTHONPATH"])
    assert [entry.name for entry in path.iterdir()] == ["lineage"]
    assert (path / "lineage").resolve() == CHECKOUT / "lineage"


@pytest.mark.parametrize("own", [{"OPENLINEAGE_URL": "http://airflow:8080/lineage"},
                                 {"OPENLINEAGE_CONFIG": "/etc/openlineage.yml"},
                                 {"OPENLINEAGE__TRANSPORT__TYPE": "console"}])
def test_a_transport_the_environment_configures_is_left_alone(tmp_path: Path, own: dict[str, str]) -> None:
    env = openlineage_env(settings(tmp_path), dict(own))
    assert "OPENLINEAGE__TRANSPORT__LOG_ROOT" not in env
    assert env.items() >= own.items()


@pytest.mark.skipif(not (DBT_VENV / "dbt-ol").exists(), reason="the dbt venv is not installed")
def test_the_dbt_venv_imports_our_transport_and_nothing_of_the_product_venv(tmp_path: Path) -> None:
    env = openlineage_env(Settings.from_env({"LINEAGE_HOME": str(tmp_path), "LINEAGE_DBT_BIN": str(DBT_VENV / "dbt"),
                                             "LINEAGE_LOG_ROOT": str(tmp_path / "raw")}),
                          {"PATH": os.environ["PATH"]})
    probe = ("import sys; from openlineage.client import OpenLineageClient; "
             "from openlineage.client.event_v2 import Job, Run, RunEvent, RunState; "
             "client = OpenLineageClient(); print(type(client.transport).__name__); "
             "client.emit(RunEvent(eventType=RunState.START, eventTime='2026-11-23T09:00:00+00:00', "
             "run=Run(runId='0195f3b1-7a3e-7c6e-9d3f-2f1c0b8e4a11'), job=Job(namespace='dbt', name='probe'), "
             "producer='test')); "
             "print(sorted(m for m in sys.modules if m.split('.')[0] in "
             "('airflow', 'pyspark', 'psycopg', 'warehouse')))")
    completed = subprocess.run([str(DBT_VENV / "python"), "-c", probe], env=env, capture_output=True, text=True,
                               timeout=60, check=False)
    assert completed.returncode == 0, completed.stderr[-2000:]
    assert completed.stdout.split("\n")[:2] == ["RawLogTransport", "[]"]
    (written,) = (tmp_path / "raw").rglob("openlineage-*.jsonl")
    assert '"name":"probe"' in written.read_text()


def test_the_build_log_line_counts_lineage_events_those_not_written_and_the_index_rows() -> None:
    assert DbtResult(61, 0, "").render() == "dbt build: 61 passed, 0 warnings"
    assert DbtResult(61, 0, "", 54, 0).render() == "dbt build: 61 passed, 0 warnings, 54 OpenLineage events"
    assert DbtResult(61, 1, "", 52, 2).render() == (
        "dbt build: 61 passed, 1 warnings, 52 OpenLineage events, 2 NOT written (see dbt-ol's output)")
    assert DbtResult(61, 0, "", 54, 0, search_rows=1204).render() == (
        "dbt build: 61 passed, 0 warnings, 54 OpenLineage events; search index: 1,204 rows")

"""Helpers for tests that run Airflow for real (CLI subprocesses, api-server)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from lineage.settings import libpq_url

AIRFLOW = str(Path(sys.executable).parent / "airflow")
_migrated = False


def airflow_env(**overrides: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(overrides)
    return env


def ensure_airflow_db() -> None:
    """``airflow db migrate`` once per test session."""
    global _migrated
    if _migrated:
        return
    subprocess.run([AIRFLOW, "db", "migrate"], env=airflow_env(), check=True, capture_output=True, timeout=300)
    _migrated = True


libpq = libpq_url  # the project's own conversion; tests pass these URLs to psycopg and Airflow


_serialized = False


def ensure_dags_serialized() -> None:
    """``airflow dags reserialize`` once per test session: registers the DAGs' assets (the API
    emits ``lineage_metadata_changes`` events to the asset the compaction DAG declares)."""
    global _serialized
    if _serialized:
        return
    ensure_airflow_db()
    subprocess.run([AIRFLOW, "dags", "reserialize"], env=airflow_env(), check=True, capture_output=True, timeout=300)
    _serialized = True

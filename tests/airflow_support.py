"""Helpers for tests that run Airflow for real (CLI subprocesses, api-server)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

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


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def api_server(warehouse_url: str) -> Iterator[str]:
    """A real ``airflow api-server`` with the plugin on loopback, reading ``warehouse_url``;
    yields its base URL."""
    ensure_airflow_db()
    port = free_port()
    process = subprocess.Popen(
        [AIRFLOW, "api-server", "--port", str(port), "--host", "127.0.0.1"],
        env=airflow_env(AIRFLOW_CONN_LINEAGE_WAREHOUSE=libpq(warehouse_url)),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError("api-server exited: " + (process.stdout.read() or b"").decode()[-3000:])  # type: ignore[union-attr]
            try:
                if httpx.get(f"{base}/api/v2/monitor/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(1)
        else:
            raise RuntimeError("api-server did not become healthy in 180 s")
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


def token(base: str, username: str, password: str) -> httpx.Response:
    """``POST /auth/token`` of a running api-server."""
    return httpx.post(f"{base}/auth/token", json={"username": username, "password": password}, timeout=10)

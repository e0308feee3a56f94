"""Session-wide real parts: one PostgreSQL cluster, one Spark session, one Airflow home.

The environment is set in ``pytest_configure``, before any test module imports Airflow, so
Airflow reads its config (home, metadata DB, dags and plugins folders) from the test's values.
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

logging.getLogger("py4j").setLevel(logging.WARNING)  # its shutdown message races the closed log streams
ROOT = Path(__file__).resolve().parents[1]
TEST_HOME = ROOT / ".local" / "tests" / f"session-{os.getpid()}"
TEMPLATE_DB = "lineage_template"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _pg_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "LINEAGE_DATABASE_URL"}
    env.update(LINEAGE_HOME=str(TEST_HOME), LINEAGE_PG_DATABASES=f"lineage airflow {TEMPLATE_DB}")
    return env


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):
        return
    port = _free_port()
    TEST_HOME.mkdir(parents=True, exist_ok=True)
    os.chmod(TEST_HOME, 0o755)
    os.environ["LINEAGE_PG_PORT"] = str(port)
    started = subprocess.run([str(ROOT / "scripts" / "pg.sh"), "start"], env=_pg_env(), capture_output=True, text=True)
    if started.returncode != 0:
        raise RuntimeError(f"could not start the test PostgreSQL:\n{started.stdout}{started.stderr}")
    base = f"postgresql+psycopg://postgres@127.0.0.1:{port}"
    airflow_home = TEST_HOME / "airflow"
    airflow_home.mkdir(exist_ok=True)
    (airflow_home / "passwords.json").write_text('{"admin": "admin", "viewer": "viewer"}')
    os.environ.update(
        LINEAGE_HOME=str(TEST_HOME),
        LINEAGE_DATABASE_URL=f"{base}/lineage",
        LINEAGE_LOG_ROOT=str(TEST_HOME / "raw-events"),
        AIRFLOW_HOME=str(airflow_home),
        AIRFLOW__CORE__DAGS_FOLDER=str(ROOT / "dags"),
        AIRFLOW__CORE__PLUGINS_FOLDER=str(ROOT / "plugins"),
        AIRFLOW__CORE__LOAD_EXAMPLES="False",
        AIRFLOW__CORE__PARALLELISM="4",
        AIRFLOW__DATABASE__SQL_ALCHEMY_CONN=f"{base}/airflow",
        AIRFLOW__DATABASE__SQL_ALCHEMY_CONN_ASYNC=f"{base}/airflow",
        AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS="admin:admin,viewer:viewer",
        AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE=str(airflow_home / "passwords.json"),
        AIRFLOW__API_AUTH__JWT_SECRET="test-secret-" + uuid.uuid4().hex,
        AIRFLOW__API__SECRET_KEY="test-key-" + uuid.uuid4().hex,
        AIRFLOW_CONN_LINEAGE_WAREHOUSE=f"postgresql://postgres@127.0.0.1:{port}/lineage",
        DBT_SEND_ANONYMOUS_USAGE_STATS="False",
        GX_ANALYTICS_ENABLED="false",
        PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "plugins"), os.environ.get("PYTHONPATH", "")]),
    )
    from warehouse.migrate import apply_migrations

    apply_migrations(f"{base}/{TEMPLATE_DB}")


def pytest_unconfigure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput") or not TEST_HOME.exists():
        return
    subprocess.run([str(ROOT / "scripts" / "pg.sh"), "destroy"], env=_pg_env(), check=False, capture_output=True)
    shutil.rmtree(TEST_HOME, ignore_errors=True)


def admin_url(database: str = "postgres") -> str:
    return f"postgresql://postgres@127.0.0.1:{os.environ['LINEAGE_PG_PORT']}/{database}"


def create_scratch_db(prefix: str, template: str | None = TEMPLATE_DB) -> str:
    """A new database (a clone of the migrated template, or empty); returns its SQLAlchemy URL."""
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    clone = f" template {template}" if template else ""
    with psycopg.connect(admin_url(), autocommit=True) as conn:
        conn.execute(f'create database "{name}"{clone}')  # type: ignore[arg-type]
    return admin_url(name).replace("postgresql://", "postgresql+psycopg://", 1)


def drop_scratch_db(url: str) -> None:
    name = url.rsplit("/", 1)[1]
    with psycopg.connect(admin_url(), autocommit=True) as conn:
        conn.execute(f'drop database if exists "{name}" with (force)')  # type: ignore[arg-type]


@pytest.fixture
def warehouse_db() -> Iterator[str]:
    """A fresh, migrated warehouse database (cloned from the migrated template); yields its URL."""
    url = create_scratch_db("wh")
    yield url
    drop_scratch_db(url)


@pytest.fixture
def empty_db() -> Iterator[str]:
    """A fresh database with no schema; yields its URL."""
    url = create_scratch_db("empty", template=None)
    yield url
    drop_scratch_db(url)


@pytest.fixture(scope="session")
def spark():  # type: ignore[no-untyped-def]
    """The one local Spark session of the test run."""
    from spark_jobs.session import build_session

    session = build_session("lineage-tests")
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture
def log_root(tmp_path: Path) -> Path:
    root = tmp_path / "raw-events"
    root.mkdir()
    return root


@pytest.fixture
def settings_for(log_root: Path):  # type: ignore[no-untyped-def]
    """Settings pointing at ``log_root`` and a given database URL."""
    from lineage.settings import Settings

    def build(database_url: str, **extra: str) -> Settings:
        env = {**os.environ, "LINEAGE_LOG_ROOT": str(log_root), "LINEAGE_DATABASE_URL": database_url, **extra}
        return Settings.from_env(env)

    return build

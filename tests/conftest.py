"""Session-wide real parts: one PostgreSQL cluster, one Spark session, one Airflow home; and
the test tiers.

The environment is set in ``pytest_configure``, before any test module imports Airflow, so
Airflow reads its config (home, metadata DB, dags and plugins folders) from the test's values.
Only the port is chosen there: the cluster starts on first use (``tests.services``), so the
unit tier (``make test-fast``) starts no PostgreSQL, Spark or Airflow.

Each directory under ``tests/`` is a tier and its tests carry the tier's markers (``TIERS``);
tests that use the ``spark`` or a database fixture also carry ``spark`` or ``warehouse``.
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.ports import free_port
from harness.postgres import Cluster
from tests import services
from tests.services import TEMPLATE_DB as TEMPLATE_DB
from tests.services import admin_url as admin_url
from tests.services import create_scratch_db as create_scratch_db
from tests.services import drop_scratch_db as drop_scratch_db

logging.getLogger("py4j").setLevel(logging.WARNING)  # its shutdown message races the closed log streams
ROOT = Path(__file__).resolve().parents[1]
TEST_HOME = ROOT / ".local" / "tests" / f"session-{os.getpid()}"

TIERS: dict[str, tuple[str, ...]] = {  # directory under tests/ -> the markers of its tests
    "unit": ("unit",),
    "spark": ("spark",),
    "warehouse": ("warehouse",),
    "dags": ("airflow", "warehouse"),
    "plugin": ("plugin", "airflow", "warehouse"),
    "pages": ("browser", "plugin", "airflow", "warehouse"),
    "reliability": ("reliability", "plugin", "airflow", "warehouse"),
    "install": ("install", "airflow", "warehouse"),
}
# End-to-end tests: a built wheel in a fresh venv, a browser, a Spark standalone cluster, managed
# PostgreSQL (TLS, PgBouncer), whole DAG runs (`airflow dags test`), crashes of real processes.
# `make test-services` runs everything else (the middle loop); `make test` runs both.
E2E_TIERS = {"install", "pages"}
E2E_FILES = {
    "spark/test_standalone_cluster.py", "warehouse/test_managed_postgres.py",
    "dags/test_compaction_dag.py", "dags/test_namespace_cleanup_dag.py", "dags/test_openlineage_producers.py",
    "reliability/test_crashes.py", "reliability/test_trust_boundary_late_files.py",
    "reliability/test_trust_boundary_program_ids.py",
}
FIXTURE_MARKERS = {"spark": "spark", "postgres": "warehouse", "warehouse_db": "warehouse", "empty_db": "warehouse"}
NEEDS_POSTGRES = ("warehouse", "airflow")  # Airflow's metadata DB lives in the same cluster


def pytest_configure(config: pytest.Config) -> None:
    _main_module_named()
    port = free_port()
    TEST_HOME.mkdir(parents=True, exist_ok=True)
    os.chmod(TEST_HOME, 0o755)
    dbt = services.configure(TEST_HOME, port)
    if dbt is not None:
        os.environ.update(LINEAGE_DBT_BIN=str(dbt), LINEAGE_TEST_DBT_SERVER="1")
    base = f"postgresql+psycopg://postgres@127.0.0.1:{port}"
    airflow_home = TEST_HOME / "airflow"
    airflow_home.mkdir(exist_ok=True)
    (airflow_home / "passwords.json").write_text('{"admin": "admin", "viewer": "viewer"}')
    os.environ.update(
        LINEAGE_HOME=str(TEST_HOME),
        LINEAGE_PG_PORT=str(port),
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
        AIRFLOW__API_AUTH__JWT_SECRET="test-secret-" + uuid.uuid4().hex * 2,  # 64+ bytes: HS512 wants them
        AIRFLOW__API__SECRET_KEY="test-key-" + uuid.uuid4().hex,
        AIRFLOW_CONN_LINEAGE_WAREHOUSE=f"postgresql://postgres@127.0.0.1:{port}/lineage",
        DBT_SEND_ANONYMOUS_USAGE_STATS="False",
        GX_ANALYTICS_ENABLED="false",
        PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "plugins"), os.environ.get("PYTHONPATH", "")]),
    )


def _main_module_named() -> None:
    """Give a pytest-xdist worker's ``__main__`` a file name. A worker's main module is built from
    a string (execnet), with neither ``__spec__`` nor ``__file__``; ``pyspark.sql.connect``, which
    Great Expectations imports, takes such a main module for a doctest run and calls
    ``sys.exit(0)`` when Spark Connect's extras are missing (they are: this project does not use
    Spark Connect)."""
    main = sys.modules["__main__"]
    if getattr(main, "__spec__", None) is None and not hasattr(main, "__file__"):
        main.__file__ = sys.argv[0]


def pytest_unconfigure(config: pytest.Config) -> None:
    airflow_support = sys.modules.get("tests.airflow_support")  # imported by the tests that run Airflow
    if airflow_support is not None:
        airflow_support.stop_airflow_server()
    services.stop()
    shutil.rmtree(TEST_HOME, ignore_errors=True)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark each test with its directory's tier, and with what its fixtures start."""
    tests_dir = ROOT / "tests"
    for item in items:
        if not item.path.is_relative_to(tests_dir):
            continue
        relative = item.path.relative_to(tests_dir)
        tier = relative.parts[0] if len(relative.parts) > 1 else ""
        if tier not in TIERS:
            raise pytest.UsageError(f"{item.nodeid}: tests/{tier or relative} is no tier; put the test in one of "
                                    f"tests/{{{','.join(TIERS)}}} or add its directory to TIERS in tests/conftest.py")
        fixtures = getattr(item, "fixturenames", ())
        if tier == "unit" and (started := sorted(set(fixtures) & FIXTURE_MARKERS.keys())):
            raise pytest.UsageError(f"{item.nodeid} uses {', '.join(started)}: not a unit test; move it to the "
                                    "directory of what it needs")
        markers = {*TIERS[tier], *(marker for name, marker in FIXTURE_MARKERS.items() if name in fixtures)}
        if tier in E2E_TIERS or relative.as_posix() in E2E_FILES:
            markers.add("e2e")
        for marker in sorted(markers):
            item.add_marker(marker)
    # The end-to-end files first (each file's tests in order): they are the longest, so xdist's
    # workers (scripts/test.sh: --no-loadscope-reorder) start them at once and finish together on
    # the short ones, instead of one worker running a DAG test while the other has nothing left.
    items.sort(key=lambda item: item.get_closest_marker("e2e") is None)


@pytest.fixture(scope="session")
def postgres() -> Cluster:
    """The session's PostgreSQL cluster, started by the first test that needs it."""
    return services.postgres()


@pytest.fixture(autouse=True)
def _postgres_for_its_tiers(request: pytest.FixtureRequest) -> None:
    # Tests of these tiers reach the cluster through environment variables (Airflow's metadata
    # DB, the warehouse connection), not only through fixtures.
    if any(request.node.get_closest_marker(marker) for marker in NEEDS_POSTGRES):
        request.getfixturevalue("postgres")


@pytest.fixture(scope="session")
def airflow_api(postgres: Cluster) -> Iterator[str]:
    """A real ``airflow api-server`` for the session, started on first use: Airflow's REST API,
    where the plugin's app under a TestClient records asset events; yields its base URL."""
    from tests.airflow_support import api_server

    with api_server(services.admin_url("lineage")) as base:
        yield base


@pytest.fixture
def warehouse_db(postgres: Cluster) -> Iterator[str]:
    """A fresh, migrated warehouse database (cloned from the migrated template); yields its URL."""
    url = create_scratch_db("wh")
    yield url
    drop_scratch_db(url)


@pytest.fixture
def empty_db(postgres: Cluster) -> Iterator[str]:
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

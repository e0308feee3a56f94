"""The test session's PostgreSQL cluster, started on first use rather than at start-up, so the
unit tier runs without it.

``conftest`` chooses the port and home in ``pytest_configure`` (cheap: the environment must be
set before any test module imports Airflow); the first test that needs the cluster starts it
and migrates the template database that scratch warehouses are cloned from (about 3 s). The
state lives here, not in ``conftest``: pytest imports ``conftest`` once under that name and
test modules import it again as ``tests.conftest``, and the started cluster must be one object.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

from harness.dbt_server import DbtServer
from harness.postgres import Cluster

TEMPLATE_DB = "lineage_template"
#: A test cluster's data is thrown away with it: no server crash is ever tested (the crash tests kill
#: clients and the api-server, never PostgreSQL), so its commits and checkpoints need not wait for
#: the disk. Each commit's fsync was a good part of the suite's waiting on a shared machine.
NO_SYNC = os.environ.get("LINEAGE_TEST_PG_OPTIONS", "-c fsync=off -c synchronous_commit=off -c full_page_writes=off")

_configured: Cluster | None = None
_started = False
_dbt: DbtServer | None = None


def configure(home: Path, port: int) -> Path | None:
    """Where the session's cluster will live; starts nothing. Returns the ``dbt`` to run, the
    warm fork server's client (``harness/dbt_server.py``), unless the caller chose a dbt
    (``LINEAGE_DBT_BIN``) or none (``LINEAGE_TEST_DBT_SERVER=0``): None then. A pytest-xdist
    worker inherits its controller's client (``LINEAGE_TEST_DBT_SERVER=1``) and makes its own."""
    global _configured, _dbt
    _configured = Cluster(home=home, port=port, databases=("lineage", "airflow", TEMPLATE_DB), options=NO_SYNC)
    server = os.environ.get("LINEAGE_TEST_DBT_SERVER")
    if server == "0" or (os.environ.get("LINEAGE_DBT_BIN") and server != "1"):
        return None
    _dbt = DbtServer(home / "dbt-server")
    return _dbt.write_client()


def postgres() -> Cluster:
    """The session's cluster, started (and its template migrated) by the first caller."""
    global _started
    if _configured is None:
        raise RuntimeError("tests.services.configure() was not called (tests/conftest.py's pytest_configure)")
    if not _started:
        from warehouse.db.migrate import apply_migrations

        _configured.start()
        _started = True
        if _dbt is not None:
            _dbt.start()  # in the background: dbt's imports overlap the template's migration
        apply_migrations(_configured.url(TEMPLATE_DB))
    return _configured


def stop() -> None:
    """Stop the dbt server, and stop and delete the cluster, if this session started them."""
    global _started
    if _dbt is not None:
        _dbt.stop()
    if _configured is not None and _started:
        _configured.destroy()
        _started = False


def admin_url(database: str = "postgres") -> str:
    """The superuser's libpq URL of ``database`` in the session's cluster (started if need be)."""
    return postgres().url(database)


def create_scratch_db(prefix: str, template: str | None = TEMPLATE_DB) -> str:
    """A new database (a clone of the migrated template, or empty); returns its SQLAlchemy URL."""
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    postgres().create_database(name, template)
    return admin_url(name).replace("postgresql://", "postgresql+psycopg://", 1)


def drop_scratch_db(url: str) -> None:
    postgres().drop_database(url.rsplit("/", 1)[1])

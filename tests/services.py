"""The test session's PostgreSQL cluster, started on first use rather than at start-up, so the
unit tier runs without it.

``conftest`` chooses the port and home in ``pytest_configure`` (cheap: the environment must be
set before any test module imports Airflow); the first test that needs the cluster starts it
and migrates the template database that scratch warehouses are cloned from (about 3 s). The
state lives here, not in ``conftest``: pytest imports ``conftest`` once under that name and
test modules import it again as ``tests.conftest``, and the started cluster must be one object.
"""

from __future__ import annotations

import uuid
from pathlib import Path

from harness.postgres import Cluster

TEMPLATE_DB = "lineage_template"

_configured: Cluster | None = None
_started = False


def configure(home: Path, port: int) -> None:
    """Where the session's cluster will live; starts nothing."""
    global _configured
    _configured = Cluster(home=home, port=port, databases=("lineage", "airflow", TEMPLATE_DB))


def postgres() -> Cluster:
    """The session's cluster, started (and its template migrated) by the first caller."""
    global _started
    if _configured is None:
        raise RuntimeError("tests.services.configure() was not called (tests/conftest.py's pytest_configure)")
    if not _started:
        from warehouse.db.migrate import apply_migrations

        _configured.start()
        _started = True
        apply_migrations(_configured.url(TEMPLATE_DB))
    return _configured


def stop_postgres() -> None:
    """Stop and delete the cluster if this session started it."""
    global _started
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

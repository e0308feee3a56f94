"""Where the warehouse is inside Airflow: its connection ``lineage_warehouse``. The stores take
a URL and never ask Airflow; the DAGs' tasks and the plugin ask here."""

from __future__ import annotations

from lineage.errors import WarehouseConnectionError
from lineage.settings import WAREHOUSE_CONN_ID, Settings


def warehouse_url(*, inside_airflow: bool | None = None) -> str:
    """The warehouse URL as DAG tasks and the plugin see it.

    Inside Airflow the warehouse is the Airflow connection ``lineage_warehouse`` (created by the
    setup, or given as ``AIRFLOW_CONN_LINEAGE_WAREHOUSE``) and nothing else: when it cannot be
    read, ``WarehouseConnectionError`` names it, so a task fails (rather than compact into one
    database and apply field lineage into another) and the API answers 503. Outside Airflow the
    settings' URL (``LINEAGE_DATABASE_URL``, or the embedded PostgreSQL) is used.

    "Inside Airflow" is decided from facts, never from a failed lookup:

    - ``inside_airflow=True``: the caller knows it runs in an Airflow component (the plugin,
      loaded by the api-server, passes it);
    - ``inside_airflow=None`` (default): inside when Airflow is installed and a task is running
      in this process (``airflow.sdk.get_current_context()`` finds its context: a worker's task
      runner, ``dag.test()``, ``airflow tasks test``); outside otherwise (a plain script, even
      with Airflow installed, or no Airflow at all);
    - ``inside_airflow=False``: outside, whatever the process.
    """
    if inside_airflow is None:
        inside_airflow = _in_airflow_task()
    if not inside_airflow:
        return Settings.from_env().database_url
    try:
        from airflow.sdk import Connection

        found = Connection.get(WAREHOUSE_CONN_ID)
    except Exception as exc:  # any failure to read it (not defined, secrets backend down) is the same answer
        raise WarehouseConnectionError(
            f"the Airflow connection {WAREHOUSE_CONN_ID!r} cannot be read ({type(exc).__name__}: {exc}); define it "
            f"(airflow connections add {WAREHOUSE_CONN_ID} --conn-uri postgresql://..., or "
            f"AIRFLOW_CONN_{WAREHOUSE_CONN_ID.upper()})") from exc
    uri: str = found.get_uri()
    return uri.replace("postgres://", "postgresql://", 1)


def _in_airflow_task() -> bool:
    try:
        from airflow.sdk import get_current_context
    except ImportError:
        return False
    try:
        get_current_context()
    except RuntimeError:  # "no context was found": not inside a running task
        return False
    return True

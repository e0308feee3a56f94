"""Connections to the warehouse database."""

from __future__ import annotations

import psycopg

from lineage.settings import Settings, libpq_url


def connect(database_url: str | None = None, *, autocommit: bool = False) -> psycopg.Connection:
    """Open a psycopg connection to ``database_url`` (default: the settings' URL)."""
    url = database_url or Settings.from_env().database_url
    return psycopg.connect(libpq_url(url), autocommit=autocommit)


def warehouse_url() -> str:
    """The warehouse URL as DAGs and the plugin see it.

    They reach the warehouse through the Airflow connection ``lineage_warehouse`` (created by
    the setup, or given as ``AIRFLOW_CONN_LINEAGE_WAREHOUSE``); outside Airflow, or when the
    connection is not defined, the settings' URL is used.
    """
    from lineage.settings import WAREHOUSE_CONN_ID

    try:
        from airflow.sdk import Connection
    except ImportError:
        return Settings.from_env().database_url
    try:
        conn = Connection.get(WAREHOUSE_CONN_ID)
    except Exception:
        return Settings.from_env().database_url
    return conn.get_uri().replace("postgres://", "postgresql://", 1)

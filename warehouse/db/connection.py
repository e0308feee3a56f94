"""Connections to the warehouse database (where the warehouse is inside Airflow:
``warehouse.pipeline.airflow_connection``)."""

from __future__ import annotations

import psycopg

from lineage.settings import Settings, connect_options, libpq_url


def connect(database_url: str | None = None, *, autocommit: bool = False) -> psycopg.Connection:
    """Open a psycopg connection to ``database_url`` (default: the settings' URL); behind
    transaction pooling (``?pool_mode=transaction``) it never prepares a statement."""
    url = database_url or Settings.from_env().database_url
    return psycopg.connect(libpq_url(url), autocommit=autocommit, **connect_options(url))

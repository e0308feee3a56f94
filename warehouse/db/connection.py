"""Connections to the warehouse database (where the warehouse is inside Airflow:
``warehouse.pipeline.airflow_connection``)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import psycopg

from lineage.settings import Settings, connect_options, libpq_url


def connect(database_url: str | None = None, *, autocommit: bool = False) -> psycopg.Connection:
    """Open a psycopg connection to ``database_url`` (default: the settings' URL); behind
    transaction pooling (``?pool_mode=transaction``) it never prepares a statement."""
    url = database_url or Settings.from_env().database_url
    return psycopg.connect(libpq_url(url), autocommit=autocommit, **connect_options(url))


@contextmanager
def without_jit(conn: psycopg.Connection) -> Iterator[None]:
    """A transaction without JIT compilation, for reads that take milliseconds: their row
    estimates (a LIKE, a walk's lateral joins) pass ``jit_above_cost`` and PostgreSQL would spend
    80-400 ms compiling them (measured on the search and lineage benchmarks)."""
    with conn.transaction():
        conn.execute("set local jit = off")
        yield

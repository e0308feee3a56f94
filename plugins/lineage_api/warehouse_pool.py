"""The api-server process's one pool of warehouse connections.

The app's lifespan opens it at start-up (Airflow 3 enters the lifespans of the FastAPI apps
plugins mount: ``airflow.api_fastapi.app.lifespan``) and closes it at shutdown; a host that
does not run the lifespan gets it on the first request. Each request takes one connection
(``lineage_api.deps``), shared by the caller's authorization and the route.

Every connection has a connect timeout and a statement timeout (behind transaction pooling,
the database role's: ``_session_setup``); a request waits at most the
connect timeout for a free connection. A warehouse that is down or slow therefore raises
psycopg's ``OperationalError`` within those bounds (the API answers 503), never hangs a worker.
The pool checks a connection before lending it, so a warehouse restart costs no failed request.

The warehouse is the Airflow connection ``lineage_warehouse``, read once when the pool opens:
when it cannot be read, each request answers 503 naming it until it can.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit

import psycopg
from psycopg import sql
from psycopg_pool import ConnectionPool, PoolTimeout

from lineage.errors import WarehouseConnectionError, WarehouseUnavailableError
from lineage.settings import WAREHOUSE_CONN_ID, Settings, connect_options, libpq_url, pool_mode, redact_url
from warehouse.pipeline.airflow_connection import warehouse_url

log = logging.getLogger(__name__)


def failure_kind(detail: str) -> str:
    """What a libpq failure says, in words that name no host, port, database or user."""
    text = detail.lower()
    if "refused" in text:
        return "it refuses connections (down, or not listening)"
    if "timeout" in text or "timed out" in text:
        return "it did not answer in time"
    if "authentication" in text or "password" in text or "no pg_hba.conf entry" in text:
        return "it refused the connection's credentials"
    if "does not exist" in text:
        return "the connection names a database or role that does not exist"
    if "ssl" in text or "certificate" in text:
        return "TLS could not be established"
    return "it cannot be reached"


def _airflow_warehouse_url() -> str:
    return warehouse_url(inside_airflow=True)  # the plugin runs inside Airflow's api-server


def _session_setup(url: str, settings: Settings) -> Callable[[psycopg.Connection], None] | None:
    """What each new connection runs: the statement timeout, set for the session. Behind
    transaction pooling (``?pool_mode=transaction``) a session ``SET`` would land on one server
    connection of the pooler and then time out whoever is handed it next (a compaction's merge,
    a dbt build); there the timeout belongs to the API's role (docs/configuration.md)."""
    if pool_mode(url) == "transaction":
        log.info("lineage API: behind transaction pooling the statement timeout is the database role's "
                 "(ALTER ROLE ... SET statement_timeout), not LINEAGE_API_STATEMENT_TIMEOUT_MS")
        return None
    statement_timeout = sql.SQL("set statement_timeout = {}").format(settings.api_statement_timeout_ms)

    def configure(conn: psycopg.Connection) -> None:
        conn.execute(statement_timeout)

    return configure


class WarehousePool:
    """A lazily opened ``psycopg_pool.ConnectionPool`` of autocommit connections."""

    def __init__(self, settings: Settings, url: Callable[[], str] = _airflow_warehouse_url) -> None:
        self._settings = settings
        self._url = url
        self._pool: ConnectionPool | None = None
        self._where = ""  # the warehouse's URL, once read
        self._lock = threading.Lock()

    def open(self) -> None:
        """Start connecting in the background; a connection that cannot be read is logged here
        and answered (503) by each request."""
        try:
            self._opened()
        except WarehouseConnectionError as error:
            log.error("lineage API: %s", error)

    def _opened(self) -> ConnectionPool:
        pool = self._pool
        if pool is not None:
            return pool
        with self._lock:
            if self._pool is None:
                url, settings = self._url(), self._settings
                self._where = url
                self._pool = ConnectionPool(
                    libpq_url(url), min_size=1, max_size=settings.api_pool_size, open=False, name="lineage-api",
                    kwargs={"autocommit": True, "connect_timeout": settings.api_connect_timeout_s,
                            **connect_options(url)},
                    configure=_session_setup(url, settings), check=ConnectionPool.check_connection,
                    timeout=settings.api_connect_timeout_s)
                self._pool.open(wait=False)
                log.info("lineage API: connection pool of up to %d to %s", settings.api_pool_size, redact_url(url))
            return self._pool

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection]:
        """One connection, back to the pool when the block ends; ``WarehouseUnavailableError``
        when none is free within the connect timeout."""
        pool = self._opened()
        try:
            conn = pool.getconn()
        except PoolTimeout as error:
            raise WarehouseUnavailableError(self._why_no_connection()) from error
        try:
            yield conn
        finally:
            pool.putconn(conn)

    def _why_no_connection(self) -> str:
        """Why the pool lent no connection: one direct attempt tells a warehouse that is down
        or refuses us from one whose connections are all busy. The answer names the Airflow
        connection id and the kind of failure only; its host, port, database and libpq's words
        go to the api-server's log (any caller may see a 503, ingest keys included)."""
        where = urlsplit(self._where)
        timeout = self._settings.api_connect_timeout_s
        try:
            psycopg.connect(libpq_url(self._where), connect_timeout=timeout, **connect_options(self._where)).close()
        except psycopg.OperationalError as error:
            detail = " ".join(line.strip() for line in str(error).splitlines()) or type(error).__name__
            log.warning("lineage API: the warehouse at %s:%s%s gave no connection: %s", where.hostname,
                        where.port or 5432, where.path, detail)
            reason = failure_kind(detail)
        else:
            reason = f"its {self._settings.api_pool_size} pooled connections are all busy"
        return (f"the warehouse (Airflow connection {WAREHOUSE_CONN_ID!r}) gave no connection within {timeout} s: "
                f"{reason}")

    def answers(self) -> bool:
        """True when the warehouse answers (the health check)."""
        try:
            with self.connection() as conn:
                conn.execute("select 1")
        except (psycopg.OperationalError, WarehouseUnavailableError):  # down, slow, or its connection unreadable
            return False
        return True

    def stats(self) -> dict[str, int]:
        """The pool's counters (``requests_num``: connections lent; ``connections_num``:
        connections opened); empty before it opens."""
        return self._pool.get_stats() if self._pool is not None else {}

    def close(self) -> None:
        with self._lock:
            if self._pool is not None:
                self._pool.close()
                self._pool = None

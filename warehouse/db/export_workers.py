"""``lineage export --out`` in parallel: worker processes render the window's chunks as JSON lines,
each in the same snapshot of the warehouse, as ``pg_dump -j`` does.

The calling process holds the export's snapshot (a REPEATABLE READ transaction, exported with
``pg_export_snapshot()``), reads the window's items through one server-side cursor and hands them
out a chunk at a time; each worker opens its own connection, adopts the snapshot (``SET
TRANSACTION SNAPSHOT``), reads the chunk's runs and renders them (``openlineage_export_store``);
the caller writes the chunks back in order. At most two chunks per worker are in flight, so
memory stays flat however long the window. One process renders at about 15,000 events/s on 2
cores (Python's interpreter lock); the workers use every core.
"""

from __future__ import annotations

import multiprocessing
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from datetime import datetime

import psycopg
from psycopg import sql

from lineage.openlineage.event import event_json
from warehouse.db.connection import connect
from warehouse.db.openlineage_export_store import (
    WINDOW_IN_ORDER,
    ExportCache,
    WindowItem,
    _assembled,
    _events,
    _read_chunk,
    declared_jobs,
    quiet_datasets,
    snapshot,
)
from warehouse.service.openlineage_export import dataset_event, job_event

_worker: tuple[psycopg.Connection, ExportCache] | None = None  # each worker's connection and cache


def _start_worker(database_url: str, snapshot_id: str) -> None:
    global _worker
    conn = connect(database_url, autocommit=False)
    conn.execute("set transaction isolation level repeatable read, read only")
    conn.execute(sql.SQL("set transaction snapshot {}").format(sql.Literal(snapshot_id)))  # before any query
    conn.execute("set local jit = off")  # as the snapshot's own transaction (openlineage_export_store.snapshot)
    _worker = (conn, ExportCache())


def _render(items: Sequence[WindowItem]) -> tuple[bytes, int]:
    """A chunk's events as JSON lines, and how many."""
    assert _worker is not None
    conn, cache = _worker
    items, kept, runs = _read_chunk(conn, items, cache)
    lines = [event_json(event) for event in _events(items, kept, _assembled(runs, cache))]
    return b"\n".join(lines) + b"\n" if lines else b"", len(lines)


def export_lines(conn: psycopg.Connection, database_url: str, after: datetime, before: datetime,
                 readable: Sequence[str] | None, *, workers: int = 2, chunk: int = 2000, datasets: bool = False
                 ) -> Iterator[tuple[bytes, int]]:
    """The window's events as JSON lines, a chunk at a time in order (bytes, events), rendered by
    ``workers`` processes in one snapshot taken on ``conn`` (autocommit, not in a transaction);
    with ``datasets``, first a DatasetEvent for each dataset no run of the window names."""
    params = {"after": after, "before": before, "all": readable is None, "readable": list(readable or [])}
    with snapshot(conn):
        if datasets:
            quiet = [event_json(dataset_event(item)) for item in quiet_datasets(conn, after, before, readable)]
            if quiet:
                yield b"\n".join(quiet) + b"\n", len(quiet)
        declared = [event_json(job_event(job)) for job in declared_jobs(conn, after, before, readable)]
        if declared:  # declared lineage: JobEvents
            yield b"\n".join(declared) + b"\n", len(declared)
        snapshot_id = conn.execute("select pg_export_snapshot()").fetchone()[0]  # type: ignore[index]
        context = multiprocessing.get_context("spawn")  # no inherited connection or thread
        with ProcessPoolExecutor(workers, mp_context=context, initializer=_start_worker,
                                 initargs=(database_url, snapshot_id)) as pool, \
                conn.cursor(name="openlineage_export_items") as cursor:
            cursor.execute(WINDOW_IN_ORDER, params)
            pending: deque[Future[tuple[bytes, int]]] = deque()
            while rows := cursor.fetchmany(chunk):
                pending.append(pool.submit(_render, [WindowItem(*row) for row in rows]))
                while len(pending) > 2 * workers:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()

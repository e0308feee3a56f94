"""Read-only queries the API answers from; routes stay parse -> query -> answer."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg.rows import dict_row

from warehouse.db import connect, warehouse_url


@contextmanager
def connection() -> Iterator[psycopg.Connection]:
    """An autocommit connection to the warehouse behind the ``lineage_warehouse`` Airflow connection."""
    with connect(warehouse_url(), autocommit=True) as conn:
        yield conn


def ping() -> bool:
    """True when the warehouse answers."""
    try:
        with connection() as conn:
            conn.execute("select 1")
    except psycopg.Error:  # the database is down or refuses us; anything else is a bug and raises
        return False
    return True


def recent_compactions(limit: int) -> list[dict[str, Any]]:
    with connection() as conn, conn.cursor(row_factory=dict_row) as cursor:
        cursor.execute(
            """select batch_id, dag_run_id, interval_end, started_at, finished_at, files, events_read,
                      events_compacted, duplicates, quarantined, runs_touched, accesses_added
               from lineage.compaction_batches order by finished_at desc limit %s""",
            (limit,),
        )
        return cursor.fetchall()


def warehouse_totals() -> dict[str, int]:
    with connection() as conn:
        row = conn.execute(
            """select (select count(*) from lineage.namespaces), (select count(*) from lineage.runs),
                      (select count(*) from lineage.dataset_accesses), (select count(*) from lineage.quarantine),
                      (select count(*) from lineage.compacted_files)"""
        ).fetchone()
    assert row is not None
    names = ("namespaces", "runs", "dataset_accesses", "quarantined_lines", "compacted_files")
    return dict(zip(names, row, strict=True))

"""Read-only queries the status routes and the home page answer from."""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg.rows import dict_row

from lineage.errors import WarehouseUnavailableError
from lineage_api.warehouse_pool import WarehousePool


def ping(pool: WarehousePool) -> bool:
    """True when the warehouse answers."""
    try:
        with pool.connection() as conn:
            conn.execute("select 1")
    except (psycopg.OperationalError, WarehouseUnavailableError):  # down, slow, or its connection unreadable
        return False
    return True


def recent_compactions(conn: psycopg.Connection, limit: int) -> list[dict[str, Any]]:
    with conn.cursor(row_factory=dict_row) as cursor:
        cursor.execute(
            """select batch_id, dag_run_id, interval_end, started_at, finished_at, files, events_read,
                      events_compacted, duplicates, quarantined, runs_touched, accesses_added
               from lineage.compaction_batches order by finished_at desc limit %s""",
            (limit,),
        )
        return cursor.fetchall()


def warehouse_totals(conn: psycopg.Connection) -> dict[str, int]:
    row = conn.execute(
        """select (select count(*) from lineage.namespaces), (select count(*) from lineage.runs),
                  (select count(*) from lineage.dataset_accesses), (select count(*) from lineage.quarantine),
                  (select count(*) from lineage.compacted_files)"""
    ).fetchone()
    assert row is not None
    names = ("namespaces", "runs", "dataset_accesses", "quarantined_lines", "compacted_files")
    return dict(zip(names, row, strict=True))

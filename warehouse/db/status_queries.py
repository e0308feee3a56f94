"""Read-only queries the status routes and the home page answer from (the health check's ping is
the pool's: ``lineage_api.warehouse_pool.WarehousePool.answers``)."""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg.rows import dict_row


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

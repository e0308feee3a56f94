"""Search index rows stay exact under concurrent USER and SYSTEM writes to one entity (issue 17),
on real PostgreSQL with the real dbt-built index.

A USER change and a SYSTEM change hold different metadata locks, (entity, USER) and (entity,
SYSTEM), so both refresh the entity's index rows at once. Before: the second refresh's delete
waited for the first's deleted rows, skipped them, did not see the first's new rows, and its
insert (a later snapshot) added every row again: the entity's index rows were duplicated. Now
one lock per entity's index refresh makes the second wait and read what the first committed."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import psycopg

from lineage.model.metadata_entity import dataset_entity
from warehouse.db import metadata_search, metadata_store
from warehouse.db.connection import connect
from warehouse.pipeline.dbt_build import build_marts

ORDERS = dataset_entity("default", "dataset", "orders")


def rows(conn: psycopg.Connection, relation: str) -> list[tuple[object, ...]]:
    found = conn.execute(f"select * from {relation} where entity_key = %s", (ORDERS.render(),)).fetchall()
    return sorted(found, key=repr)


def test_concurrent_user_and_system_writes_leave_exact_index_rows(warehouse_db: str) -> None:
    with connect(warehouse_db, autocommit=True) as conn:
        metadata_store.change(conn, ORDERS, "USER", "alice", add_tags=["seed"])
    build_marts(warehouse_db)  # the index exists, with the entity's rows
    with connect(warehouse_db) as user, ThreadPoolExecutor(1) as pool:
        user.execute("select 1")  # the USER change's transaction stays open until the commit below
        metadata_store.change(user, ORDERS, "USER", "alice", add_tags=["gold"])

        def system_change() -> None:
            with connect(warehouse_db, autocommit=True) as other:
                metadata_store.change(other, ORDERS, "SYSTEM", "a-run", add_properties={"format": "parquet"})

        racing = pool.submit(system_change)
        time.sleep(1.0)  # the SYSTEM change is waiting on the open USER change by now
        assert not racing.done()
        user.commit()
        racing.result(timeout=60)
    with connect(warehouse_db) as conn:
        index, expected = rows(conn, metadata_search.INDEX), rows(conn, metadata_search.TERMS_VIEW)
    assert index == expected, (len(index), len(expected))  # before: every row of the entity twice
    assert {"gold", "parquet"} <= {str(value) for row in index for value in row}

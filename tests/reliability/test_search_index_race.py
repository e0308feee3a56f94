"""The search index stays exact under concurrent writers, on real PostgreSQL with the real
dbt-built terms view (issues 17 and 29).

A USER change and a SYSTEM change hold different metadata locks, (entity, USER) and (entity,
SYSTEM), so both refresh the entity's index rows at once. Before: the second refresh's delete
waited for the first's deleted rows, skipped them, did not see the first's new rows, and its
insert (a later snapshot) added every row again: the entity's index rows were duplicated. Now
one lock per entity's index refresh makes the second wait and read what the first committed.

A rebuild (after each marts build) and an API write at once: the index had two writers, dbt
replacing the table and the API refreshing rows in it, and a post-hook re-applied the changes
recorded since the build began (with a margin for late commits). Now the store is the one
writer: a rebuild takes the index's lock exclusive and every refresh takes it shared, so a write
made during a rebuild waits and refreshes over the new rows, and a rebuild waits for the writes
in flight and reads what they committed."""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

import psycopg
import pytest

from lineage.model.metadata_entity import dataset_entity
from lineage.settings import Settings
from warehouse.db import entity_keys, metadata_search, metadata_store
from warehouse.db.connection import connect
from warehouse.pipeline.dbt_build import build_marts
from warehouse.service.search_query import parse_query

ORDERS = dataset_entity("default", "dataset", "orders")


def rows(conn: psycopg.Connection, relation: str, entity_key: str | None = ORDERS.render()) -> list[tuple[object, ...]]:
    """The relation's rows (of one entity unless ``entity_key`` is None), in a stable order."""
    where, params = ("where entity_key = %s", (entity_key,)) if entity_key else ("", ())
    found = conn.execute(f"select * from {relation} {where}", params).fetchall()
    return sorted(found, key=repr)


def values(found: list[tuple[object, ...]]) -> set[str]:
    return {str(value) for row in found for value in row}


def blocked(pool: ThreadPoolExecutor, work: Callable[[], object]) -> Future[object]:
    """``work`` started in ``pool``, checked to be waiting (on a lock) a second later."""
    racing = pool.submit(work)
    time.sleep(1.0)
    assert not racing.done()
    return racing


def change(url: str, scope: str, **what: object) -> Callable[[], object]:
    def run() -> object:
        with connect(url, autocommit=True) as conn:
            return metadata_store.change(conn, ORDERS, scope, "a-writer", **what)  # type: ignore[arg-type]
    return run


def test_concurrent_user_and_system_writes_leave_exact_index_rows(warehouse_db: str) -> None:
    with connect(warehouse_db, autocommit=True) as conn:
        metadata_store.change(conn, ORDERS, "USER", "alice", add_tags=["seed"])
    build_marts(warehouse_db)  # the index is built, with the entity's rows
    with connect(warehouse_db) as user, ThreadPoolExecutor(1) as pool:
        user.execute("select 1")  # the USER change's transaction stays open until the commit below
        metadata_store.change(user, ORDERS, "USER", "alice", add_tags=["gold"])
        racing = blocked(pool, change(warehouse_db, "SYSTEM", add_properties={"format": "parquet"}))
        user.commit()
        racing.result(timeout=60)
    with connect(warehouse_db) as conn:
        index, expected = rows(conn, metadata_search.INDEX), rows(conn, metadata_search.TERMS_VIEW)
    assert index == expected, (len(index), len(expected))  # before: every row of the entity twice
    assert {"gold", "parquet"} <= values(index)


def test_a_rebuild_holds_the_terms_view_s_rows_and_records_itself(warehouse_db: str) -> None:
    with connect(warehouse_db, autocommit=True) as conn:
        conn.execute("""insert into lineage.datasets (namespace, dataset_type, dataset)
                        values ('default', 'dataset', 's3://lake/sales/2026'), ('default', 'stream', 'clicks')""")
        entity_keys.fill_missing(conn)
        metadata_store.change(conn, ORDERS, "USER", "alice", add_tags=["PII"], add_properties={"owner": "Sales"})
        conn.execute("insert into lineage.search_index (entity_key, term) values ('stale', 'stale')")  # not the view's

    result = build_marts(warehouse_db, Settings.from_env(), command="run", select="+metadata_search_terms")

    with connect(warehouse_db) as conn:
        index, expected = rows(conn, metadata_search.INDEX, None), rows(conn, metadata_search.TERMS_VIEW, None)
        assert index == expected
        assert {"sales", "2026", "clicks", "orders", "pii", "Sales"} <= values(index)  # name parts, names, terms
        assert conn.execute(f"select row_count from {metadata_search.BUILD}").fetchall() == [(len(expected),)]
        assert result.search_rows == len(expected)
        assert metadata_search.search(conn, parse_query("tags:pii"))["total"] == 1


def test_a_write_committed_during_a_rebuild_is_in_the_index_after_it(warehouse_db: str) -> None:
    with connect(warehouse_db, autocommit=True) as conn:
        metadata_store.change(conn, ORDERS, "USER", "alice", add_tags=["seed"])
    build_marts(warehouse_db, Settings.from_env(), command="run", select="+metadata_search_terms")
    with connect(warehouse_db) as builder, ThreadPoolExecutor(1) as pool:
        builder.execute("select 1")  # the rebuild's transaction stays open until the commit below
        metadata_search.rebuild(builder)  # the old rows replaced, holding the index's lock
        racing = blocked(pool, change(warehouse_db, "USER", add_tags=["during"], remove_tags=["seed"]))
        builder.commit()
        assert racing.result(timeout=60) is not None
    with connect(warehouse_db) as conn:
        index, expected = rows(conn, metadata_search.INDEX), rows(conn, metadata_search.TERMS_VIEW)
    assert index == expected, (index, expected)
    assert "during" in values(index) and "seed" not in values(index)


@pytest.mark.parametrize("built", [False, True], ids=["first-rebuild", "later-rebuild"])
def test_a_rebuild_waits_for_a_write_in_flight_and_indexes_it(warehouse_db: str, built: bool) -> None:
    """The write's refresh holds the index's lock shared until it commits (before the first
    rebuild too, when it has nothing to refresh), so the rebuild reads what it committed."""
    build_marts(warehouse_db, Settings.from_env(), command="run", select="+metadata_search_terms")
    if not built:  # the view is there, the index never rebuilt
        with connect(warehouse_db, autocommit=True) as conn:
            conn.execute(f"delete from {metadata_search.BUILD}")

    def rebuild() -> int | None:
        with connect(warehouse_db) as conn:
            return metadata_search.rebuild(conn)

    with connect(warehouse_db) as writer, ThreadPoolExecutor(1) as pool:
        writer.execute("select 1")  # the write's transaction stays open until the commit below
        metadata_store.change(writer, ORDERS, "USER", "alice", add_tags=["in-flight"])
        rebuilding = blocked(pool, rebuild)
        writer.commit()
        assert rebuilding.result(timeout=60)
    with connect(warehouse_db) as conn:
        index, expected = rows(conn, metadata_search.INDEX), rows(conn, metadata_search.TERMS_VIEW)
    assert index == expected
    assert "in-flight" in values(index)

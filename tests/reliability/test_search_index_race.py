"""The search index stays exact under concurrent writers, on real PostgreSQL with the real
dbt-built terms view (issues 17 and 29).

A USER change and a SYSTEM change hold different metadata locks, (entity, USER) and (entity,
SYSTEM), so both refresh the entity's index rows at once. Before: the second refresh's delete
waited for the first's deleted rows, skipped them, did not see the first's new rows, and its
insert (a later snapshot) added every row again: the entity's index rows were duplicated. Now
one lock per entity's index refresh makes the second wait and read what the first committed.

A rebuild (after each marts build) and an API write at once: the index had two writers, dbt
replacing the table and the API refreshing rows in it, and a post-hook re-applied the changes
recorded since the build began (with a margin for late commits). Then the store became the one
writer, and a rebuild held the index's lock exclusive while it replaced every row: a write made
during it waited (33-50 s at the benchmark's size). Now a rebuild builds a table aside and swaps
it in, holding the lock only to start and to swap: the writes made meanwhile go to the live
table without waiting and note what they touched, which the rebuild re-derives in its table
before the swap. The tests hold a rebuild at its failpoints (``metadata_search.failpoint``
replaced) and check that writes complete meanwhile and that the index is exactly the view's
rows after it: writes in, a namespace deleted meanwhile gone."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor

import psycopg
import pytest

from lineage.model.metadata_entity import dataset_entity
from lineage.settings import Settings
from tests.conftest import create_scratch_db, drop_scratch_db
from warehouse.db import entity_keys, metadata_search, metadata_store, namespace_store
from warehouse.db.connection import connect
from warehouse.pipeline.dbt_build import build_marts
from warehouse.service.search_query import parse_query

ORDERS = dataset_entity("default", "dataset", "orders")


@pytest.fixture(scope="module")
def view_template() -> Iterator[str]:
    """A migrated warehouse where dbt built the terms view (and the staging views under it), once
    for the module: each test clones it (``view_db``) instead of running dbt again."""
    url = create_scratch_db("search_race_template")
    build_marts(url, Settings.from_env(), command="run", select="+metadata_search_terms")
    with connect(url, autocommit=True) as conn:
        conn.execute(f"delete from {metadata_search.BUILD}")  # as if the index had never been rebuilt
    yield url
    drop_scratch_db(url)


@pytest.fixture
def view_db(view_template: str) -> Iterator[str]:
    """A fresh clone of ``view_template``: the terms view there, the index never rebuilt."""
    url = create_scratch_db("search_race", template=view_template.rsplit("/", 1)[1])
    yield url
    drop_scratch_db(url)


def rebuilt(url: str) -> int | None:
    """The index rebuilt from the view, as a marts build does after dbt."""
    with connect(url, autocommit=True) as conn:
        return metadata_search.rebuild(conn)


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


def test_concurrent_user_and_system_writes_leave_exact_index_rows(view_db: str) -> None:
    warehouse_db = view_db
    with connect(warehouse_db, autocommit=True) as conn:
        metadata_store.change(conn, ORDERS, "USER", "alice", add_tags=["seed"])
    rebuilt(warehouse_db)  # the index is built, with the entity's rows
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


def shape(conn: psycopg.Connection) -> list[tuple[object, ...]]:
    """The index's columns (type, collation, null or not, default) and indexes (name, definition)."""
    return conn.execute(
        """select column_name, data_type, collation_name, is_nullable, column_default from information_schema.columns
           where table_schema = 'lineage' and table_name = 'search_index'
           union all
           select indexname, indexdef, null, null, null from pg_indexes
           where schemaname = 'lineage' and tablename = 'search_index'
           order by 1""").fetchall()


def test_a_rebuild_holds_the_terms_view_s_rows_and_records_itself(warehouse_db: str) -> None:
    with connect(warehouse_db, autocommit=True) as conn:
        conn.execute("""insert into lineage.datasets (namespace, dataset_type, dataset)
                        values ('default', 'dataset', 's3://lake/sales/2026'), ('default', 'stream', 'clicks')""")
        entity_keys.fill_missing(conn)
        metadata_store.change(conn, ORDERS, "USER", "alice", add_tags=["PII"], add_properties={"owner": "Sales"})
        conn.execute("insert into lineage.search_index (entity_key, term) values ('stale', 'stale')")  # not the view's
        migrated = shape(conn)

    result = build_marts(warehouse_db, Settings.from_env(), command="run", select="+metadata_search_terms")

    with connect(warehouse_db) as conn:
        index, expected = rows(conn, metadata_search.INDEX, None), rows(conn, metadata_search.TERMS_VIEW, None)
        assert index == expected
        assert shape(conn) == migrated  # the table built aside and swapped in: the same columns, indexes, names
        assert {"sales", "2026", "clicks", "orders", "pii", "Sales"} <= values(index)  # name parts, names, terms
        assert conn.execute(f"select row_count from {metadata_search.BUILD}").fetchall() == [(len(expected),)]
        assert result.search_rows == len(expected)
        assert metadata_search.search(conn, parse_query("tags:pii"))["total"] == 1


class HeldRebuild:
    """A rebuild running in ``pool``, held at its failpoint ``at`` (``metadata_search.failpoint``
    replaced) until ``release``; ``fail`` makes it raise there instead."""

    def __init__(self, url: str, pool: ThreadPoolExecutor, monkeypatch: pytest.MonkeyPatch, at: str,
                 fail: bool = False) -> None:
        self.reached, self.go_on = threading.Event(), threading.Event()

        def hold(name: str) -> None:
            if name == at and not self.reached.is_set():
                self.reached.set()
                assert self.go_on.wait(timeout=120)
                if fail:
                    raise RuntimeError(f"failed at {name}")

        monkeypatch.setattr(metadata_search, "failpoint", hold)
        self.running = pool.submit(self._rebuild, url)
        assert self.reached.wait(timeout=120), f"the rebuild never reached {at}"

    @staticmethod
    def _rebuild(url: str) -> int | None:
        with connect(url, autocommit=True) as conn:
            return metadata_search.rebuild(conn)

    def release(self) -> int | None:
        self.go_on.set()
        return self.running.result(timeout=120)


GONE = dataset_entity("gone", "dataset", "refunds")


def exact(url: str) -> list[tuple[object, ...]]:
    """The whole index, checked to hold exactly the terms view's rows, with no rebuild left."""
    with connect(url) as conn:
        index, expected = rows(conn, metadata_search.INDEX, None), rows(conn, metadata_search.TERMS_VIEW, None)
        assert index == expected, ([r for r in index if r not in expected], [r for r in expected if r not in index])
        for table in (metadata_search.REBUILD, metadata_search.PENDING):
            assert conn.execute(f"select count(*) from {table}").fetchone() == (0,), table
        for table in (metadata_search.ASIDE, metadata_search.RETIRED):
            assert conn.execute("select to_regclass(%s)", (table,)).fetchone() == (None,), table
    return index


def seeded(url: str) -> None:
    """ORDERS tagged ``seed``, GONE (namespace ``gone``) tagged ``refund``, the index built."""
    with connect(url, autocommit=True) as conn:
        namespace_store.create_namespace(conn, "gone", None)
        metadata_store.change(conn, ORDERS, "USER", "alice", add_tags=["seed"])
        metadata_store.change(conn, GONE, "USER", "alice", add_tags=["refund"])
    rebuilt(url)


def found(conn: psycopg.Connection, query: str) -> int:
    return int(metadata_search.search(conn, parse_query(query))["total"])


@pytest.mark.parametrize("at", ["search_index.started", "search_index.built"],
                         ids=["before-it-reads-the-view", "after-it-read-the-view"])
def test_writes_during_a_rebuild_do_not_wait_for_it_and_are_in_the_index_after_it(
        view_db: str, monkeypatch: pytest.MonkeyPatch, at: str) -> None:
    """The rebuild is held between its start and its table built aside (``started``: the writes
    are in the rows it reads and noted; ``built``: only noted). Meanwhile a tag change, a
    namespace deleted and one re-derived complete without waiting for it and show in searches
    at once; after it, the index is exactly the view's: the write in, the deleted namespace
    gone. The writer's statements are prepared (as a pooled connection's are after five runs):
    they reach the new table after the swap."""
    seeded(view_db)
    with connect(view_db, autocommit=True) as writer, ThreadPoolExecutor(1) as pool:
        writer.prepare_threshold = 0
        metadata_store.change(writer, ORDERS, "USER", "alice", add_tags=["before"])
        held = HeldRebuild(view_db, pool, monkeypatch, at)
        began = time.perf_counter()
        metadata_store.change(writer, ORDERS, "USER", "alice", add_tags=["during"], remove_tags=["seed"])
        assert namespace_store.delete_namespace(writer, "gone", "admin") is not None
        with writer.transaction():
            metadata_search.refresh_namespace(writer, "default")
        waited = time.perf_counter() - began
        assert not held.running.done() and waited < 10, waited  # done while the rebuild is held
        assert (found(writer, "tags:during"), found(writer, "tags:seed"), found(writer, "tags:refund")) == (1, 0, 0)
        assert held.release()
        metadata_store.change(writer, ORDERS, "USER", "alice", add_tags=["after"])
    index = exact(view_db)
    assert {"before", "during", "after"} <= values(index) and "seed" not in values(index)
    assert not any(row[1] == "gone" for row in index)  # namespace column: the deleted one did not come back


def test_a_rebuild_s_swap_waits_for_a_write_in_flight_and_indexes_it(
        view_db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write that began during the rebuild and is still open when the rebuild swaps: the
    swap waits for it to commit, then re-derives what it wrote."""
    seeded(view_db)
    with connect(view_db) as writer, ThreadPoolExecutor(1) as pool:
        held = HeldRebuild(view_db, pool, monkeypatch, "search_index.built")
        writer.execute("select 1")  # the write's transaction stays open until the commit below
        metadata_store.change(writer, ORDERS, "USER", "alice", add_tags=["in-flight"])
        held.go_on.set()
        time.sleep(1.0)
        assert not held.running.done()  # waiting for the write's lock
        writer.commit()
        assert held.release()
    assert "in-flight" in values(exact(view_db))


def test_rebuilds_at_once_run_one_after_the_other(view_db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    seeded(view_db)
    with ThreadPoolExecutor(2) as pool:
        held = HeldRebuild(view_db, pool, monkeypatch, "search_index.built")
        second = blocked(pool, lambda: HeldRebuild._rebuild(view_db))  # waits for the first
        change(view_db, "USER", add_tags=["between"])()
        assert held.release()
        assert second.result(timeout=120)
    assert "between" in values(exact(view_db))


def test_a_failed_rebuild_leaves_the_index_as_it_was(view_db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    seeded(view_db)
    with connect(view_db) as conn:
        before = rows(conn, metadata_search.INDEX, None)
    with ThreadPoolExecutor(1) as pool:
        held = HeldRebuild(view_db, pool, monkeypatch, "search_index.built", fail=True)
        change(view_db, "USER", add_tags=["during"])()
        with pytest.raises(RuntimeError, match=r"failed at search_index\.built"):
            held.release()
    with connect(view_db) as conn:  # the live table, refreshed by the write; the rebuild's mark cleared
        index = rows(conn, metadata_search.INDEX, None)
        assert "during" in values(index) and index != before
    assert "during" in values(exact(view_db))
    with connect(view_db, autocommit=True) as conn:
        assert metadata_search.rebuild(conn)
    exact(view_db)


@pytest.mark.parametrize("built", [False, True], ids=["first-rebuild", "later-rebuild"])
def test_a_rebuild_waits_for_a_write_in_flight_and_indexes_it(view_db: str, built: bool) -> None:
    """The write's refresh holds the index's lock shared until it commits (before the first
    rebuild too, when it has nothing to refresh), so the rebuild reads what it committed."""
    if built:  # else the view is there, the index never rebuilt
        rebuilt(view_db)

    def rebuild() -> int | None:
        with connect(view_db) as conn:
            return metadata_search.rebuild(conn)

    with connect(view_db) as writer, ThreadPoolExecutor(1) as pool:
        writer.execute("select 1")  # the write's transaction stays open until the commit below
        metadata_store.change(writer, ORDERS, "USER", "alice", add_tags=["in-flight"])
        rebuilding = blocked(pool, rebuild)
        writer.commit()
        assert rebuilding.result(timeout=60)
    with connect(view_db) as conn:
        index, expected = rows(conn, metadata_search.INDEX), rows(conn, metadata_search.TERMS_VIEW)
    assert index == expected
    assert "in-flight" in values(index)

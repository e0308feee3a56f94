from __future__ import annotations

from pathlib import Path

import pytest

from lineage.model.metadata_entity import dataset_entity
from lineage.settings import Settings
from warehouse.db import metadata_search, metadata_store
from warehouse.db.connection import connect
from warehouse.db.migrate import MIGRATIONS_DIR, MigrationError, apply_migrations, discover
from warehouse.pipeline.dbt_build import build_marts
from warehouse.service.search_query import parse_query


def test_migrations_apply_once_and_then_do_nothing(empty_db: str) -> None:
    applied = apply_migrations(empty_db)
    assert [m.version for m in applied] == [m.version for m in discover()]
    assert apply_migrations(empty_db) == []
    with connect(empty_db) as conn:
        tables = {row[0] for row in conn.execute(
            "select table_name from information_schema.tables where table_schema = 'lineage'").fetchall()}
        default = conn.execute("select namespace from lineage.namespaces").fetchall()
    assert {"programs", "datasets", "runs", "dataset_accesses", "quarantine", "compacted_files", "compaction_batches",
            "event_ids",
            "pending_events", "namespaces", "schema_migrations"} <= tables
    assert default == [("default",)]


def test_an_edited_applied_migration_is_refused(empty_db: str, tmp_path: Path) -> None:
    for migration in MIGRATIONS_DIR.glob("*.sql"):
        (tmp_path / migration.name).write_text(migration.read_text())
    apply_migrations(empty_db, tmp_path)
    first = sorted(tmp_path.glob("*.sql"))[0]
    first.write_text(first.read_text() + "\n-- edited\n")
    with pytest.raises(MigrationError, match="was edited after it was applied"):
        apply_migrations(empty_db, tmp_path)


def test_badly_named_migration_files_are_refused(tmp_path: Path) -> None:
    (tmp_path / "1_first.sql").write_text("select 1")
    with pytest.raises(MigrationError, match=r"is not named NNNN_name\.sql"):
        discover(tmp_path)


def test_migration_0022_takes_the_search_index_out_of_the_marts_and_rebuilds_it(warehouse_db: str) -> None:
    """A warehouse whose marts were built before 0022 (the index was dbt's table
    lineage_marts.metadata_search) has its index, owned by the store, at once after it, and the
    retired mart is gone rather than left stale."""
    with connect(warehouse_db, autocommit=True) as conn:
        metadata_store.change(conn, dataset_entity("default", "dataset", "orders"), "USER", "alice", add_tags=["pii"])
    build_marts(warehouse_db, Settings.from_env(), command="run", select="+metadata_search_terms")
    with connect(warehouse_db, autocommit=True) as conn:  # back to before 0022: dbt's table, no index of the store
        conn.execute("drop table lineage.search_index, lineage.search_index_build")
        conn.execute("create table lineage_marts.metadata_search as select * from lineage_marts.metadata_search_terms")
        conn.execute("delete from lineage.schema_migrations where version = 22")

    assert [m.version for m in apply_migrations(warehouse_db)] == [22]

    with connect(warehouse_db) as conn:
        assert conn.execute("select to_regclass('lineage_marts.metadata_search')").fetchone() == (None,)
        index = conn.execute(f"select * from {metadata_search.INDEX}").fetchall()
        assert sorted(index, key=repr) == sorted(
            conn.execute(f"select * from {metadata_search.TERMS_VIEW}").fetchall(), key=repr)
        assert metadata_search.search(conn, parse_query("tags:pii"))["total"] == 1

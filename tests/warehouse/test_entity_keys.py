"""Stored entity and grant keys, on real PostgreSQL and dbt: rendered by the core when rows
are written (or by migration 0011 for rows written before it), read as stored by the search
mart, so a caller with READ on a program finds its versions' metadata."""

from __future__ import annotations

import shutil
from pathlib import Path

from lineage.model.metadata_entity import from_path
from lineage.settings import Settings
from warehouse.db import metadata_search, metadata_store
from warehouse.db.connection import connect
from warehouse.db.migrate import MIGRATIONS_DIR, apply_migrations
from warehouse.pipeline.dbt_build import build_marts
from warehouse.service.authorization import Access, Privilege
from warehouse.service.search_query import parse_query

PROGRAM = "namespace=default,application=Shop,type=spark,program=Load"


def test_rows_written_before_migration_0011_get_their_keys_with_it(empty_db: str, tmp_path: Path) -> None:
    for migration in sorted(MIGRATIONS_DIR.glob("*.sql"))[:10]:
        shutil.copy(migration, tmp_path / migration.name)
    apply_migrations(empty_db, tmp_path)
    with connect(empty_db, autocommit=True) as conn:
        conn.execute("""insert into lineage.datasets (namespace, dataset_type, dataset)
                        values ('default', 'dataset', 'a,b=c\\d'), ('default', 'stream', 'clicks')""")
        conn.execute("""insert into lineage.programs (namespace, application, program_type, program)
                        values ('default', 'Shop', 'spark', 'Load')""")
        conn.execute("""insert into lineage.metadata (entity_key, entity_type, namespace, entity, scope, kind, key,
                                                      updated_by)
                        values (%s, 'program', 'default', %s, 'USER', 'tag', 'pii', 'test')""",
                     ("namespace=default,application=Shop,version=1.0,type=spark,program=Load",
                      '[{"key": "namespace", "value": "default"}, {"key": "application", "value": "Shop"},'
                      ' {"key": "version", "value": "1.0"}, {"key": "type", "value": "spark"},'
                      ' {"key": "program", "value": "Load"}]'))

    shutil.copy(sorted(MIGRATIONS_DIR.glob("*.sql"))[10], tmp_path)  # 0011 alone, whatever follows it
    assert [m.version for m in apply_migrations(empty_db, tmp_path)] == [11]

    with connect(empty_db) as conn:
        assert conn.execute("select entity_key, entity from lineage.datasets order by dataset_key").fetchall() == [
            ("namespace=default,dataset=a\\,b\\=c\\\\d",
             [{"key": "namespace", "value": "default"}, {"key": "dataset", "value": "a,b=c\\d"}]),
            ("namespace=default,stream=clicks",
             [{"key": "namespace", "value": "default"}, {"key": "stream", "value": "clicks"}]),
        ]
        assert conn.execute("select entity_key, application_key from lineage.programs").fetchall() == [
            (PROGRAM, "namespace=default,application=Shop")]
        assert conn.execute("select grant_key from lineage.metadata").fetchall() == [(PROGRAM,)]


def test_rows_written_before_migration_0021_get_their_node_ids_with_it(empty_db: str, tmp_path: Path) -> None:
    earlier = [path for path in sorted(MIGRATIONS_DIR.glob("*.sql")) if int(path.name[:4]) < 21]
    for migration in earlier:
        shutil.copy(migration, tmp_path / migration.name)
    apply_migrations(empty_db, tmp_path)
    with connect(empty_db, autocommit=True) as conn:
        conn.execute("""insert into lineage.datasets (namespace, dataset_type, dataset)
                        values ('default', 'dataset', 's3://lake/a.b'), ('default', 'stream', 'clicks')""")
        conn.execute("""insert into lineage.programs (namespace, application, program_type, program)
                        values ('default', 'a.b', 'openlineage', 'c'), ('default', 'a', 'openlineage', 'b.c'),
                               ('default', 'Shop', 'spark', 'Load')""")

    shutil.copy(MIGRATIONS_DIR / "0021_node_ids.sql", tmp_path)
    assert [m.version for m in apply_migrations(empty_db, tmp_path)] == [21]

    with connect(empty_db) as conn:
        assert conn.execute("select data_id from lineage.datasets order by dataset_key").fetchall() == [
            ("dataset.default.s3://lake/a.b",), ("stream.default.clicks",)]
        programs = conn.execute("select program_id, run_id_prefix from lineage.programs order by program_key")
        assert programs.fetchall() == [
            ("openlineage.default.a\\.b.c", "default.a\\.b.openlineage.c."),
            ("openlineage.default.a.b.c", "default.a.openlineage.b\\.c."),
            ("spark.default.Shop.Load", "default.Shop.spark.Load.")]


def test_read_on_a_program_finds_its_versions_metadata_in_search(warehouse_db: str) -> None:
    versioned = from_path("default", ["apps", "Shop", "spark", "Load"], version="1.0")
    other = from_path("default", ["apps", "Shop", "spark", "Other"], version="1.0")
    application = from_path("default", ["apps", "Shop"], version="1.0")
    with connect(warehouse_db, autocommit=True) as conn:
        for subject in (versioned, other, application):
            metadata_store.change(conn, subject, "USER", "test", add_tags=["nightly"])
    build_marts(warehouse_db, Settings.from_env(), command="run", select="+metadata_search_terms")
    run = from_path("default", ["apps", "Shop", "spark", "Load", "runs", "r1"], version="1.0")
    with connect(warehouse_db, autocommit=True) as conn:  # written after the build: the API's refresh path
        metadata_store.change(conn, run, "USER", "test", add_tags=["nightly"])
    bob = Access("bob", grants={PROGRAM: Privilege.READ})

    with connect(warehouse_db, autocommit=True) as conn:
        found = metadata_search.search(conn, parse_query("tags:nightly"), readable=bob.readable())

    assert sorted(r["entity"]["type"] for r in found["results"]) == ["program", "program_run"]
    assert {tuple((p["key"], p["value"]) for p in r["entity"]["details"]) for r in found["results"]} == {
        versioned.parts, run.parts}
    assert found["total"] == 2

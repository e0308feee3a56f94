from __future__ import annotations

from pathlib import Path

import pytest

from warehouse.db.connection import connect
from warehouse.db.migrate import MIGRATIONS_DIR, MigrationError, apply_migrations, discover


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

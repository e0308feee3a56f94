"""Versioned warehouse migrations: ``python -m warehouse.db.migrate``.

Migrations are the numbered ``.sql`` files in ``warehouse/db/migrations``, applied in order, each
in its own transaction together with its record in ``lineage.schema_migrations``. An applied
migration is never edited: the migrator stores each file's checksum and refuses to run when
an applied file has changed. A PostgreSQL advisory lock, taken in each migration's
transaction, serialises concurrent migrators.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import psycopg

from lineage.errors import MigrationError
from lineage.settings import redact_url
from warehouse.db import entity_keys, metadata_search, openlineage_export_store, quarantine_store, schema_store
from warehouse.db.connection import connect

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
_FILE_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")
_LOCK_KEY = 7_265_401  # arbitrary, constant: the advisory lock all migrators share


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.sql.encode("utf-8")).hexdigest()


# Data a migration needs that only the core can compute, filled in the migration's transaction
# (22: the search index, from the terms view when dbt built it, so search answers on across it;
# 24: what each kept schema version changed from the one before).
_BACKFILLS: dict[int, Callable[[psycopg.Connection], object]] = {
    11: entity_keys.backfill, 21: entity_keys.backfill_ids, 22: metadata_search.rebuild_in_place,
    24: schema_store.backfill_changes, 41: openlineage_export_store.backfill_parts,
    42: openlineage_export_store.slim_skeletons, 43: quarantine_store.forget_old_partial_line_keys}


def discover(directory: Path = MIGRATIONS_DIR) -> list[Migration]:
    """The migrations in ``directory``, ordered by version."""
    found: list[Migration] = []
    for path in sorted(directory.glob("*.sql")):
        match = _FILE_NAME.match(path.name)
        if not match:
            raise MigrationError(f"migration file {path.name!r} is not named NNNN_name.sql")
        found.append(Migration(int(match.group(1)), match.group(2), path.read_text("utf-8")))
    versions = [m.version for m in found]
    if len(set(versions)) != len(versions):
        raise MigrationError(f"two migration files share a version: {versions}")
    return found


def apply_migrations(database_url: str | None = None, directory: Path = MIGRATIONS_DIR) -> list[Migration]:
    """Apply every pending migration; returns those applied now (none when up to date).

    Each migration runs in a transaction of its own that first takes the migrators' advisory
    lock (transaction level) and reads what is applied, so concurrent migrators apply each
    migration once, in order; a lock held by a transaction also stays right behind a pooler in
    transaction mode (PgBouncer), where a session lock would be taken on one server connection
    and released (or not) on another."""
    migrations = discover(directory)
    applied_now: list[Migration] = []
    with connect(database_url, autocommit=True) as conn:
        while True:
            with conn.transaction():
                pending = _next_pending(conn, migrations)
                if pending is None:
                    break
                conn.execute(pending.sql)  # trusted repository files
                if pending.version in _BACKFILLS:
                    _BACKFILLS[pending.version](conn)
                conn.execute("insert into lineage.schema_migrations (version, name, checksum) values (%s, %s, %s)",
                             (pending.version, pending.name, pending.checksum))
            applied_now.append(pending)
    return applied_now


def _next_pending(conn: psycopg.Connection, migrations: list[Migration]) -> Migration | None:
    """In the open transaction: take the migrators' lock, make the ledger, check that no applied
    migration was edited, and return the first one not applied (None when up to date)."""
    conn.execute("select pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
    conn.execute("create schema if not exists lineage")
    conn.execute(
        """create table if not exists lineage.schema_migrations (
               version integer primary key, name text not null,
               checksum text not null, applied_at timestamptz not null default now())"""
    )
    applied: dict[int, str] = dict(conn.execute("select version, checksum from lineage.schema_migrations").fetchall())
    for migration in migrations:
        if migration.version in applied and applied[migration.version] != migration.checksum:
            raise MigrationError(f"migration {migration.version:04d}_{migration.name} was edited after it was "
                                 "applied; add a new migration instead")
    return next((m for m in migrations if m.version not in applied), None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Apply the warehouse migrations.")
    parser.add_argument("--database-url", help="default: LINEAGE_DATABASE_URL or the embedded cluster")
    args = parser.parse_args(argv)
    try:
        applied = apply_migrations(args.database_url)
    except MigrationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    from lineage.settings import Settings

    target = redact_url(args.database_url or Settings.from_env().database_url)
    if applied:
        for migration in applied:
            print(f"applied {migration.version:04d}_{migration.name}")
    else:
        print(f"warehouse schema up to date ({target})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

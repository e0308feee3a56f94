"""Versioned warehouse migrations: ``python -m warehouse.migrate``.

Migrations are the numbered ``.sql`` files in ``warehouse/migrations``, applied in order, each
in its own transaction together with its record in ``lineage.schema_migrations``. An applied
migration is never edited: the migrator stores each file's checksum and refuses to run when
an applied file has changed. A PostgreSQL advisory lock serialises concurrent migrators.
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
from warehouse import entity_keys
from warehouse.db import connect

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


# Data a migration needs that only the core can compute, filled in the migration's transaction.
_BACKFILLS: dict[int, Callable[[psycopg.Connection], None]] = {11: entity_keys.backfill}


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
    """Apply every pending migration; returns those applied now (none when up to date)."""
    migrations = discover(directory)
    applied_now: list[Migration] = []
    with connect(database_url, autocommit=True) as conn:
        conn.execute("select pg_advisory_lock(%s)", (_LOCK_KEY,))
        try:
            conn.execute("create schema if not exists lineage")
            conn.execute(
                """create table if not exists lineage.schema_migrations (
                       version integer primary key, name text not null,
                       checksum text not null, applied_at timestamptz not null default now())"""
            )
            applied: dict[int, str] = dict(
                conn.execute("select version, checksum from lineage.schema_migrations").fetchall())
            for migration in migrations:
                if migration.version in applied:
                    if applied[migration.version] != migration.checksum:
                        raise MigrationError(
                            f"migration {migration.version:04d}_{migration.name} was edited after it was "
                            "applied; add a new migration instead"
                        )
                    continue
                with conn.transaction():
                    conn.execute(migration.sql)  # trusted repository files
                    if migration.version in _BACKFILLS:
                        _BACKFILLS[migration.version](conn)
                    conn.execute(
                        "insert into lineage.schema_migrations (version, name, checksum) values (%s, %s, %s)",
                        (migration.version, migration.name, migration.checksum),
                    )
                applied_now.append(migration)
        finally:
            conn.execute("select pg_advisory_unlock(%s)", (_LOCK_KEY,))
    return applied_now


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

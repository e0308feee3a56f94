"""Ingest keys in the warehouse: create (the key is returned once), list, revoke, and the
principal a presented key stands for."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import psycopg
from psycopg.rows import class_row

from warehouse.service.ingest_keys import key_hash, new_key, shown_part


@dataclass(frozen=True, slots=True)
class IngestKeyRow:
    """A key as listed: never the key itself (only its hash is stored), its first characters."""

    key_id: int
    name: str
    principal: str
    shown_part: str
    created_by: str
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None
    revoked_by: str | None


_LISTED = "key_id, name, principal, shown_part, created_by, created_at, last_used_at, revoked_at, revoked_by"


def create(conn: psycopg.Connection, name: str, principal: str, created_by: str) -> tuple[IngestKeyRow, str]:
    """A new key for ``principal``: (its listing row, the key itself, never stored)."""
    key = new_key()
    with conn.cursor(row_factory=class_row(IngestKeyRow)) as cursor:
        row = cursor.execute(
            f"""insert into lineage.ingest_keys (name, principal, key_hash, shown_part, created_by)
                values (%s, %s, %s, %s, %s) returning {_LISTED}""",
            (name, principal, key_hash(key), shown_part(key), created_by)).fetchone()
    assert row is not None
    return row, key


def list_keys(conn: psycopg.Connection, principal: str | None = None) -> list[IngestKeyRow]:
    """Every key (revoked ones too), newest first, optionally of one principal."""
    with conn.cursor(row_factory=class_row(IngestKeyRow)) as cursor:
        return cursor.execute(f"""select {_LISTED} from lineage.ingest_keys
                                  where %(who)s::text is null or principal = %(who)s
                                  order by key_id desc""", {"who": principal}).fetchall()


def revoke(conn: psycopg.Connection, key_id: int, revoked_by: str) -> IngestKeyRow | None:
    """Revoke a key (it stays listed); None when there is no such key. Revoking twice keeps the
    first revocation."""
    with conn.cursor(row_factory=class_row(IngestKeyRow)) as cursor:
        return cursor.execute(
            f"""update lineage.ingest_keys
                set revoked_at = coalesce(revoked_at, now()), revoked_by = coalesce(revoked_by, %s)
                where key_id = %s returning {_LISTED}""", (revoked_by, key_id)).fetchone()


def principal_of(conn: psycopg.Connection, key: str) -> str | None:
    """The principal of a valid (known, not revoked) key, marking it used; None otherwise."""
    row = conn.execute("""update lineage.ingest_keys set last_used_at = now()
                          where key_hash = %s and revoked_at is null returning principal""",
                       (key_hash(key),)).fetchone()
    return None if row is None else str(row[0])

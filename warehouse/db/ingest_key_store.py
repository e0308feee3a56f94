"""Ingest keys in the warehouse: create (the key is returned once), list, revoke, and the
principal a presented key stands for."""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg.rows import dict_row

from warehouse.service.ingest_keys import key_hash, new_key, shown_part


def create(conn: psycopg.Connection, name: str, principal: str, created_by: str) -> tuple[dict[str, Any], str]:
    """A new key for ``principal``: (its listing row, the key itself, never stored)."""
    key = new_key()
    with conn.cursor(row_factory=dict_row) as cursor:
        row = cursor.execute(
            """insert into lineage.ingest_keys (name, principal, key_hash, shown_part, created_by)
               values (%s, %s, %s, %s, %s) returning *""",
            (name, principal, key_hash(key), shown_part(key), created_by)).fetchone()
    assert row is not None
    return _listed(row), key


def list_keys(conn: psycopg.Connection, principal: str | None = None) -> list[dict[str, Any]]:
    """Every key (revoked ones too), newest first, optionally of one principal."""
    with conn.cursor(row_factory=dict_row) as cursor:
        rows = cursor.execute("""select * from lineage.ingest_keys
                                 where %(who)s::text is null or principal = %(who)s
                                 order by key_id desc""", {"who": principal}).fetchall()
    return [_listed(row) for row in rows]


def revoke(conn: psycopg.Connection, key_id: int, revoked_by: str) -> dict[str, Any] | None:
    """Revoke a key (it stays listed); None when there is no such key. Revoking twice keeps the
    first revocation."""
    with conn.cursor(row_factory=dict_row) as cursor:
        row = cursor.execute(
            """update lineage.ingest_keys
               set revoked_at = coalesce(revoked_at, now()), revoked_by = coalesce(revoked_by, %s)
               where key_id = %s returning *""", (revoked_by, key_id)).fetchone()
    return None if row is None else _listed(row)


def principal_of(conn: psycopg.Connection, key: str) -> str | None:
    """The principal of a valid (known, not revoked) key, marking it used; None otherwise."""
    row = conn.execute("""update lineage.ingest_keys set last_used_at = now()
                          where key_hash = %s and revoked_at is null returning principal""",
                       (key_hash(key),)).fetchone()
    return None if row is None else str(row[0])


def _listed(row: dict[str, Any]) -> dict[str, Any]:
    def seconds(value: Any) -> int | None:
        return None if value is None else int(value.timestamp())

    return {"id": row["key_id"], "name": row["name"], "principal": row["principal"], "key": row["shown_part"] + "…",
            "createdBy": row["created_by"], "createdAt": seconds(row["created_at"]),
            "lastUsedAt": seconds(row["last_used_at"]), "revokedAt": seconds(row["revoked_at"]),
            "revokedBy": row["revoked_by"]}

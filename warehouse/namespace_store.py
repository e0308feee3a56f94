"""Namespaces in the warehouse (seed 003): list, read, create."""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg.rows import dict_row


def _rendered(row: dict[str, Any]) -> dict[str, Any]:
    return {"name": row["namespace"], "description": row["description"],
            "createdAt": int(row["created_at"].timestamp())}


def list_namespaces(conn: psycopg.Connection) -> list[dict[str, Any]]:
    with conn.cursor(row_factory=dict_row) as cursor:
        rows = cursor.execute("select namespace, description, created_at from lineage.namespaces "
                              "order by namespace").fetchall()
    return [_rendered(row) for row in rows]


def get_namespace(conn: psycopg.Connection, namespace: str) -> dict[str, Any] | None:
    with conn.cursor(row_factory=dict_row) as cursor:
        row = cursor.execute("select namespace, description, created_at from lineage.namespaces "
                             "where namespace = %s", (namespace,)).fetchone()
    return _rendered(row) if row else None


def create_namespace(conn: psycopg.Connection, namespace: str, description: str | None) -> bool:
    """Create ``namespace``; True when it is new. An existing one keeps its creation time and
    takes the new description when one is given."""
    created = conn.execute("insert into lineage.namespaces (namespace, description) values (%s, coalesce(%s, '')) "
                           "on conflict (namespace) do nothing", (namespace, description)).rowcount == 1
    if not created and description is not None:
        conn.execute("update lineage.namespaces set description = %s where namespace = %s", (description, namespace))
    return created

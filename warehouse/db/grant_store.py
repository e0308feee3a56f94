"""Grants in the warehouse (the *Metadata Custom Entities and Authorization* design): who holds
which privilege where, and a caller's Access."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import dict_row

from warehouse.db import namespace_guard
from warehouse.service.authorization import Access, Privilege


def access_for(conn: psycopg.Connection, principal: str, instance_admin: bool) -> Access:
    """Everything ``principal`` was granted (one query per request)."""
    if instance_admin:
        return Access(principal, instance_admin=True)
    rows = conn.execute("select entity_key, privilege from lineage.grants where principal = %s",
                        (principal,)).fetchall()
    return Access(principal, grants={key: Privilege[privilege] for key, privilege in rows})


def put_grant(conn: psycopg.Connection, principal: str, entity_key: str, namespace: str | None,
              privilege: Privilege, granted_by: str, born: datetime | None = None) -> None:
    """Give ``principal`` exactly ``privilege`` on ``entity_key`` (replacing what they held
    there). In a namespace, behind the race guard (``namespace_guard.guard_write``: the
    incarnation ``born`` the caller checked, held until the grant is stored): a grant never
    outlives a DELETE of its namespace into a namespace re-created under the same name."""
    with conn.transaction():
        if namespace is not None:
            namespace_guard.guard_write(conn, namespace, born)
        conn.execute(
            """insert into lineage.grants (principal, entity_key, namespace, privilege, granted_by)
               values (%s, %s, %s, %s, %s)
               on conflict (principal, entity_key) do update
               set privilege = excluded.privilege, granted_by = excluded.granted_by, granted_at = now()""",
            (principal, entity_key, namespace, privilege.name, granted_by))


def revoke(conn: psycopg.Connection, principal: str, entity_key: str) -> bool:
    """Take back what ``principal`` holds on ``entity_key``; False when there was nothing."""
    return conn.execute("delete from lineage.grants where principal = %s and entity_key = %s",
                        (principal, entity_key)).rowcount == 1


def list_grants(conn: psycopg.Connection, namespace: str | None = None, principal: str | None = None
                ) -> list[dict[str, Any]]:
    """Grants, optionally of one namespace (its own and its entities') and/or one principal."""
    with conn.cursor(row_factory=dict_row) as cursor:
        rows = cursor.execute(
            """select principal, entity_key, privilege, granted_by, granted_at from lineage.grants
               where (%(ns)s::text is null or namespace = %(ns)s)
                 and (%(who)s::text is null or principal = %(who)s)
               order by entity_key, principal""", {"ns": namespace, "who": principal}).fetchall()
    return [{"principal": r["principal"], "entity": r["entity_key"], "privilege": r["privilege"],
             "grantedBy": r["granted_by"], "grantedAt": int(r["granted_at"].timestamp())} for r in rows]


def forget_namespace(conn: psycopg.Connection, namespace: str) -> int:
    """Drop the grants of a deleted namespace, so a namespace re-created under its name starts bare."""
    return conn.execute("delete from lineage.grants where namespace = %s", (namespace,)).rowcount

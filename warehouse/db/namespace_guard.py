"""The namespace race guard (the *System Applications (CDAP 6.0)* design), for reads and writes:
one rule, one home.

Deleting a namespace is immediate; its records stay until the cleanup DAG removes them
(``warehouse.pipeline.namespace_cleanup``). A namespace re-created meanwhile is a new *incarnation*
(its row's ``created_at``): while a deletion of it awaits its cleanup, every record written
before that creation belongs to an old incarnation.

- Reads hide those records: ``visible_since`` is the time before which they were written.
- Writes go through ``guard_write`` (or ``guard_entity``) inside their transaction, before
  they read the state they change. It locks the namespace row (``FOR KEY SHARE``), so a DELETE
  waits for a write in flight to commit (and the cleanup then removes what it wrote), and a
  write that comes after the DELETE finds the namespace gone, or re-created: the incarnation
  the request checked (``born``) is not the current one, and the write is refused (404) rather
  than landing in a namespace the caller was never authorized in. ``guard_entity`` then drops
  the entity's rows of old incarnations (tags, properties, schema versions, watermarks), so the
  write starts from exactly what a brand-new namespace holds: a re-added tag is a change, the
  change record's ``previous`` is empty, a schema is checked against nothing and numbered from 1.

Rows a write stores carry the warehouse's clock (``clock_timestamp()``), taken after the lock:
later than the current incarnation's creation, earlier than a DELETE that waited for it.
"""

from __future__ import annotations

from datetime import datetime

import psycopg
from psycopg import sql

from lineage.errors import NotFoundError
from lineage.model.metadata_entity import MetadataEntity

# Rows of one entity that an old incarnation wrote: (table, the column saying when it was written).
_ENTITY_ROWS = (("lineage.metadata", "updated_at"),
                ("lineage.dataset_schema_versions", "created_at"),
                ("lineage.metadata_event_times", "written_at"))


def visible_since(conn: psycopg.Connection, namespace: str) -> datetime | None:
    """While a deletion of ``namespace`` awaits its cleanup, the time before which its records
    are hidden (its re-creation time, or infinity while it does not exist); None otherwise."""
    row = conn.execute("select visible_since from lineage.namespace_guards where namespace = %s",
                       (namespace,)).fetchone()
    return row[0] if row else None


def incarnation(conn: psycopg.Connection, namespace: str) -> datetime | None:
    """The current incarnation of ``namespace`` (its creation time), None when it does not exist."""
    row = conn.execute("select created_at from lineage.namespaces where namespace = %s", (namespace,)).fetchone()
    return row[0] if row else None


def guard_write(conn: psycopg.Connection, namespace: str, born: datetime | None = None) -> datetime | None:
    """Hold ``namespace`` for a write until the open transaction ends: raises ``NotFoundError``
    when it is gone, or when it is not the incarnation ``born`` (checked earlier by the
    request); returns the time before which its records belong to an old incarnation (None:
    nothing is pending cleanup)."""
    if conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE:
        raise RuntimeError("guard_write holds its lock until the transaction ends: call it inside one")
    row = conn.execute(
        """select n.created_at, g.visible_since from lineage.namespaces n
           left join lineage.namespace_guards g using (namespace)
           where n.namespace = %s for key share of n""", (namespace,)).fetchone()
    if row is None or (born is not None and row[0] != born):
        raise NotFoundError(f"namespace {namespace!r} not found")
    stale_before: datetime | None = row[1]
    return stale_before


def guard_entity(conn: psycopg.Connection, subject: MetadataEntity, born: datetime | None = None) -> None:
    """``guard_write`` on the entity's namespace (none for an external resource), then drop the
    entity's rows of old incarnations, so the write sees what a brand-new namespace holds."""
    if subject.namespace is None:
        return
    stale_before = guard_write(conn, subject.namespace, born)
    if stale_before is not None:
        for table, written in _ENTITY_ROWS:
            conn.execute(sql.SQL("delete from {} where entity_key = %s and {} < %s").format(
                sql.SQL(table), sql.Identifier(written)), (subject.render(), stale_before))

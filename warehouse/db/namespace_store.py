"""Namespaces in the warehouse (the *System Applications (CDAP 6.0)* design): list, read, create,
delete, and the race guard.

Deleting is cheap and immediate; the cleanup DAG removes the records afterwards
(``warehouse.pipeline.namespace_cleanup``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import psycopg
from psycopg.rows import class_row

from lineage.errors import DefaultNamespaceError
from lineage.model.namespaces import DEFAULT_NAMESPACE
from warehouse.db import grant_store, metadata_search
from warehouse.db.namespace_guard import visible_since as visible_since  # the race guard's home


@dataclass(frozen=True, slots=True)
class NamespaceRow:
    """A namespace: its name, description ('' when none was given) and creation time."""

    namespace: str
    description: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class DeletionRow:
    """A recorded deletion of a namespace, and its cleanup: when it finished and the rows it
    removed per table (both None until then)."""

    deletion_id: int
    namespace: str
    deleted_at: datetime
    deleted_by: str
    cleaned_at: datetime | None
    removed: dict[str, int] | None


_DELETION_COLUMNS = "deletion_id, namespace, deleted_at, deleted_by, cleaned_at, removed"


def list_namespaces(conn: psycopg.Connection) -> list[NamespaceRow]:
    with conn.cursor(row_factory=class_row(NamespaceRow)) as cursor:
        return cursor.execute("select namespace, description, created_at from lineage.namespaces "
                              "order by namespace").fetchall()


def get_namespace(conn: psycopg.Connection, namespace: str) -> NamespaceRow | None:
    with conn.cursor(row_factory=class_row(NamespaceRow)) as cursor:
        return cursor.execute("select namespace, description, created_at from lineage.namespaces "
                              "where namespace = %s", (namespace,)).fetchone()


def create_namespace(conn: psycopg.Connection, namespace: str, description: str | None) -> bool:
    """Create ``namespace``; True when it is new. An existing one keeps its creation time and
    takes the new description when one is given."""
    created = conn.execute("insert into lineage.namespaces (namespace, description) values (%s, coalesce(%s, '')) "
                           "on conflict (namespace) do nothing", (namespace, description)).rowcount == 1
    if not created and description is not None:
        conn.execute("update lineage.namespaces set description = %s where namespace = %s", (description, namespace))
    return created


def delete_namespace(conn: psycopg.Connection, namespace: str, deleted_by: str) -> DeletionRow | None:
    """Delete ``namespace`` (None when unknown): the namespace row goes, a deletion is recorded
    for the cleanup DAG, and its search entries leave the index at once. Its other records stay
    until the cleanup; reads hide them and writes drop them (``warehouse.db.namespace_guard``).
    Grants on it are dropped at once. A write in flight on the namespace holds its row
    (``namespace_guard.guard_write``): the delete waits for it, so nothing it wrote survives."""
    if namespace == DEFAULT_NAMESPACE:
        raise DefaultNamespaceError("the default namespace cannot be deleted")
    with conn.transaction():
        row = conn.execute("delete from lineage.namespaces where namespace = %s returning created_at",
                           (namespace,)).fetchone()
        if row is None:
            return None
        with conn.cursor(row_factory=class_row(DeletionRow)) as cursor:
            deletion = cursor.execute(
                f"""insert into lineage.namespace_deletions (namespace, namespace_created_at, deleted_by)
                    values (%s, %s, %s) returning {_DELETION_COLUMNS}""",
                (namespace, row[0], deleted_by)).fetchone()
        metadata_search.forget_namespace(conn, namespace)
        grant_store.forget_namespace(conn, namespace)
    assert deletion is not None
    return deletion


def deletions(conn: psycopg.Connection, namespace: str | None = None) -> list[DeletionRow]:
    """Recorded deletions, newest first, with their cleanup state."""
    with conn.cursor(row_factory=class_row(DeletionRow)) as cursor:
        return cursor.execute(
            f"""select {_DELETION_COLUMNS}
                from lineage.namespace_deletions where %(ns)s::text is null or namespace = %(ns)s
                order by deletion_id desc""", {"ns": namespace}).fetchall()


def main(argv: list[str] | None = None) -> int:
    """``python -m warehouse.db.namespace_store create NAME [--description TEXT]`` or ``list``: for
    setup scripts (the API does the same behind authorization)."""
    import argparse

    from lineage.model.namespaces import check_description, check_namespace
    from warehouse.db.connection import connect

    parser = argparse.ArgumentParser(description="Create or list namespaces in the warehouse.")
    parser.add_argument("action", choices=["create", "list"])
    parser.add_argument("name", nargs="?")
    parser.add_argument("--description")
    args = parser.parse_args(argv)
    with connect(autocommit=True) as conn:
        if args.action == "create":
            if not args.name:
                parser.error("create needs a namespace name")
            description = check_description(args.description) if args.description is not None else None
            created = create_namespace(conn, check_namespace(args.name), description)
            print(f"namespace {args.name!r} {'created' if created else 'already exists'}")
        for found in list_namespaces(conn) if args.action == "list" else []:
            print(f"{found.namespace}\t{found.description}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

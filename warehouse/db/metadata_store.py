"""Metadata in the warehouse: reads, changes with their change records, history.

Every change runs in one transaction under a lock on (entity, scope), reads the state before,
applies the change, reads the state after and records the diff: concurrent writers are
serialized and lose nothing, and a write is visible to the next read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

import orjson
import psycopg
from psycopg.rows import class_row

from lineage.model.metadata_entity import MetadataEntity, program_run_entity
from lineage.model.metadata_values import SCOPES, MetadataState, Scope, check_entity_state, diff, state
from warehouse.db import metadata_search, namespace_guard
from warehouse.service.authorization import grant_key

ALL = None  # remove every tag / property of the scope
UPDATED_BY = "last-updated-by"  # the SYSTEM property naming the run of a dataset's latest write


@dataclass(frozen=True, slots=True)
class ChangeRecordRow:
    """One recorded change of an entity's metadata in one scope: the state before and after and
    the diff, when and by whom (a principal, or the run of a program)."""

    change_id: int
    scope: Scope
    previous: MetadataState
    updated: MetadataState
    additions: MetadataState
    deletions: MetadataState
    changed_at: datetime
    updater: str


def _entities_read(entity: MetadataEntity) -> list[str]:
    """The entity keys whose metadata shows on ``entity``: an application version also shows
    what was added to the application without a version (the *Metadata Custom Entities and Authorization* design)."""
    keys = [entity.render()]
    if entity.value("version") is not None:
        keys.append(entity.without_version().render())
    return keys


def read(conn: psycopg.Connection, entity: MetadataEntity, scope: str | None = None,
         since: datetime | None = None) -> dict[str, MetadataState]:
    """Per scope (both, or the one asked), the entity's tags and properties;
    with ``since``, only what was written at or after it (the *System Applications (CDAP 6.0)* design's race guard)."""
    rows = conn.execute(
        """select scope, kind, key, value from lineage.metadata where entity_key = any(%(keys)s)
           and (%(since)s::timestamptz is null or updated_at >= %(since)s)
           order by scope, kind, key""", {"keys": _entities_read(entity), "since": since}).fetchall()
    result = {}
    for name in ([scope] if scope else SCOPES):
        tags = [key for s, kind, key, _ in rows if s == name and kind == "tag"]
        properties = {key: value for s, kind, key, value in rows if s == name and kind == "property"}
        if name == "SYSTEM":
            properties.update(access_properties(conn, entity, since))
        result[name] = state(tags, properties)
    return result


def access_properties(conn: psycopg.Connection, entity: MetadataEntity, since: datetime | None = None
                      ) -> dict[str, str]:
    """SYSTEM properties a dataset or stream gets from the access log (the *Metadata and Data
    Discovery* design, R11-R13):
    ``creation-time`` (first access), ``last-update-time`` and ``last-updated-by`` (the run of
    the latest write), derived when read so they always agree with the lineage."""
    if entity.type not in ("dataset", "stream") or len(entity.parts) != 2:
        return {}
    row = conn.execute(
        """select min(a.accessed_at),
                  (array_agg(a.accessed_at order by a.accessed_at desc)
                     filter (where a.access in ('write', 'read_write')))[1],
                  (array_agg(a.run_key order by a.accessed_at desc)
                     filter (where a.access in ('write', 'read_write')))[1]
           from lineage.datasets d
           join lineage.dataset_accesses a on a.namespace = d.namespace and a.dataset_key = d.dataset_key
           where d.namespace = %s and d.dataset_type = %s and d.dataset = %s
             and (%s::timestamptz is null or a.accessed_at >= %s)""",
        (entity.namespace, entity.type, entity.parts[1][1], since, since)).fetchone()
    if row is None or row[0] is None:
        return {}
    found = {"creation-time": row[0].astimezone(UTC).isoformat()}
    if row[1] is not None:
        run = conn.execute(
            """select p.namespace, p.application, p.program_type, p.program, r.run_id
               from lineage.runs r join lineage.programs p on p.program_key = r.program_key where r.run_key = %s""",
            (row[2],)).fetchone()
        assert run is not None
        found["last-update-time"] = row[1].astimezone(UTC).isoformat()
        found[UPDATED_BY] = program_run_entity(*run).render()
    return found


def lock(conn: psycopg.Connection, entity: MetadataEntity, scope: str, born: datetime | None = None) -> None:
    """Begin a change to (entity, scope) in the open transaction: behind the namespace race guard
    (its namespace held, the incarnation ``born`` checked, rows of old incarnations dropped:
    ``warehouse.db.namespace_guard``), then serialized with other changes until the transaction ends."""
    namespace_guard.guard_entity(conn, entity, born)
    conn.execute("select pg_advisory_xact_lock(hashtextextended(%s, 0))", (f"{scope}|{entity.render()}",))


def current_state(conn: psycopg.Connection, entity: MetadataEntity, scope: str) -> MetadataState:
    """The entity's own tags and properties in ``scope`` (not those inherited from a versionless app)."""
    rows = conn.execute("select kind, key, value from lineage.metadata where entity_key = %s and scope = %s",
                        (entity.render(), scope)).fetchall()
    return state([k for kind, k, _ in rows if kind == "tag"], {k: v for kind, k, v in rows if kind == "property"})


def change(conn: psycopg.Connection, entity: MetadataEntity, scope: Scope, updater: str, *,
           add_properties: Mapping[str, str] | None = None, add_tags: Iterable[str] | None = None,
           remove_properties: Iterable[str] | Literal[False] | None = False,
           remove_tags: Iterable[str] | Literal[False] | None = False,
           born: datetime | None = None) -> ChangeRecordRow | None:
    """Apply one change in one transaction and record it; returns the change record, or None
    when nothing changed. ``remove_*=ALL`` (None) removes every one of that kind. ``born``: the
    namespace's incarnation the caller checked (``NotFoundError`` when it is not the current one)."""
    key = entity.render()
    with conn.transaction():
        lock(conn, entity, scope, born)
        previous = current_state(conn, entity, scope)
        base = {"key": key, "type": entity.type, "ns": entity.namespace, "grant": grant_key(entity),
                "entity": orjson.dumps(entity.to_dict()["details"]).decode(), "scope": scope, "by": updater}
        for kind, removal in (("property", remove_properties), ("tag", remove_tags)):
            if removal is False:
                continue
            if removal is ALL:
                conn.execute("delete from lineage.metadata where entity_key = %s and scope = %s and kind = %s",
                             (key, scope, kind))
            else:
                conn.execute("""delete from lineage.metadata where entity_key = %s and scope = %s and kind = %s
                                and key = any(%s)""", (key, scope, kind, list(removal)))
        rows = [(name, value, "property") for name, value in (add_properties or {}).items()]
        rows += [(tag, "", "tag") for tag in (add_tags or [])]
        for name, value, kind in rows:
            conn.execute(
                """insert into lineage.metadata (entity_key, entity_type, namespace, entity, grant_key, scope, kind,
                                                 key, value, updated_by, updated_at)
                   values (%(key)s, %(type)s, %(ns)s, %(entity)s, %(grant)s, %(scope)s, %(kind)s, %(name)s, %(value)s,
                           %(by)s, clock_timestamp())
                   on conflict (entity_key, scope, kind, key) do update
                   set value = excluded.value, updated_at = excluded.updated_at, updated_by = excluded.updated_by
                   where lineage.metadata.value is distinct from excluded.value""",
                {**base, "kind": kind, "name": name, "value": value})
        updated = current_state(conn, entity, scope)
        check_entity_state(updated)  # over a limit: the transaction rolls back, nothing changed
        additions, deletions = diff(previous, updated)
        if not any(additions.values()) and not any(deletions.values()):
            return None
        record = conn.execute(
            """insert into lineage.metadata_changes (entity_key, entity, scope, previous, updated, additions,
                                                     deletions, updater)
               values (%s, %s, %s, %s, %s, %s, %s, %s)
               returning change_id, changed_at""",
            (key, base["entity"], scope, *(orjson.dumps(v).decode()
                                           for v in (previous, updated, additions, deletions)), updater),
        ).fetchone()
        metadata_search.refresh(conn, [key])
    assert record is not None
    change_id, changed_at = record
    return ChangeRecordRow(change_id, scope, previous, updated, additions, deletions, changed_at, updater)


def history(conn: psycopg.Connection, entity: MetadataEntity, start: datetime, end: datetime
            ) -> list[ChangeRecordRow]:
    """The entity's change records in [start, end), oldest first."""
    with conn.cursor(row_factory=class_row(ChangeRecordRow)) as cursor:
        return cursor.execute(
            """select change_id, scope, previous, updated, additions, deletions, changed_at, updater
               from lineage.metadata_changes
               where entity_key = %s and changed_at >= %s and changed_at < %s order by change_id""",
            (entity.render(), start, end)).fetchall()

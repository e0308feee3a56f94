"""Dataset schemas in the warehouse (the *Datasets 3.5.0* design, "Updatable Datasets"): the current schema, the
compatibility check every declared update passes, and the versions kept.

The current schema is the dataset's SYSTEM property ``schema``, written through the one
``metadata_store.change`` (change record, search index); each update that changes it adds a row
to ``lineage.dataset_schema_versions`` with its source, its event time and what it changed from
the version before. A *declared* schema (a program's ``record_schema``, ``PUT .../properties``)
must be compatible with the current one; an *observed* one (an OpenLineage ``schema`` facet) is
a fact and is kept whatever it changes, unless a newer version holds already: an observation
older than the current version's event time is no version (the later event wins).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson
import psycopg
from psycopg.rows import class_row

from lineage.errors import IncompatibleSchemaError
from lineage.model.dataset_schema import (
    SCHEMA_PROPERTY,
    DatasetSchema,
    SchemaSource,
    incompatibilities,
    parse_schema,
    schema_changes,
)
from lineage.model.metadata_entity import MetadataEntity
from lineage.model.metadata_values import Scope
from warehouse.db import metadata_store

SCOPE: Scope = "SYSTEM"


_SINCE = "%(since)s::timestamptz is null or {column} >= %(since)s"  # the namespace race guard


@dataclass(frozen=True, slots=True)
class SchemaStored:
    """What an update stored: the dataset's schema version now, and its change record (None when
    the schema was already this one)."""

    version: int | None
    change_id: int | None


@dataclass(frozen=True, slots=True)
class SchemaVersionRow:
    """A kept schema version: the schema as stored (``DatasetSchema.to_json()``: ``{"fields": [...]}``),
    when and by whom, declared or observed, the time of the event that reported it, and what it
    changed from the version before (``SchemaChanges.to_dict()``; None for a first version)."""

    version: int
    schema: dict[str, Any]
    created_at: datetime
    created_by: str
    source: SchemaSource
    event_time: datetime
    changes: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class SchemaUpdate:
    """A schema to keep as the dataset's next version: the one it replaces (None for a first
    schema), where it came from and the time of the event that reported it (None: now)."""

    proposed: DatasetSchema
    previous: DatasetSchema | None
    source: SchemaSource
    event_time: datetime | None


def current(conn: psycopg.Connection, dataset: MetadataEntity, since: datetime | None = None) -> DatasetSchema | None:
    """The dataset's schema (stored at or after ``since`` when given), or None."""
    row = conn.execute(f"""select value from lineage.metadata where entity_key = %(key)s and scope = %(scope)s
                           and kind = 'property' and key = %(property)s and ({_SINCE.format(column="updated_at")})""",
                       {"key": dataset.render(), "scope": SCOPE, "property": SCHEMA_PROPERTY,
                        "since": since}).fetchone()
    return parse_schema(orjson.loads(row[0])) if row else None


def prepare_update(conn: psycopg.Connection, dataset: MetadataEntity, proposed: DatasetSchema,
                   source: SchemaSource = "declared", event_time: datetime | None = None) -> SchemaUpdate | None:
    """The update ``proposed`` makes, or None when it makes none: it is the current schema
    already, or it is observed at an ``event_time`` older than the current version's (a newer
    version holds; the later event wins). A declared schema must be compatible with the current
    one: ``IncompatibleSchemaError`` lists each incompatibility. Call under the dataset's SYSTEM
    lock (``metadata_store.lock``: rows of a namespace's old incarnation are gone by then)."""
    existing = current(conn, dataset)
    if existing == proposed:
        return None
    if source == "declared" and existing is not None:
        reasons = incompatibilities(existing, proposed)
        if reasons:
            raise IncompatibleSchemaError(dataset.render(), reasons)
    if source == "observed" and event_time is not None:
        newest = conn.execute("""select event_time from lineage.dataset_schema_versions where entity_key = %s
                                 order by version desc limit 1""", (dataset.render(),)).fetchone()
        if newest is not None and event_time < newest[0]:
            return None
    return SchemaUpdate(proposed, existing, source, event_time)


def record_version(conn: psycopg.Connection, dataset: MetadataEntity, update: SchemaUpdate, updater: str) -> int:
    """Keep ``update`` as the dataset's next schema version, with what it changed; returns its number."""
    changes = (orjson.dumps(schema_changes(update.previous, update.proposed).to_dict()).decode("utf-8")
               if update.previous is not None else None)
    row = conn.execute(
        """insert into lineage.dataset_schema_versions
               (entity_key, namespace, version, schema, created_by, source, event_time, changes)
           select %(key)s, %(ns)s, coalesce(max(version), 0) + 1, %(schema)s, %(by)s, %(source)s,
                  coalesce(%(at)s::timestamptz, clock_timestamp()), %(changes)s::jsonb
           from lineage.dataset_schema_versions where entity_key = %(key)s
           returning version""",
        {"key": dataset.render(), "ns": dataset.namespace, "schema": update.proposed.to_json(), "by": updater,
         "source": update.source, "at": update.event_time, "changes": changes}).fetchone()
    assert row is not None
    return int(row[0])


def set_schema(conn: psycopg.Connection, dataset: MetadataEntity, proposed: DatasetSchema,
               updater: str, born: datetime | None = None) -> SchemaStored:
    """Check and store ``proposed`` in one transaction: its version and change (none when the
    schema was already this one); raises ``IncompatibleSchemaError``, storing
    nothing. Behind the namespace race guard (``born`` as for ``metadata_store.change``): a
    re-created namespace's dataset is checked and numbered as a new one."""
    with conn.transaction():
        metadata_store.lock(conn, dataset, SCOPE, born)
        update = prepare_update(conn, dataset, proposed)
        if update is None:
            return SchemaStored(latest_version(conn, dataset), None)
        record = metadata_store.change(conn, dataset, SCOPE, updater,
                                       add_properties={SCHEMA_PROPERTY: proposed.to_json()})
        version = record_version(conn, dataset, update, updater)
    return SchemaStored(version, record.change_id if record else None)


def latest_version(conn: psycopg.Connection, dataset: MetadataEntity, since: datetime | None = None) -> int | None:
    row = conn.execute(f"""select max(version) from lineage.dataset_schema_versions where entity_key = %(key)s
                           and ({_SINCE.format(column="created_at")})""",
                       {"key": dataset.render(), "since": since}).fetchone()
    return row[0] if row else None


def versions(conn: psycopg.Connection, dataset: MetadataEntity, since: datetime | None = None
             ) -> list[SchemaVersionRow]:
    """Every kept version (stored at or after ``since`` when given), newest first."""
    with conn.cursor(row_factory=class_row(SchemaVersionRow)) as cursor:
        return cursor.execute(f"""select version, schema, created_at, created_by, source, event_time, changes
                                  from lineage.dataset_schema_versions
                                  where entity_key = %(key)s and ({_SINCE.format(column="created_at")})
                                  order by version desc""", {"key": dataset.render(), "since": since}).fetchall()


def backfill_changes(conn: psycopg.Connection) -> int:
    """Fill ``changes`` of the versions kept before migration 0024 (each against the version
    before it of its dataset); returns how many were filled."""
    rows = conn.execute("""select entity_key, version, schema from lineage.dataset_schema_versions
                           order by entity_key, version""").fetchall()
    filled = []
    for (key, version, described), (before_key, _, before) in zip(rows[1:], rows, strict=False):
        if key == before_key:
            changes = schema_changes(parse_schema(before), parse_schema(described)).to_dict()
            filled.append((orjson.dumps(changes).decode("utf-8"), key, version))
    with conn.cursor() as cursor:
        cursor.executemany("""update lineage.dataset_schema_versions set changes = %s::jsonb
                              where entity_key = %s and version = %s and changes is null""", filled)
    return len(filled)


VersionAt = tuple[int, DatasetSchema] | None
"""A dataset's schema version and schema in force at a moment (None: no schema yet)."""


def schemas_at(conn: psycopg.Connection, datasets: list[MetadataEntity], moments: tuple[datetime, datetime]
               ) -> dict[str, tuple[VersionAt, VersionAt]]:
    """For each of ``datasets`` (by entity key), the schema version in force at each of the two
    ``moments``: the newest by the time of the event that reported it, before the moment, in one
    query."""
    rows = conn.execute(
        """select k.key, b.version, b.schema, c.version, c.schema
           from unnest(%(keys)s::text[]) as k(key)
           left join lateral (select version, schema from lineage.dataset_schema_versions
                              where entity_key = k.key and event_time < %(first)s
                              order by event_time desc, version desc limit 1) b on true
           left join lateral (select version, schema from lineage.dataset_schema_versions
                              where entity_key = k.key and event_time < %(second)s
                              order by event_time desc, version desc limit 1) c on true""",
        {"keys": [dataset.render() for dataset in datasets], "first": moments[0], "second": moments[1]}).fetchall()
    return {key: (None if first is None else (first, parse_schema(first_schema)),
                  None if second is None else (second, parse_schema(second_schema)))
            for key, first, first_schema, second, second_schema in rows}

"""Dataset schemas in the warehouse (the *Datasets 3.5.0* design, "Updatable Datasets"): the current schema, the
compatibility check every update passes, and the versions kept.

The current schema is the dataset's SYSTEM property ``schema``, written through the one
``metadata_store.change`` (change record, search index); each compatible update that changes
it adds a row to ``lineage.dataset_schema_versions``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson
import psycopg
from psycopg.rows import class_row

from lineage.errors import IncompatibleSchemaError
from lineage.model.dataset_schema import SCHEMA_PROPERTY, DatasetSchema, incompatibilities, parse_schema
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
    when and by whom."""

    version: int
    schema: dict[str, Any]
    created_at: datetime
    created_by: str


def current(conn: psycopg.Connection, dataset: MetadataEntity, since: datetime | None = None) -> DatasetSchema | None:
    """The dataset's schema (stored at or after ``since`` when given), or None."""
    row = conn.execute(f"""select value from lineage.metadata where entity_key = %(key)s and scope = %(scope)s
                           and kind = 'property' and key = %(property)s and ({_SINCE.format(column="updated_at")})""",
                       {"key": dataset.render(), "scope": SCOPE, "property": SCHEMA_PROPERTY,
                        "since": since}).fetchone()
    return parse_schema(orjson.loads(row[0])) if row else None


def check_update(conn: psycopg.Connection, dataset: MetadataEntity, proposed: DatasetSchema) -> bool:
    """True when ``proposed`` changes the schema; raises ``IncompatibleSchemaError`` listing
    each incompatibility. Call under the dataset's SYSTEM lock (``metadata_store.lock``: rows of
    a namespace's old incarnation are gone by then)."""
    existing = current(conn, dataset)
    if existing is None:
        return True
    reasons = incompatibilities(existing, proposed)
    if reasons:
        raise IncompatibleSchemaError(dataset.render(), reasons)
    return existing != proposed


def record_version(conn: psycopg.Connection, dataset: MetadataEntity, proposed: DatasetSchema, updater: str) -> int:
    """Keep ``proposed`` as the dataset's next schema version; returns its number."""
    row = conn.execute(
        """insert into lineage.dataset_schema_versions (entity_key, namespace, version, schema, created_by)
           select %(key)s, %(ns)s, coalesce(max(version), 0) + 1, %(schema)s, %(by)s
           from lineage.dataset_schema_versions where entity_key = %(key)s
           returning version""",
        {"key": dataset.render(), "ns": dataset.namespace, "schema": proposed.to_json(), "by": updater}).fetchone()
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
        if not check_update(conn, dataset, proposed):
            return SchemaStored(latest_version(conn, dataset), None)
        record = metadata_store.change(conn, dataset, SCOPE, updater,
                                       add_properties={SCHEMA_PROPERTY: proposed.to_json()})
        version = record_version(conn, dataset, proposed, updater)
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
        return cursor.execute(f"""select version, schema, created_at, created_by from lineage.dataset_schema_versions
                                  where entity_key = %(key)s and ({_SINCE.format(column="created_at")})
                                  order by version desc""", {"key": dataset.render(), "since": since}).fetchall()

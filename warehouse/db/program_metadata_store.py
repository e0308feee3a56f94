"""Applies the SYSTEM metadata programs recorded (compacted ``metadata_change`` events).

Events are applied in event-time order, one transaction each: under the entity's lock, the
watermarks decide what still applies (``lineage.model.program_metadata.resolve``: the later event
wins by event time, whatever the order of arrival), the change goes through the one
``metadata_store.change`` (state, change record, search index) and the watermarks move.
A change that breaks the rules is quarantined with the reason, and so is a declared schema
(``set_schema``) incompatible with the dataset's current one (``schema_store.prepare_update``); an
observed one (``observe_schema``, an OpenLineage ``schema`` facet) that differs is a new version
whatever it changes, unless it is older than the current version. The others are kept.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import orjson
import psycopg

from lineage.errors import IncompatibleSchemaError, InvalidMetadataChangeError, NotFoundError, UnknownNamespaceError
from lineage.model.dataset_schema import SCHEMA_PROPERTY, parse_schema
from lineage.model.metadata_entity import program_run_entity
from lineage.model.metadata_values import Scope
from lineage.model.program_metadata import MetadataChange, Watermarks, parse_change, resolve
from warehouse.db import metadata_store, namespace_guard, schema_store
from warehouse.db.connection import connect

log = logging.getLogger(__name__)
SCOPE: Scope = "SYSTEM"


@dataclass(frozen=True)
class ProgramMetadataSummary:
    events: int
    change_ids: list[int] = field(default_factory=list)
    quarantined: int = 0
    seconds: float = 0.0

    def render(self) -> str:
        return (f"program metadata: {self.events} events -> {len(self.change_ids)} change records, "
                f"{self.quarantined} quarantined, in {self.seconds:.1f}s")


_APPLY_LOCK = 7_265_405  # arbitrary, constant: one application of program metadata at a time


DECLARED = "declared without a run"  # the updater of a change an OpenLineage DatasetEvent made


def apply_pending(database_url: str, *, auto_create_namespaces: bool) -> ProgramMetadataSummary:
    """The DAG's ``apply_metadata`` stage: apply the pending metadata changes in ``database_url``."""
    with connect(database_url) as conn:
        summary = apply_program_metadata(conn, auto_create_namespaces=auto_create_namespaces)
    log.info("%s", summary.render())
    return summary


def apply_program_metadata(conn: psycopg.Connection, chunk: int = 1000, *,
                           auto_create_namespaces: bool = False) -> ProgramMetadataSummary:
    """Apply every compacted metadata change not applied yet; returns the change ids written.
    A change to an entity of a namespace that does not exist is quarantined, unless
    ``auto_create_namespaces`` creates the namespace."""
    began = time.perf_counter()
    events = quarantined = 0
    change_ids: list[int] = []
    while True:
        # one job at a time (the scheduled DAG's and the refresh's): the other waits, then finds
        # these events processed
        conn.execute("select pg_advisory_xact_lock(%s)", (_APPLY_LOCK,))
        pending = conn.execute(
            """select namespace, event_id, event_time, application, program_type, program, run_id, payload
               from lineage.pending_events where kind = 'metadata_change' and processed_at is null
               order by event_time, event_id limit %s""", (chunk,)).fetchall()
        if not pending:
            conn.commit()
            break
        for namespace, event_id, event_time, application, program_type, program, run_id, payload in pending:
            with conn.transaction():
                updater = (DECLARED if run_id is None
                           else program_run_entity(namespace, application, program_type, program, run_id).render())
                try:
                    with conn.transaction():
                        change = parse_change(payload)
                        _check_namespace(conn, change.entity.namespace, event_time, auto_create_namespaces)
                        change_id = _apply(conn, change, event_time, updater)
                except (InvalidMetadataChangeError, IncompatibleSchemaError) as exc:
                    _quarantine(conn, namespace, event_id, str(exc), payload)
                    quarantined += 1
                else:
                    if change_id is not None:
                        change_ids.append(change_id)
                conn.execute("""update lineage.pending_events set processed_at = now()
                                where namespace = %s and event_id = %s""", (namespace, event_id))
            events += 1
        conn.commit()
        log.info("program metadata: %d events applied so far", events)
    return ProgramMetadataSummary(events, change_ids, quarantined, time.perf_counter() - began)


def _apply(conn: psycopg.Connection, change: MetadataChange, at: datetime, updater: str) -> int | None:
    subject = change.entity
    metadata_store.lock(conn, subject, SCOPE)
    current = metadata_store.current_state(conn, subject, SCOPE)
    resolved = resolve(change, at, current, _watermarks(conn, subject.render()))
    properties = dict(resolved.set_properties)
    update = None
    if SCHEMA_PROPERTY in properties:
        update = schema_store.prepare_update(conn, subject, parse_schema(orjson.loads(properties[SCHEMA_PROPERTY])),
                                             change.schema_source, at)
        if update is None:  # the same schema again, or an observation older than the current version
            del properties[SCHEMA_PROPERTY]
    record = None
    if properties or resolved.add_tags or resolved.remove_properties or resolved.remove_tags:
        record = metadata_store.change(
            conn, subject, SCOPE, updater, add_properties=properties, add_tags=resolved.add_tags,
            remove_properties=resolved.remove_properties, remove_tags=resolved.remove_tags)
    if update is not None:
        schema_store.record_version(conn, subject, update, updater)
    with conn.cursor() as cursor:
        cursor.executemany(
            """insert into lineage.metadata_event_times (entity_key, scope, kind, key, event_time)
               values (%s, %s, %s, %s, %s)
               on conflict (entity_key, scope, kind, key) do update
               set event_time = excluded.event_time, written_at = clock_timestamp()
               where lineage.metadata_event_times.event_time < excluded.event_time""",
            [(subject.render(), SCOPE, kind, key, moment) for (kind, key), moment in resolved.watermarks.items()])
    return record.change_id if record else None


def _check_namespace(conn: psycopg.Connection, namespace: str | None, at: datetime, auto_create: bool) -> None:
    """The change's namespace exists and is held until the change is stored (the race guard,
    ``warehouse.db.namespace_guard``); a change recorded before the namespace was re-created
    belongs to the deleted one and is refused, as the cleanup would have removed it."""
    if namespace is None:  # an external resource
        return
    if auto_create:
        conn.execute("insert into lineage.namespaces (namespace) values (%s) on conflict do nothing", (namespace,))
    try:
        stale_before = namespace_guard.guard_write(conn, namespace)
    except NotFoundError as exc:
        raise UnknownNamespaceError(f"namespace {namespace!r} does not exist") from exc
    if stale_before is not None and at < stale_before:
        raise InvalidMetadataChangeError(
            f"recorded at {at.isoformat()} for namespace {namespace!r}, which was deleted and re-created at "
            f"{stale_before.isoformat()}: the change belongs to the deleted namespace")


def _watermarks(conn: psycopg.Connection, entity_key: str) -> Watermarks:
    rows = conn.execute("""select kind, key, event_time from lineage.metadata_event_times
                           where entity_key = %s and scope = %s""", (entity_key, SCOPE)).fetchall()
    return {(kind, key): moment for kind, key, moment in rows}


def _quarantine(conn: psycopg.Connection, namespace: str, event_id: str, reason: str, payload: Any) -> None:
    conn.execute(
        """insert into lineage.quarantine (batch_id, source_file, line_number, reason, raw_text)
           values ('program-metadata', %s, 1, %s, %s) on conflict do nothing""",
        (f"pending_events/{namespace}/{event_id}", f"metadata change: {reason}",
         orjson.dumps(payload).decode("utf-8")))

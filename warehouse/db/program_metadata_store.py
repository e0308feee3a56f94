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
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import orjson
import psycopg

from lineage.errors import (
    IncompatibleSchemaError,
    InvalidEntityError,
    InvalidMetadataChangeError,
    InvalidSchemaError,
    NotFoundError,
    UnknownNamespaceError,
)
from lineage.model.dataset_schema import (
    SCHEMA_PROPERTY,
    DatasetSchema,
    parse_schema,
    unstated_nullability,
    with_nullability_of,
)
from lineage.model.metadata_entity import MetadataEntity, entity, program_run_entity
from lineage.model.metadata_values import Scope
from lineage.model.program_metadata import ALL_KEYS, MetadataChange, Watermarks, parse_change, resolve
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
    unchanged: int = 0  # observed schemas equal to the current one, applied a chunk at a time

    def render(self) -> str:
        return (f"program metadata: {self.events} events -> {len(self.change_ids)} change records, "
                f"{self.quarantined} quarantined ({self.unchanged} observed schemas unchanged), "
                f"in {self.seconds:.1f}s")


_APPLY_LOCK = 7_265_405  # arbitrary, constant: one application of program metadata at a time


DECLARED = "declared without a run"  # the updater of a change an OpenLineage DatasetEvent made


def apply_pending(database_url: str, *, auto_create_namespaces: bool) -> ProgramMetadataSummary:
    """The DAG's ``apply_metadata`` stage: apply the pending metadata changes in ``database_url``."""
    with connect(database_url) as conn:
        summary = apply_program_metadata(conn, auto_create_namespaces=auto_create_namespaces)
    log.info("%s", summary.render())
    return summary


def apply_program_metadata(conn: psycopg.Connection, chunk: int = 1000, *,
                           auto_create_namespaces: bool = False, fast: bool = True) -> ProgramMetadataSummary:
    """Apply every compacted metadata change not applied yet; returns the change ids written.
    A change to an entity of a namespace that does not exist is quarantined, unless
    ``auto_create_namespaces`` creates the namespace. ``fast`` (the default): an observed schema
    equal to the dataset's current one, which would only move its watermark, is applied with the
    chunk's others of its kind in two statements (``_Unchanged``); False: each change on its own
    (what the tests compare it with)."""
    began = time.perf_counter()
    events = quarantined = absorbed = 0
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
        unchanged = _Unchanged(conn) if fast else None
        if unchanged is not None:
            unchanged.prepare([row[-1] for row in pending])
        for namespace, event_id, event_time, application, program_type, program, run_id, payload in pending:
            if unchanged is not None and unchanged.absorbs(namespace, event_id, event_time, payload):
                events += 1
                absorbed += 1
                continue
            if unchanged is not None:
                unchanged.settle(payload)  # its entity's queued watermark first; its state read again after
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
        if unchanged is not None:
            unchanged.flush()
        conn.commit()
        log.info("program metadata: %d events applied so far", events)
    return ProgramMetadataSummary(events, change_ids, quarantined, time.perf_counter() - began, absorbed)


class _Unchanged:
    """A chunk's observed schemas that change nothing (issue 30 item 7): OpenLineage producers send
    a dataset's schema facet with every event of every run, so nearly every observation repeats
    the dataset's current schema. Applied one by one, each costs two savepoints and eight
    statements to move one watermark. Here the chunk's datasets are locked (as ``_apply`` locks
    each) and their current schemas read in two statements (``prepare``); an observation of the
    current schema then only queues its watermark and its processed mark, which ``flush`` writes
    in two statements. The result is ``_apply``'s: the same schema again makes no change record
    and no version (``schema_store.prepare_update``), and its watermark moves to its time unless a
    later one holds (``resolve``). Events come in time order, so one applied on its own later in
    the chunk is never older than those queued. Anything else (another operation, a schema that
    differs or does not parse, a namespace missing or awaiting its cleanup, a dataset a change
    applied on its own just touched, read again) goes the usual way."""

    _SHAPE = frozenset({"entity", "operation", "schema"})

    def __init__(self, conn: psycopg.Connection) -> None:
        self.conn = conn
        self.namespaces: dict[str, bool] = {}  # namespace -> fit (exists, nothing pending cleanup)
        self.subjects: dict[tuple[tuple[str, str], ...], MetadataEntity | None] = {}  # payload entity -> parsed
        self.schemas: dict[str, DatasetSchema | None] = {}  # entity key -> its current schema
        self.seen: dict[str, Any] = {}  # entity key -> a schema payload found equal to it (compared as JSON)
        self.marks: dict[str, datetime] = {}  # entity key -> the latest observation queued
        self.done: list[tuple[str, str]] = []  # (namespace, event_id) processed

    def prepare(self, payloads: list[Any]) -> None:
        """Lock the chunk's observed datasets and read their current schemas, in two statements."""
        subjects = {key: subject for key, subject in (
            (subject.render(), subject) for subject in map(self._subject, payloads) if subject is not None)}
        if not subjects:
            return
        keys = sorted(subjects)
        self.conn.execute("select pg_advisory_xact_lock(hashtextextended(%s || '|' || k, 0)) from unnest(%s::text[]) k",
                          (SCOPE, keys))
        stored: dict[str, str] = dict(self.conn.execute(
            "select entity_key, value from lineage.metadata where entity_key = any(%s) and scope = %s "
            "and kind = 'property' and key = %s", (keys, SCOPE, SCHEMA_PROPERTY)).fetchall())
        for key in keys:
            self.schemas[key] = parse_schema(orjson.loads(stored[key])) if key in stored else None

    def absorbs(self, namespace: str, event_id: str, at: datetime, payload: Any) -> bool:
        subject = self._subject(payload)
        if subject is None:
            return False
        key = subject.render()
        if key not in self.schemas:  # forgotten: read again, under the lock _apply takes
            metadata_store.lock(self.conn, subject, SCOPE)
            self.schemas[key] = schema_store.current(self.conn, subject)
            self.seen.pop(key, None)
        current, proposed = self.schemas[key], payload["schema"]
        if current is None:
            return False
        text = orjson.dumps(proposed)  # compared as JSON text: 1 is not true there, as it is in Python
        if self.seen.get(key) != text:
            try:
                observed = with_nullability_of(current, parse_schema(proposed), unstated_nullability(proposed))
                if observed != current:
                    return False
            except InvalidSchemaError:
                return False  # refused on its own, with the reason
            self.seen[key] = text
        self.marks[key] = max(at, self.marks.get(key, at))
        self.done.append((namespace, event_id))
        return True

    def settle(self, payload: Any) -> None:
        """Before a change applied on its own: its entity's queued watermark is written first (so
        the change sees, and leaves, what applying each alone would), and its state is read again
        when next needed."""
        try:
            key = entity((str(k), str(v)) for k, v in payload["entity"]).render()
        except (InvalidEntityError, KeyError, TypeError, ValueError):
            self.schemas.clear()
            self._write_marks(self.marks)
            self.marks = {}
            return
        self.schemas.pop(key, None)
        if key in self.marks:
            self._write_marks({key: self.marks.pop(key)})

    def flush(self) -> None:
        self._write_marks(self.marks)
        self.marks = {}
        if self.done:
            self.conn.execute(
                """update lineage.pending_events e set processed_at = now()
                   from unnest(%s::text[], %s::text[]) as done(namespace, event_id)
                   where e.namespace = done.namespace and e.event_id = done.event_id""",
                ([namespace for namespace, _ in self.done], [event_id for _, event_id in self.done]))
            self.done = []

    def _write_marks(self, marks: dict[str, datetime]) -> None:
        if marks:
            self.conn.execute(
                """insert into lineage.metadata_event_times (entity_key, scope, kind, key, event_time)
                   select entity_key, %(scope)s, 'property', %(key)s, event_time
                   from unnest(%(keys)s::text[], %(times)s::timestamptz[]) as marks(entity_key, event_time)
                   where not exists (  -- resolve's rule: a later "remove all properties" holds
                       select from lineage.metadata_event_times a
                       where a.entity_key = marks.entity_key and a.scope = %(scope)s and a.kind = 'property'
                         and a.key = %(all)s and a.event_time > marks.event_time)
                   on conflict (entity_key, scope, kind, key) do update
                   set event_time = excluded.event_time, written_at = clock_timestamp()
                   where lineage.metadata_event_times.event_time < excluded.event_time""",
                {"scope": SCOPE, "key": SCHEMA_PROPERTY, "all": ALL_KEYS, "keys": list(marks),
                 "times": list(marks.values())})

    def _subject(self, payload: Any) -> MetadataEntity | None:
        """The dataset an observed schema (of nothing but its schema) is about, when its namespace
        is fit; else None."""
        if (not isinstance(payload, dict) or payload.get("operation") != "observe_schema" or "schema" not in payload
                or not payload.keys() <= self._SHAPE):
            return None
        try:
            parts = tuple((str(k), str(v)) for k, v in payload["entity"])
        except (KeyError, TypeError, ValueError):
            return None
        if parts not in self.subjects:
            try:
                subject: MetadataEntity | None = entity(parts)
            except InvalidEntityError:
                subject = None
            if subject is not None and (subject.type not in ("dataset", "stream") or subject.namespace is None
                                        or not self._fit(subject.namespace)):
                subject = None
            self.subjects[parts] = subject
        return self.subjects[parts]

    def _fit(self, namespace: str) -> bool:
        if namespace not in self.namespaces:
            try:
                self.namespaces[namespace] = namespace_guard.guard_write(self.conn, namespace) is None
            except NotFoundError:
                self.namespaces[namespace] = False
        return self.namespaces[namespace]


def _apply(conn: psycopg.Connection, change: MetadataChange, at: datetime, updater: str) -> int | None:
    subject = change.entity
    metadata_store.lock(conn, subject, SCOPE)
    observed = change.set_properties.get(SCHEMA_PROPERTY)
    if change.unstated_nullability and observed is not None:
        # what the observation does not say stays as it is: merged first, so that a tie with another
        # observation of the same moment compares the schemas each would leave (``resolve``)
        merged = with_nullability_of(schema_store.current(conn, subject), parse_schema(orjson.loads(observed)),
                                     change.unstated_nullability)
        change = replace(change, set_properties={**change.set_properties, SCHEMA_PROPERTY: merged.to_json()})
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

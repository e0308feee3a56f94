"""The run context a pipeline opens to record lineage.

    from lineage import FieldOperation, RunContext, Source

    with RunContext("default", "PurchaseHistory", "spark", "PurchaseHistoryBuilder") as run:
        run.read("purchases")
        ...
        run.write("history")

The start event is written as soon as the run starts (so a long run is visible while it
runs); the run's other events are buffered and written as one file when the run ends, or
earlier when the buffer fills. Every event is validated when recorded: a mistake raises at
the call that made it.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Iterable, Mapping, Sequence
from contextvars import Token
from datetime import UTC, datetime
from types import TracebackType
from typing import Any

from lineage import __version__
from lineage.client.access_types import current_run
from lineage.client.delivery import Delivery
from lineage.errors import RunStateError
from lineage.model.dataset_schema import FieldSpec, schema
from lineage.model.events import HAND_VERSION, SCHEMA_VERSION, new_event
from lineage.model.field_operations import FieldOperation
from lineage.settings import Settings
from lineage.transport import Transport
from lineage.transport.log_file import EventLogWriter

log = logging.getLogger(__name__)
PRODUCER = f"lineage-client/{__version__}"


class RunContext:
    """One program run: records accesses, field operations and metadata changes."""

    def __init__(
        self,
        namespace: str,
        application: str,
        program_type: str,
        program: str,
        run_id: str | None = None,
        *,
        log_root: str | None = None,
        flush_every: int = 10_000,
        transport: Transport | None = None,
    ) -> None:
        self.namespace = namespace
        self.run = {
            "application": application,
            "program_type": program_type,
            "program": program,
            "run_id": run_id or str(uuid.uuid4()),
        }
        settings = Settings.from_env()
        # the raw log under ``log_root`` (default LINEAGE_LOG_ROOT), or any other Transport
        self._delivery = Delivery(transport or EventLogWriter(log_root or settings.log_root), settings.spill_dir,
                                  attempts=settings.write_attempts)
        self._flush_every = flush_every
        self._buffer: list[dict[str, Any]] = []
        self._lock = threading.Lock()  # the buffer
        self._flush_lock = threading.Lock()  # one flush at a time: no event written twice
        self.started_at: datetime | None = None
        self.ended_at: datetime | None = None
        self.status: str | None = None
        self.files: list[str] = []  # written into the log root, or spilled (see ``spilled``)
        self.spilled: list[str] = []
        self._current: Token[Any] | None = None
        self._recorded_accesses: set[tuple[str, ...]] = set()

    @property
    def run_id(self) -> str:
        return self.run["run_id"]

    # lifecycle -------------------------------------------------------------------------
    def start(self, at: datetime | None = None) -> RunContext:
        """Record the run's start and write it at once."""
        if self.started_at is not None:
            raise RunStateError(f"run {self.run_id} already started")
        self.started_at = at or datetime.now(UTC)
        self._record("run_start", {}, at=self.started_at)
        self.flush()
        self._current = current_run.set(self)  # dataset methods (lineage.client.access_types) record here
        return self

    def end(self, status: str = "completed", at: datetime | None = None) -> None:
        """Record the run's end with ``status`` (completed, failed, killed) and flush."""
        self._require_open()
        self._record("run_end", {"status": status}, at=at)
        self.ended_at = at or datetime.now(UTC)
        self.status = status
        self.flush()
        if self._current is not None:
            try:
                current_run.reset(self._current)
            except ValueError:  # ended in another context than it started in
                current_run.set(None)
            self._current = None

    def __enter__(self) -> RunContext:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self.ended_at is not None:
            return
        if exc_type is None:
            self.end("completed")
            return
        try:  # the user's own exception always wins over a failure to record the end
            self.end("failed")
        except Exception:
            log.exception("lineage: could not record the end of run %s; its events stay buffered", self.run_id)

    # recording -------------------------------------------------------------------------
    def record_access(
        self,
        dataset: str,
        access: str,
        *,
        dataset_type: str = "dataset",
        namespace: str | None = None,
        component: str | None = None,
        at: datetime | None = None,
    ) -> None:
        """Record that this run accessed ``dataset`` (access: read, write, read_write, unknown)."""
        ref: dict[str, Any] = {"type": dataset_type, "name": dataset}
        if namespace and namespace != self.namespace:
            ref["namespace"] = namespace
        payload: dict[str, Any] = {"dataset": ref, "access": access}
        if component:
            payload["component"] = component
        self._record("dataset_access", payload, at=at)

    def record_captured(self, kind: str, payload: Mapping[str, Any], *, once: bool = False) -> None:
        """Record an event of the current format (v2: dataset names that are identities, field
        inputs with transformations), as automatic capture builds them (``lineage.spark``).
        ``once``: skip an event identical to one already recorded in this run."""
        if once:
            key = ("captured", kind, repr(sorted(payload.items())))
            if key in self._recorded_accesses:
                return
            self._recorded_accesses.add(key)
        self._record(kind, payload, schema_version=SCHEMA_VERSION)

    def record_dataset_call(self, dataset: str, access: str, dataset_type: str = "dataset") -> None:
        """An access made by a dataset method (``lineage.client.access_types``): recorded once per run
        for each (dataset, access), however many calls make it."""
        key = (dataset_type, dataset, access)
        if key not in self._recorded_accesses:
            self._recorded_accesses.add(key)
            self.record_access(dataset, access, dataset_type=dataset_type)

    def read(self, dataset: str, **options: Any) -> None:
        """Record a read of ``dataset``."""
        self.record_access(dataset, "read", **options)

    def write(self, dataset: str, **options: Any) -> None:
        """Record a write of ``dataset``."""
        self.record_access(dataset, "write", **options)

    def record_field_operations(
        self,
        destination: str,
        operations: Sequence[FieldOperation | Mapping[str, Any]],
        *,
        destination_fields: Iterable[str] | None = None,
        namespace: str | None = None,
    ) -> None:
        """Record the field operations that produced ``destination`` in this run (the *Field Level Lineage* design)."""
        ref: dict[str, Any] = {"type": "dataset", "name": destination}
        if namespace and namespace != self.namespace:
            ref["namespace"] = namespace
        payload: dict[str, Any] = {
            "destination": ref,
            "operations": [op.to_dict() if isinstance(op, FieldOperation) else dict(op) for op in operations],
        }
        if destination_fields is not None:
            payload["destination_fields"] = list(destination_fields)
        self._record("field_operations", payload)

    def record_metadata(
        self,
        entity: Sequence[tuple[str, str]],
        operation: str,
        *,
        properties: Mapping[str, str] | None = None,
        tags: Iterable[str] | None = None,
        keys: Iterable[str] | None = None,
    ) -> None:
        """Record a SYSTEM metadata change on ``entity`` ([(key, value), ...]; entities as the
        *Metadata Custom Entities and Authorization* design defines them)."""
        payload: dict[str, Any] = {"entity": [list(part) for part in entity], "operation": operation}
        if properties is not None:
            payload["properties"] = dict(properties)
        if tags is not None:
            payload["tags"] = list(tags)
        if keys is not None:
            payload["keys"] = list(keys)
        self._record("metadata_change", payload)

    def record_schema(
        self,
        dataset: str,
        fields: Iterable[FieldSpec],
        *,
        dataset_type: str = "dataset",
        namespace: str | None = None,
    ) -> None:
        """Report ``dataset``'s schema (``[("empName", "string"), ...]``): kept as its SYSTEM
        property ``schema``, its field names searchable with ``field:`` terms."""
        checked = schema(fields)
        payload = {"entity": [["namespace", namespace or self.namespace], [dataset_type, dataset]],
                   "operation": "set_schema", "schema": {"fields": [f.to_dict() for f in checked.fields]}}
        self._record("metadata_change", payload)

    def flush(self) -> None:
        """Write buffered events as one new log file (retried, or spilled locally when the log
        root stays unavailable: ``lineage.client.delivery``). The events leave the buffer only once
        written; when even the spill fails, this raises and they stay buffered."""
        with self._flush_lock:
            with self._lock:
                events = list(self._buffer)
            if not events:
                return
            delivered = self._delivery.deliver(events, _file_prefix(self.run))
            with self._lock:
                del self._buffer[:len(events)]  # events recorded meanwhile stay
            self.files.append(delivered.path)
            if delivered.spilled:
                self.spilled.append(delivered.path)

    # internals -------------------------------------------------------------------------
    def _record(self, kind: str, payload: Mapping[str, Any], *, at: datetime | None = None,
                schema_version: int = HAND_VERSION) -> None:
        self._require_open()
        event = new_event(kind, self.namespace, self.run, payload, event_time=at, producer=PRODUCER,
                          schema_version=schema_version)
        with self._lock:
            self._buffer.append(event)
            full = len(self._buffer) >= self._flush_every
        if full:
            self.flush()

    def _require_open(self) -> None:
        if self.started_at is None:
            raise RunStateError(f"run {self.run_id} has not started; call start() or use it as a context manager")
        if self.ended_at is not None:
            raise RunStateError(f"run {self.run_id} has ended; nothing more can be recorded")


def _file_prefix(run: Mapping[str, str]) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in f"{run['program']}-{run['run_id']}")[:120]

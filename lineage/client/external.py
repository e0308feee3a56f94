"""Writes to a stream by producers outside any program ("Stream access from an external
entity" of the *Metadata and Data Discovery* design): recorded at most once per (stream,
source, day).

The external entity is a pseudo-run, ``external.<namespace>._external.<source>`` with run id
``<day>``, covering that UTC day; event ids are derived from (namespace, stream, source, day),
so recording the same access again that day is a re-delivery, counted once by the compaction.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from lineage.model.events import new_event
from lineage.settings import Settings
from lineage.transport.log_file import EventLogWriter

EXTERNAL_APPLICATION = "_external"
EXTERNAL_PROGRAM_TYPE = "external"
_NAMESPACE_UUID = uuid.UUID("5b0c1c9e-5a3e-4a36-9a43-6f7f0b9f6a11")


def external_stream_events(namespace: str, stream: str, source: str, at: datetime) -> list[dict[str, Any]]:
    """The events recording that ``source`` wrote to ``stream`` on ``at``'s UTC day."""
    day_start = at.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    day = day_start.date().isoformat()
    run = {"application": EXTERNAL_APPLICATION, "program_type": EXTERNAL_PROGRAM_TYPE, "program": source,
           "run_id": day}

    def event_id(kind: str) -> str:
        return str(uuid.uuid5(_NAMESPACE_UUID, f"{namespace}/{stream}/{source}/{day}/{kind}"))

    return [
        new_event("run_start", namespace, run, {}, event_time=day_start, event_id=event_id("start")),
        new_event("dataset_access", namespace, run, {"dataset": {"type": "stream", "name": stream}, "access": "write"},
                  event_time=day_start, event_id=event_id("write")),
        new_event("run_end", namespace, run, {"status": "completed"},
                  event_time=day_start + timedelta(days=1) - timedelta(microseconds=1), event_id=event_id("end")),
    ]


def record_external_stream_write(
    namespace: str, stream: str, source: str, *, at: datetime | None = None, log_root: str | None = None
) -> str:
    """Record an external write to ``stream`` by ``source`` (e.g. a REST producer); returns the file."""
    events = external_stream_events(namespace, stream, source, at or datetime.now(UTC))
    return EventLogWriter(log_root or Settings.from_env().log_root).write(events, prefix=f"external-{source}")

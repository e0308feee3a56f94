"""The envelope of an OpenLineage event (spec 2-0-x): what makes one acceptable, its id, its time.

OpenLineage has three event shapes: a RunEvent (``run`` + ``job``, with ``eventType`` START,
RUNNING, COMPLETE, FAIL, ABORT or OTHER, or none), a DatasetEvent (``dataset``) and a JobEvent
(``job``, no run). Only what the warehouse cannot do without is checked; facets are never
checked here (an unknown, invalid or ``null`` facet never rejects an event). The HTTP endpoint,
the in-process transport and the compaction use these same checks, so a producer gets the
same reason wherever the event enters.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import UTC, datetime
from typing import Any

import orjson

from lineage.errors import InvalidEventError

EVENT_TYPES = ("START", "RUNNING", "COMPLETE", "FAIL", "ABORT", "OTHER")
MAX_ID_LENGTH = 128
NAIVE_TIME_WARNING = "eventTime without offset, read as UTC"
RUN_ID_WARNING = "run.runId is not a UUID; kept as sent"
_UUID = re.compile(r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}")


def event_shape(event: Any) -> str:
    """``run``, ``dataset`` or ``job``: which OpenLineage event ``event`` is, once checked."""
    if isinstance(event, dict) and "run" in event:
        return "run"
    if isinstance(event, dict) and "dataset" in event and "job" not in event:
        return "dataset"
    return "job"


def check_openlineage(event: Any) -> None:
    """Raise InvalidEventError naming the first missing or malformed envelope field."""
    if not isinstance(event, dict):
        raise InvalidEventError(f"an OpenLineage event must be a JSON object, got {type(event).__name__}")
    if not isinstance(event.get("eventTime"), str):
        raise InvalidEventError("OpenLineage event: eventTime is missing (an ISO 8601 time is required)")
    event_time(event)
    shape = event_shape(event)
    if shape == "run":
        run = event.get("run")
        if not isinstance(run, dict) or not isinstance(run.get("runId"), str) or not run["runId"]:
            raise InvalidEventError("OpenLineage event: run.runId is missing")
        if len(run["runId"]) > MAX_ID_LENGTH:
            raise InvalidEventError(f"OpenLineage event: run.runId is over {MAX_ID_LENGTH} characters")
        event_type = event.get("eventType")
        if event_type is not None and event_type not in EVENT_TYPES:
            raise InvalidEventError(f"OpenLineage event: eventType {str(event_type)[:40]!r} is not one of "
                                    f"{', '.join(EVENT_TYPES)}")
    if shape == "dataset":
        _check_named(event.get("dataset"), "dataset")
    else:
        _check_named(event.get("job"), "job")
    for side in ("inputs", "outputs"):
        datasets = event.get(side)
        if datasets is None:
            continue
        if not isinstance(datasets, list):
            raise InvalidEventError(f"OpenLineage event: {side} must be a list")
        for index, dataset in enumerate(datasets):
            _check_named(dataset, f"{side}[{index}]")


def _check_named(value: Any, label: str) -> None:
    if not isinstance(value, dict):
        raise InvalidEventError(f"OpenLineage event: {label} is missing")
    for key in ("namespace", "name"):
        if not isinstance(value.get(key), str) or not value[key]:
            raise InvalidEventError(f"OpenLineage event: {label}.{key} is missing")


def event_time(event: dict[str, Any]) -> datetime:
    """The event's time; a time without an offset is read as UTC (``envelope_warnings`` flags it)."""
    moment = _parsed_time(event)
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def envelope_warnings(event: dict[str, Any]) -> list[str]:
    """What the run keeps about a checked RunEvent's envelope: ``NAIVE_TIME_WARNING`` when its
    time has no offset, ``RUN_ID_WARNING`` when its ``runId`` is not a UUID (the spec asks for
    one; the run is keyed by the id as sent all the same)."""
    warnings = [NAIVE_TIME_WARNING] if _parsed_time(event).tzinfo is None else []
    if not is_uuid(event["run"]["runId"]):
        warnings.append(RUN_ID_WARNING)
    return warnings


def is_uuid(text: str) -> bool:
    """Whether ``text`` is a UUID in its usual form (``8-4-4-4-12`` hex digits, any version), as
    the spec's ``"format": "uuid"`` asks of a ``runId``."""
    return _UUID.fullmatch(text) is not None


def _parsed_time(event: dict[str, Any]) -> datetime:
    text = event["eventTime"]
    try:
        moment = datetime.fromisoformat(text)
        if moment.tzinfo is not None:
            moment.astimezone(UTC)  # 0001-01-01T00:00:00+01:00 has no UTC time
    except ValueError as exc:
        raise InvalidEventError(f"OpenLineage event: eventTime {text[:40]!r} is not an ISO 8601 time") from exc
    except OverflowError as exc:
        raise InvalidEventError(f"OpenLineage event: eventTime {text[:40]!r} is out of range in UTC") from exc
    return moment


def content_id(event: dict[str, Any]) -> str:
    """The event's id, derived from its content: the same event sent twice has the same id."""
    return id_of(canonical_json(event))


def canonical_json(event: dict[str, Any]) -> bytes:
    """The event as JSON with its keys sorted, the text its id is derived from; InvalidEventError
    when the log could not hold it."""
    try:
        return orjson.dumps(event, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError as exc:  # nested past the 254 levels orjson writes, an integer past 64 bits,
        # a lone surrogate (no UTF-8 form)
        raise InvalidEventError(f"OpenLineage event: it cannot be written to the log: {exc}") from exc


def event_json(event: Any) -> bytes:
    """An event as one line of JSON, as the export writes it: orjson's, or the standard library's
    for what orjson cannot write (PostgreSQL gives a facet's number of 1e20 or more back as an
    integer past 64 bits)."""
    try:
        return orjson.dumps(event)
    except orjson.JSONEncodeError:
        return json.dumps(event, separators=(",", ":"), ensure_ascii=False).encode()


def id_of(canonical: bytes) -> str:
    """``content_id`` of the event whose ``canonical_json`` is ``canonical``."""
    return "ol-" + hashlib.sha256(canonical).hexdigest()[:32]

"""Raw event format (v2; v1 still read): building events, validating log lines, staging them.

The JSON Schema files ``lineage/schemas/raw_event_v2.json`` (and ``raw_event_v1.json``, whose
lines stay valid) are the single home of the format's rules; this module compiles them once and
adds only what JSON Schema cannot say (the line size limit, a parseable, zoned ``event_time``,
the semantics of field operations, metadata changes and OpenLineage envelopes). The client
validates what it writes with the same function the compaction uses, so a producer learns of a
mistake when it records, not hours later in the quarantine.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from typing import Any

import fastjsonschema
import orjson

from lineage.errors import InvalidEventError, InvalidFieldOperationsError, InvalidMetadataChangeError
from lineage.ids import DATA_TYPES
from lineage.model.derived_checks import plainly_valid
from lineage.model.field_paths import normalize
from lineage.model.program_metadata import parse_change
from lineage.openlineage.event import check_openlineage
from lineage.schemas import SCHEMA_VERSION as SCHEMA_VERSION
from lineage.schemas import schema

SCHEMA_VERSIONS = (1, 2)  # what readers accept
HAND_VERSION = 1  # what the hand-written client writes: v1's strict names catch typos in names people type
DEFAULT_MAX_EVENT_BYTES = 1_048_576
RUNNING = "running"  # the status of a run with a start and no end yet (not an event value)

# Columns of one staged event, in order, with their SQL types: the one list the Spark job's
# output, the warehouse staging table's DDL and ``to_staged_row`` all follow, so adding a
# column is one edit here plus the merge that reads it.
STAGED_COLUMNS: dict[str, str] = {
    "event_id": "text", "kind": "text", "event_time_us": "bigint", "namespace": "text", "application": "text",
    "program_type": "text", "program": "text", "run_id": "text", "status": "text", "dataset_namespace": "text",
    "dataset_type": "text", "dataset": "text", "access": "text", "component": "text", "payload": "text",
    "source_file": "text", "line_number": "bigint", "line_id": "text",
}
# ``line_id``: for the events an OpenLineage line stands for (its kept event and what it expands
# to), the line's own event id: the compaction's ledger records the line once, not each event.
# A parsed log line: a valid event's staged columns, or a rejected line's reason and raw text.
PARSED_COLUMNS: dict[str, str] = {**STAGED_COLUMNS, "reason": "text", "raw_text": "text"}


def kinds() -> list[str]:
    """The event kinds, as the schema lists them."""
    return list(schema()["properties"]["kind"]["enum"])


def access_types() -> list[str]:
    """The access types of a dataset access, as the schema lists them."""
    return list(schema()["definitions"]["dataset_access"]["properties"]["access"]["enum"])


def dataset_types() -> list[str]:
    """The types of data an event names (``dataset`` when absent), as the schema lists them."""
    return list(schema()["definitions"]["dataset_ref"]["properties"]["type"]["enum"])


def run_statuses() -> list[str]:
    """The statuses a run can have: ``running``, then those a run end carries in the schema."""
    return [RUNNING, *schema()["definitions"]["run_end"]["properties"]["status"]["enum"]]


@cache
def _validators(version: int) -> tuple[Callable[[Any], Any], dict[str, Callable[[Any], Any]]]:
    """The envelope validator and one payload validator per kind, compiled from the schema file.

    The file states per-kind payloads as ``allOf: [{if: kind, then: payload $ref}]``, which any
    JSON Schema tool understands; compiled as written, each event would try every branch.
    Here the same file is compiled as the envelope alone plus the payload schema its own
    ``allOf`` names for each kind, so the rules still live only in the file.
    """
    full = schema(version)
    envelope = {key: value for key, value in full.items() if key != "allOf"}
    payloads: dict[str, Callable[[Any], Any]] = {}
    def payload_ref(branch: dict[str, Any]) -> str | None:
        ref = branch["then"].get("properties", {}).get("payload", {}).get("$ref")
        return None if ref is None else str(ref)

    # rules on the event as a whole (v2: which kinds need a run, what a run-less one may say)
    envelope_rules = [branch for branch in full["allOf"] if payload_ref(branch) is None]
    if envelope_rules:
        envelope["allOf"] = envelope_rules
    for branch in full["allOf"]:
        ref = payload_ref(branch)
        if ref is not None:
            kind = branch["if"]["properties"]["kind"]["const"]
            payloads[kind] = fastjsonschema.compile({"definitions": full["definitions"], "$ref": ref})
    return fastjsonschema.compile(envelope), payloads


@dataclass(frozen=True)
class Rejection:
    """Why one log line is not a valid event."""

    reason: str


def format_time(moment: datetime) -> str:
    """Render a zoned datetime as the RFC 3339 UTC text events carry."""
    if moment.tzinfo is None:
        raise InvalidEventError(f"event times must carry a time zone, got naive {moment!r}")
    return moment.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def parse_time(text: str) -> datetime:
    """Parse an RFC 3339 time with an offset; naive times are rejected."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError as exc:
        raise InvalidEventError(f"event_time {text!r} is not an RFC 3339 time") from exc
    if moment.tzinfo is None:
        raise InvalidEventError(f"event_time {text!r} has no UTC offset")
    return moment


def new_event(
    kind: str,
    namespace: str,
    run: Mapping[str, str],
    payload: Mapping[str, Any],
    *,
    event_time: datetime | None = None,
    event_id: str | None = None,
    producer: str | None = None,
    schema_version: int = SCHEMA_VERSION,
) -> dict[str, Any]:
    """Build one event of format ``schema_version`` and validate it; raises InvalidEventError
    with the schema's reason."""
    event = _assembled(kind, namespace, run, payload, event_time=event_time or datetime.now(UTC),
                       event_id=event_id or str(uuid.uuid4()), producer=producer, schema_version=schema_version)
    _check_whole(event)
    return event


def derived_event(
    kind: str,
    namespace: str,
    run: Mapping[str, str],
    payload: Mapping[str, Any],
    *,
    event_time: datetime,
    event_id: str,
    producer: str | None = None,
    job: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """``new_event`` for an event the core derives from one it has validated (the OpenLineage
    expansion derives runs, accesses, field operations and schemas from an envelope that
    ``parse_line`` or ``new_event`` accepted): the trusted construction.

    Its builder made its structure, so only what varies with the source's content is checked:
    each text and list against the schema's rule for its place, and a schema change's field
    names (``lineage.model.derived_checks``). When all of that holds, the event is valid without the
    JSON Schema walk. When anything does not (or is of a shape the rules do not cover), the
    event is checked as ``new_event`` checks it, so it is refused with the schema's own reason.
    Not checked again: that its strings are storable (its source's were; derivation copies or
    cuts them) and a field-operations record's resolution (``field_paths.normalize``: ids,
    origins), which the expansion's construction guarantees and its tests check.
    """
    event = _assembled(kind, namespace, run, payload, event_time=event_time, event_id=event_id, producer=producer,
                       schema_version=SCHEMA_VERSION)
    if job:  # a program's declared access: its program, without a run
        event["job"] = dict(job)
    if not plainly_valid(event):
        _check_whole(event)
    return event


def _assembled(kind: str, namespace: str, run: Mapping[str, str], payload: Mapping[str, Any], *,
               event_time: datetime, event_id: str, producer: str | None, schema_version: int) -> dict[str, Any]:
    event: dict[str, Any] = {
        "schema_version": schema_version,
        "event_id": event_id,
        "kind": kind,
        "event_time": format_time(event_time),
        "namespace": namespace,
        "payload": dict(payload),
    }
    if run:  # an openlineage event carries its run inside its payload
        event["run"] = dict(run)
    if producer:
        event["producer"] = producer
    return event


def _check_whole(event: dict[str, Any]) -> None:
    """Every check of an event built in this process: the schema and the semantics
    (``validate_event``), then that it can be written as a log line and stored."""
    validate_event(event)
    try:
        rendered = orjson.dumps(event)
    except TypeError as exc:  # a lone surrogate (e.g. '\ud800' from a bad decode) has no UTF-8 form
        raise InvalidEventError(f"strings must be valid Unicode text that UTF-8 can encode: {exc}") from exc
    refuse_nul(rendered, event)


def validate_event(event: Any) -> None:
    """Raise InvalidEventError unless ``event`` is a valid event of a known format version."""
    version = event.get("schema_version", SCHEMA_VERSION) if isinstance(event, dict) else SCHEMA_VERSION
    if version not in SCHEMA_VERSIONS or isinstance(version, bool):
        raise InvalidEventError(
            f"unknown schema_version {version!r}; this reader knows {', '.join(map(str, SCHEMA_VERSIONS))}"
        )
    envelope, payloads = _validators(version)
    if isinstance(event.get("job"), dict):  # the schema says so too, in words less clear
        if "run" in event:
            raise InvalidEventError("an event names a run or, for a declared access, a program without a run "
                                    "(job); not both")
        if event.get("kind") not in ("dataset_access", "run_facets"):
            raise InvalidEventError(f"only a dataset_access or run_facets may name a program without a run (job), "
                                    f"not a {str(event.get('kind'))[:40]!r} event")
    try:
        envelope(event)
    except fastjsonschema.JsonSchemaValueException as exc:
        raise InvalidEventError(f"schema violation: {exc.message}") from exc
    for owner in ("run", "job"):
        if (program_type := (event.get(owner) or {}).get("program_type")) in DATA_TYPES:
            raise InvalidEventError(f"{owner}.program_type {program_type!r} is a data type: a program's type may "
                                    f"be neither {' nor '.join(DATA_TYPES)} (its id would read as a dataset's)")
    if event["kind"] == "openlineage":  # first, for the reasons HTTP and the transport give too
        check_openlineage(event["payload"])
    _validate_payload(event, payloads)


def _validate_payload(event: dict[str, Any], payloads: dict[str, Callable[[Any], Any]]) -> None:
    try:
        payloads[event["kind"]](event["payload"])
    except fastjsonschema.JsonSchemaValueException as exc:
        message = exc.message.replace("data", "data.payload", 1)
        raise InvalidEventError(f"schema violation: {message}") from exc
    parse_time(event["event_time"])
    if event["kind"] == "field_operations":
        try:
            normalize(event["payload"], event["namespace"])
        except InvalidFieldOperationsError as exc:
            raise InvalidEventError(f"field operations: {exc}") from exc
    elif event["kind"] == "metadata_change":
        try:
            parse_change(event["payload"])
        except InvalidMetadataChangeError as exc:
            raise InvalidEventError(f"metadata change: {exc}") from exc


def parse_line(line: str, max_bytes: int = DEFAULT_MAX_EVENT_BYTES,
               latest: datetime | None = None) -> dict[str, Any] | Rejection:
    """Parse and validate one log line: the event, or a Rejection naming the reason. An event
    time after ``latest`` (the reader's clock plus the allowed skew) is refused: it would win
    "later event wins" for its key for ever."""
    if len(line) * 4 > max_bytes:  # a character is at most 4 bytes: only a line this long can be over
        size = len(line.encode("utf-8", errors="surrogatepass"))
        if size > max_bytes:
            return Rejection(f"event is {size} bytes, over the {max_bytes}-byte limit")
    try:
        event = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        return Rejection(f"malformed JSON at column {exc.colno}: {exc.msg}")
    if not isinstance(event, dict):
        return Rejection(f"an event must be a JSON object, got {type(event).__name__}")
    if ("\\u0000" in line or "\x00" in line) and contains_nul(event):
        return Rejection(NUL_REFUSAL)
    try:
        validate_event(event)
    except InvalidEventError as exc:
        return Rejection(str(exc))
    if latest is not None and parse_time(event["event_time"]) > latest:
        return Rejection(f"event_time {event['event_time']} is ahead of the compaction's clock by more than "
                         f"the allowed skew (latest accepted: {format_time(latest)})")
    return event


QUARANTINE_TEXT_LIMIT = 65_536  # characters of a rejected line the quarantine keeps


def quarantine_text(line: str, limit: int = QUARANTINE_TEXT_LIMIT) -> str:
    """The raw line as stored in the quarantine: NUL characters shown as the text ``\\u0000``;
    a line over ``limit`` characters is cut there and ends with its whole size and SHA-256, so
    an oversized line never costs its size again and can still be matched to its source."""
    text = line.replace("\x00", "\\u0000")
    if len(text) <= limit:
        return text
    whole = line.encode("utf-8", errors="surrogateescape")
    return (f"{text[:limit]}… [cut: the line is {len(whole)} bytes, "
            f"sha256 {hashlib.sha256(whole).hexdigest()}]")


NUL_REFUSAL = "strings must not contain NUL (U+0000) characters; PostgreSQL text cannot store them"


def refuse_nul(rendered: bytes, value: Any) -> None:
    """InvalidEventError when a text of ``value`` holds a NUL character; ``rendered`` is its JSON
    (which writes NUL as \\u0000: only then is ``value`` walked, the text "\\u0000" also renders so)."""
    if b"\\u0000" in rendered and contains_nul(value):
        raise InvalidEventError(NUL_REFUSAL)


def contains_nul(value: Any) -> bool:
    """Whether a NUL character is in any text of ``value`` (keys included)."""
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(contains_nul(key) or contains_nul(item) for key, item in value.items())
    if isinstance(value, list):
        return any(contains_nul(item) for item in value)
    return False


def to_staged_row(event: Mapping[str, Any], source_file: str, line_number: int) -> dict[str, Any]:
    """Flatten a valid event into the staged-event columns (STAGED_COLUMNS)."""
    # none: a dataset declared without a run (dataset_facets, metadata_change); a program's
    # declared access names its program (job) and no run
    run = event.get("run") or event.get("job") or {}
    payload = event["payload"]
    kind = event["kind"]
    moment = parse_time(event["event_time"])
    row: dict[str, Any] = dict.fromkeys(STAGED_COLUMNS)
    row.update(
        event_id=event["event_id"],
        kind=kind,
        event_time_us=_epoch_micros(moment),
        namespace=event["namespace"],
        application=run.get("application"),
        program_type=run.get("program_type"),
        program=run.get("program"),
        run_id=run.get("run_id"),
        source_file=source_file,
        line_number=line_number,
    )
    if kind == "run_end":
        row["status"] = payload["status"]
    elif kind == "dataset_access":
        dataset = payload["dataset"]
        row.update(
            dataset_namespace=dataset.get("namespace", event["namespace"]),
            dataset_type=dataset.get("type", "dataset"),
            dataset=dataset["name"],
            access=payload["access"],
            component=payload.get("component", ""),
        )
    if kind == "dataset_facets":
        dataset = payload["dataset"]
        row.update(dataset_namespace=dataset.get("namespace", event["namespace"]),
                   dataset_type=dataset.get("type", "dataset"), dataset=dataset["name"])
    if kind == "field_operations":
        # the namespace of the dataset it writes, checked by the compaction as an access's is (a
        # record writing into a namespace that does not exist is quarantined with its line)
        destination = payload.get("destination")
        named = destination.get("namespace") if isinstance(destination, Mapping) else None
        row["dataset_namespace"] = named if isinstance(named, str) else event["namespace"]
    if kind == "metadata_change":
        # the namespace of the entity it changes, checked by the compaction as an access's is: a
        # change to an entity of a namespace that does not exist is quarantined with its line (and
        # replayed with it), not set aside later by the metadata stage where no replay reaches it
        entity = payload.get("entity")
        first = entity[0] if isinstance(entity, list) and entity else None
        if isinstance(first, list) and len(first) == 2 and first[0] == "namespace" and isinstance(first[1], str):
            row["dataset_namespace"] = first[1]
    if kind in ("field_operations", "metadata_change", "run_parent", "run_facets", "dataset_facets", "openlineage"):
        # Kept whole: the field-lineage and metadata stages own the semantics of the first two, the
        # merge reads the others' JSON.
        row["payload"] = orjson.dumps(payload, option=orjson.OPT_SORT_KEYS).decode("utf-8")
    return row


def _epoch_micros(moment: datetime) -> int:
    delta = moment - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds

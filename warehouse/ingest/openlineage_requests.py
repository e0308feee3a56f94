"""What the OpenLineage HTTP endpoint does with a request body, as pure functions: decode it
(one event or a JSON array of events, optionally gzip), then sort its events into the raw-log
lines to append and the ones refused, each with its index and reason.

Every request costs at most what its limits allow, whatever its content (``IngestLimits``):

- the body inflates to at most ``LINEAGE_INGEST_MAX_REQUEST_MB`` (413 past it);
- an array holds at most ``LINEAGE_INGEST_MAX_EVENTS`` events (413, before any is checked);
- one event is at most ``LINEAGE_MAX_EVENT_BYTES`` once wrapped for the log (413 for a lone
  event; in an array that element is refused and the others land);
- an array whose structure is large is split into its elements without building them
  (``split_array``), so a few megabytes of ``[{},{},...]`` never become millions of objects, and an
  element that is not JSON, or nests deeper than the log can write, is refused alone.

Each event is checked alone, so the good events of a request land even when others are
refused: a malformed event is refused with the reason the envelope check gives
(``OpenLineage event: run.runId is missing``), an event touching a namespace the caller may not
write is refused naming it (every route an event has into the warehouse: see
``lineage.openlineage.mapping.referenced_namespaces``).
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from lineage.errors import InvalidEventError, InvalidRequestError, RequestTooLargeError
from lineage.model.events import NUL_REFUSAL
from lineage.naming.identity import NamespaceMap
from lineage.openlineage.mapping import touched_namespaces, wrap

SHOWN_REFUSALS = 20  # an answer names this many refused events, and counts the rest
# A body of fewer values than this is parsed whole (fast, bounded: as many objects at most); a
# larger one is split into its elements first. A body of at most twice as many bytes cannot hold
# more (each value but the first follows a separator), so only larger bodies are counted.
_PARSE_WHOLE_BELOW = 500_000
# A JSON string (escapes included), or one structural character: what ``split_array`` steps over.
_TOKENS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{},]')
_SPACE = b" \t\r\n"


@dataclass(frozen=True)
class IngestLimits:
    """What one request may cost: ``LINEAGE_INGEST_MAX_REQUEST_MB`` (as bytes, after gzip),
    ``LINEAGE_INGEST_MAX_EVENTS``, ``LINEAGE_MAX_EVENT_BYTES``."""

    body_bytes: int
    events: int
    event_bytes: int


@dataclass(frozen=True)
class Refused:
    index: int
    reason: str
    too_large: bool = False


@dataclass
class Sorted:
    """A request's events: the lines to append (newline-terminated JSON), and the refused ones."""

    events: int = 0
    lines: list[bytes] = field(default_factory=list)
    invalid: list[Refused] = field(default_factory=list)
    forbidden: list[Refused] = field(default_factory=list)

    @property
    def accepted(self) -> int:
        return len(self.lines)

    def refused(self) -> list[Refused]:
        return sorted([*self.invalid, *self.forbidden], key=lambda item: item.index)

    def status(self) -> int:
        """201 when every event landed; else 400 (a malformed event), 413 (only events over the
        size limit among the malformed), or 403 (only forbidden ones)."""
        if not self.invalid and not self.forbidden:
            return 201
        if self.invalid:
            return 413 if all(item.too_large for item in self.invalid) else 400
        return 403

    def answer(self) -> dict[str, Any]:
        """The answer's body: a few kilobytes whatever the request (``SHOWN_REFUSALS`` refusals
        named, the rest counted)."""
        refused = self.refused()
        body: dict[str, Any] = {"accepted": self.accepted,
                                "refused": [{"index": item.index, "reason": item.reason[:300]}
                                            for item in refused[:SHOWN_REFUSALS]]}
        if len(refused) > SHOWN_REFUSALS:
            body["refusedNotShown"] = len(refused) - SHOWN_REFUSALS
        if refused:
            first = refused[0]
            status = self.status()
            body = {"message": first.reason[:300] if self.events == 1 else
                    f"{len(refused)} of {self.events} events refused; event {first.index}: {first.reason[:300]}",
                    "status": status, **body}
        return body


def inflate(raw: bytes, content_encoding: str | None, max_bytes: int) -> bytes:
    """The body as JSON text: ``gzip`` bodies inflated up to ``max_bytes`` (RequestTooLargeError
    past it); InvalidRequestError for an encoding other than gzip or none."""
    encoding = (content_encoding or "identity").strip().lower()
    if encoding in ("gzip", "x-gzip"):
        raw = _gunzip(raw, max_bytes)
    elif encoding != "identity":
        raise InvalidRequestError(f"Content-Encoding {encoding[:40]!r} is not supported; send gzip or none")
    if len(raw) > max_bytes:
        raise RequestTooLargeError(f"the request body is over {max_bytes} bytes")
    return raw


def decode_body(raw: bytes, content_encoding: str | None, limits: IngestLimits) -> list[Any]:
    """The request's events: a JSON object is one event, a JSON array several; an element that
    cannot be one (not JSON, too large, too deep) is a ``Refused`` in its place.
    RequestTooLargeError past a limit, InvalidRequestError for a body that is not JSON."""
    text = inflate(raw, content_encoding, limits.body_bytes).strip(_SPACE)
    if text[:1] == b"{":
        if len(text) > limits.event_bytes:
            raise RequestTooLargeError(f"the event is {len(text)} bytes, over the {limits.event_bytes}-byte limit "
                                       "(LINEAGE_MAX_EVENT_BYTES)")
        return [_loads(text)]
    if text[:1] != b"[":
        body = _loads(text)  # not JSON: the parser's reason; JSON: the wrong type
        raise InvalidRequestError(f"the body must be an OpenLineage event (a JSON object) or an array of them, "
                                  f"not {type(body).__name__}")
    if len(text) < 2 * _PARSE_WHOLE_BELOW or _structure(text) < _PARSE_WHOLE_BELOW:
        try:
            events = orjson.loads(text)
        except orjson.JSONDecodeError:
            events = None  # an element that is not JSON (or nests too deep): refused alone below
        if isinstance(events, list):
            _check_count(len(events), limits.events)
            return events
    return [_element(piece, index, limits) for index, piece in enumerate(split_array(text, limits.events))]


def _loads(text: bytes) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise InvalidRequestError(f"the body is not JSON: {exc}") from exc


def _structure(text: bytes) -> int:
    """An upper bound of the values in ``text``: every value but the first follows one of these."""
    return sum(text.count(char) for char in (b",", b":", b"[", b"{"))


def _check_count(count: int, max_events: int) -> None:
    if count == 0:
        raise InvalidRequestError("the body is an empty array: send one event or an array of events")
    if count > max_events:
        raise RequestTooLargeError(f"the array holds over {max_events} events (LINEAGE_INGEST_MAX_EVENTS): "
                                   "send fewer per request")


def split_array(text: bytes, max_elements: int) -> list[bytes]:
    """The elements of the JSON array ``text`` as byte slices, found without parsing them (strings
    are stepped over whole). RequestTooLargeError once past ``max_elements``; InvalidRequestError
    when the array is not closed or something follows it."""
    pieces: list[bytes] = []
    depth = 0
    start = 0
    end = -1
    for token in _TOKENS.finditer(text):
        char = token.group()
        if len(char) != 1:
            continue  # a string
        if char in b"[{":
            depth += 1
            if depth == 1:
                start = token.end()
        elif char in b"]}":
            depth -= 1
            if depth == 0:
                end = token.start()
                break
        elif depth == 1:  # a comma between two elements
            pieces.append(text[start:token.start()])
            start = token.end()
            if len(pieces) > max_elements:
                _check_count(len(pieces), max_elements)
    if end < 0 or text[end + 1:].strip(_SPACE):
        raise InvalidRequestError("the body is not JSON: the array is not closed, or something follows it")
    last = text[start:end]
    if last.strip(_SPACE) or pieces:
        pieces.append(last)
    _check_count(len(pieces), max_elements)
    return pieces


def _element(piece: bytes, index: int, limits: IngestLimits) -> Any:
    piece = piece.strip(_SPACE)
    if len(piece) > limits.event_bytes:
        return Refused(index, f"the event is {len(piece)} bytes, over the {limits.event_bytes}-byte limit "
                              "(LINEAGE_MAX_EVENT_BYTES)", too_large=True)
    try:
        return orjson.loads(piece)
    except orjson.JSONDecodeError as exc:
        return Refused(index, f"the event is not JSON: {exc}")


def _gunzip(raw: bytes, max_bytes: int) -> bytes:
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        data = inflater.decompress(raw, max_bytes + 1)
    except zlib.error as exc:
        raise InvalidRequestError(f"the body is not valid gzip: {exc}") from exc
    if len(data) > max_bytes:
        raise RequestTooLargeError(f"the request body inflates to over {max_bytes} bytes")
    if not inflater.eof:
        raise InvalidRequestError("the gzip body is truncated")
    return data


def sort_events(events: list[Any], namespaces: NamespaceMap, may_write: Callable[[str], bool],
                max_event_bytes: int) -> Sorted:
    """Wrap each acceptable event for the raw log; refuse the malformed and oversized
    (``invalid``) and those writing into a namespace ``may_write`` refuses (``forbidden``)."""
    result = Sorted(events=len(events))
    for index, event in enumerate(events):
        if isinstance(event, Refused):
            result.invalid.append(event)
            continue
        refusal = _sorted_one(index, event, namespaces, may_write, max_event_bytes)
        if isinstance(refusal, bytes):
            result.lines.append(refusal)
        elif refusal.reason.startswith("no WRITE"):
            result.forbidden.append(refusal)
        else:
            result.invalid.append(refusal)
    return result


def _sorted_one(index: int, event: Any, namespaces: NamespaceMap, may_write: Callable[[str], bool],
                max_event_bytes: int) -> bytes | Refused:
    """The event's log line, or why it is refused."""
    try:
        envelope = wrap(event, namespaces)
    except InvalidEventError as exc:
        return Refused(index, str(exc))
    refused = sorted(namespace for namespace in touched_namespaces(envelope) if not may_write(namespace))
    if refused:
        return Refused(index, f"no WRITE on namespace {', '.join(refused)}")
    try:
        line = orjson.dumps(envelope)
    except orjson.JSONEncodeError as exc:  # nested deeper than the log's writer goes (254 levels)
        return Refused(index, f"the event cannot be written to the log: {exc}")
    if len(line) > max_event_bytes:
        return Refused(index, f"the event is {len(line)} bytes in the log, over the {max_event_bytes}-byte "
                              "limit (LINEAGE_MAX_EVENT_BYTES)", too_large=True)
    if b"\\u0000" in line:
        return Refused(index, NUL_REFUSAL)
    return line + b"\n"


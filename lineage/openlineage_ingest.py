"""What the OpenLineage HTTP endpoint does with a request body, as pure functions: decode it
(one event or a JSON array of events, optionally gzip), then sort its events into the raw-log
lines to append and the ones refused, each with its index and reason.

Each event is checked alone, so the good events of a request land even when others are
refused: a malformed event is refused with the reason the envelope check gives
(``OpenLineage event: run.runId is missing``), an event touching a namespace the caller may not
write is refused naming it. An event over the line size limit is accepted and written, so the
compaction quarantines it with its reason, as it does for every producer.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from lineage.errors import InvalidEventError, InvalidRequestError, RequestTooLargeError
from lineage.identity import NamespaceMap
from lineage.openlineage_mapping import touched_namespaces, wrap


@dataclass(frozen=True)
class Refused:
    index: int
    reason: str


@dataclass
class Sorted:
    """A request's events: the lines to append (newline-terminated JSON), and the refused ones."""

    lines: list[bytes] = field(default_factory=list)
    invalid: list[Refused] = field(default_factory=list)
    forbidden: list[Refused] = field(default_factory=list)

    @property
    def accepted(self) -> int:
        return len(self.lines)


def decode_body(raw: bytes, content_encoding: str | None, max_bytes: int) -> list[Any]:
    """The request's events: a JSON object is one event, a JSON array several. ``gzip`` bodies
    are inflated up to ``max_bytes``; RequestTooLargeError past it, InvalidRequestError for
    anything that is not JSON."""
    encoding = (content_encoding or "identity").strip().lower()
    if encoding in ("gzip", "x-gzip"):
        raw = _gunzip(raw, max_bytes)
    elif encoding != "identity":
        raise InvalidRequestError(f"Content-Encoding {encoding[:40]!r} is not supported; send gzip or none")
    if len(raw) > max_bytes:
        raise RequestTooLargeError(f"the request body is over {max_bytes} bytes")
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise InvalidRequestError(f"the body is not JSON: {exc}") from exc
    if isinstance(body, dict):
        return [body]
    if isinstance(body, list):
        if not body:
            raise InvalidRequestError("the body is an empty array: send one event or an array of events")
        return body
    raise InvalidRequestError(f"the body must be an OpenLineage event (a JSON object) or an array of them, "
                              f"not {type(body).__name__}")


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


def sort_events(events: list[Any], namespaces: NamespaceMap, may_write: Callable[[str], bool]) -> Sorted:
    """Wrap each acceptable event for the raw log; refuse the malformed (``invalid``) and those
    writing into a namespace ``may_write`` refuses (``forbidden``)."""
    result = Sorted()
    for index, event in enumerate(events):
        try:
            envelope = wrap(event, namespaces)
        except InvalidEventError as exc:
            result.invalid.append(Refused(index, str(exc)))
            continue
        refused = sorted(namespace for namespace in touched_namespaces(event, namespaces) if not may_write(namespace))
        if refused:
            result.forbidden.append(Refused(index, f"no WRITE on namespace {', '.join(refused)}"))
            continue
        result.lines.append(orjson.dumps(envelope) + b"\n")
    return result

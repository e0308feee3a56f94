"""OpenLineage in, Marquez-compatible: ``POST /lineage/api/v1/lineage`` takes one OpenLineage
event (RunEvent, DatasetEvent, JobEvent) or a JSON array of them, optionally gzip. The stock
HTTP transport of ``openlineage-python`` works with ``url=http://<airflow>/lineage`` (it then
posts to ``/api/v1/lineage``, where the plugin mounts this route too) or ``.../lineage/``.

Each acceptable event is appended verbatim to the raw log (``warehouse.ingest.sealed_log``: few files,
sealed by age or size) and the answer comes once it is on disk (the log's writer thread syncs
once for all the requests that arrived meanwhile); the endpoint never writes
warehouse tables, the compaction does. 201 when every event landed; 400 (malformed) or 403 (a
namespace the poster may not write) listing the refused ones, the others of the request landed.
The poster is an ingest key's principal or a logged-in Airflow user, who needs WRITE on every
warehouse namespace an event touches.
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from lineage.errors import NotAuthorizedError, RequestTimeoutError, RequestTooLargeError
from lineage.settings import Settings
from lineage_api.http_errors import answers
from lineage_api.ingest_auth import IngestCaller
from lineage_api.models.openlineage import LineageAccepted
from warehouse.ingest.openlineage_requests import IngestLimits, Sorted, decode_body, sort_events
from warehouse.ingest.sealed_log import SealedLog
from warehouse.service.authorization import Privilege, namespace_key

router = APIRouter()  # at /api/v1 of the app, and alone at Airflow's /api/v1 (lineage_api.app)

INLINE_BYTES = 16 * 1024  # plain bodies up to this size (a few events) are checked on the event loop


@router.post("/lineage", status_code=201, response_model=LineageAccepted,
             responses={**answers(400, 401, 403, 408, 413, 503)},
             openapi_extra={"requestBody": {"required": True, "content": {"application/json": {"schema": {
                 "description": "an OpenLineage event (spec 2-0-x) or a JSON array of them; "
                                "Content-Encoding: gzip is accepted", "type": ["object", "array"]}}}}})
async def post_lineage(request: Request, caller: IngestCaller) -> Any:
    """Append OpenLineage events to the raw log (durable when this answers).

    The caller is known and holds WRITE somewhere before a byte of the body is read; the body
    is read within ``LINEAGE_INGEST_READ_SECONDS``; a large or gzip body is decoded and checked
    in a worker thread, so the event loop keeps answering; the answer names at most 20 refused
    events and counts the others."""
    if not caller.writes_some_namespace():
        raise NotAuthorizedError(f"user {caller.principal!r} holds WRITE on no namespace: nothing to post")
    settings: Settings = request.app.state.settings
    limits = IngestLimits(body_bytes=settings.ingest_max_request_mb * 1024 * 1024,
                          events=settings.ingest_max_events, event_bytes=settings.max_event_bytes)
    raw = await _body(request, limits.body_bytes, settings.ingest_read_seconds)
    encoding = request.headers.get("content-encoding")

    def sort() -> Sorted:
        events = decode_body(raw, encoding, limits)
        return sort_events(events, settings.namespace_map,
                           lambda namespace: caller.allows_key(namespace_key(namespace), Privilege.WRITE),
                           limits.event_bytes)

    # a small plain body is checked on the event loop (a worker thread costs more than its
    # checks); a large or gzip one in a worker thread, so the loop answers other requests meanwhile
    inline = len(raw) <= INLINE_BYTES and (encoding or "identity").strip().lower() == "identity"
    outcome = sort() if inline else await run_in_threadpool(sort)
    if outcome.lines:
        ingest_log: SealedLog = request.app.state.ingest_log
        await asyncio.wrap_future(ingest_log.submit(b"".join(outcome.lines)))  # durable: group commit
    return JSONResponse(outcome.answer(), status_code=outcome.status())


async def _body(request: Request, limit: int, seconds: int) -> bytes:
    """The raw body, read at most ``limit`` bytes within ``seconds`` (a gzip body is inflated and
    checked after)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise RequestTooLargeError(f"the request body is over {limit} bytes (LINEAGE_INGEST_MAX_REQUEST_MB)")
    chunks: list[bytes] = []
    size = 0
    try:
        async with asyncio.timeout(seconds):
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    raise RequestTooLargeError(f"the request body is over {limit} bytes "
                                               "(LINEAGE_INGEST_MAX_REQUEST_MB)")
                chunks.append(chunk)
    except TimeoutError:
        raise RequestTimeoutError(f"the request body was not received within {seconds} s "
                                  "(LINEAGE_INGEST_READ_SECONDS)") from None
    return b"".join(chunks)

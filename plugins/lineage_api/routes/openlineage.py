"""OpenLineage in, Marquez-compatible: ``POST /lineage/api/v1/lineage`` takes one OpenLineage
event (RunEvent, DatasetEvent, JobEvent) or a JSON array of them, optionally gzip. The stock
HTTP transport of ``openlineage-python`` works with ``url=http://<airflow>/lineage`` (it then
posts to ``/api/v1/lineage``, where the plugin mounts this route too) or ``.../lineage/``.

Each acceptable event is appended verbatim to the raw log (``lineage.sealed_log``: few files,
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

from lineage.authorization import Privilege, namespace_key
from lineage.errors import RequestTooLargeError
from lineage.openlineage_ingest import Sorted, decode_body, sort_events
from lineage.sealed_log import SealedLog
from lineage.settings import Settings
from lineage_api.http_errors import answers
from lineage_api.ingest_auth import IngestCaller
from lineage_api.models import LineageAccepted

router = APIRouter()  # at /api/v1 of the app, and alone at Airflow's /api/v1 (lineage_api.app)

INLINE_BYTES = 64 * 1024  # plain bodies up to this size (a dozen events) are checked on the event loop


@router.post("/lineage", status_code=201, response_model=LineageAccepted,
             responses={**answers(400, 401, 403, 413, 503)},
             openapi_extra={"requestBody": {"required": True, "content": {"application/json": {"schema": {
                 "description": "an OpenLineage event (spec 2-0-x) or a JSON array of them; "
                                "Content-Encoding: gzip is accepted", "type": ["object", "array"]}}}}})
async def post_lineage(request: Request, caller: IngestCaller) -> Any:
    """Append OpenLineage events to the raw log (durable when this answers)."""
    settings: Settings = request.app.state.settings
    limit = settings.ingest_max_request_mb * 1024 * 1024
    raw = await _body(request, limit)
    encoding = request.headers.get("content-encoding")

    def sort() -> tuple[list[Any], Sorted]:
        events = decode_body(raw, encoding, limit)
        return events, sort_events(events, settings.namespace_map,
                                   lambda namespace: caller.allows_key(namespace_key(namespace), Privilege.WRITE))

    # a small plain body is checked on the event loop (a worker thread costs more than its
    # checks); a large or gzip one in a worker thread, so the loop answers other requests meanwhile
    inline = len(raw) <= INLINE_BYTES and (encoding or "identity").strip().lower() == "identity"
    events, outcome = sort() if inline else await run_in_threadpool(sort)
    if outcome.lines:
        ingest_log: SealedLog = request.app.state.ingest_log
        await asyncio.wrap_future(ingest_log.submit(b"".join(outcome.lines)))  # durable: group commit
    refused = sorted([*outcome.invalid, *outcome.forbidden], key=lambda item: item.index)
    body = {"accepted": outcome.accepted, "refused": [{"index": r.index, "reason": r.reason} for r in refused]}
    if not refused:
        return JSONResponse(body, status_code=201)
    status = 400 if outcome.invalid else 403
    first = refused[0]
    message = (first.reason if len(events) == 1
               else f"{len(refused)} of {len(events)} events refused; event {first.index}: {first.reason}")
    return JSONResponse({"message": message, "status": status, **body}, status_code=status)


async def _body(request: Request, limit: int) -> bytes:
    """The raw body, read at most ``limit`` bytes (a gzip body is inflated and checked after)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise RequestTooLargeError(f"the request body is over {limit} bytes")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise RequestTooLargeError(f"the request body is over {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)

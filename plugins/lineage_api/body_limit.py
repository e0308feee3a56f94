"""The API's request body limit: a body over ``LINEAGE_LIMIT_REQUEST_MB`` is answered 413,
naming the setting, before any route reads it. OpenLineage ingest (``.../api/v1/lineage``) has
its own, larger limit (``LINEAGE_INGEST_MAX_REQUEST_MB``) and is left to its route."""

from __future__ import annotations

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from lineage.limits import limits, setting

_INGEST_SUFFIX = "/api/v1/lineage"


class BodyLimit:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS") \
                or scope["path"].rstrip("/").endswith(_INGEST_SUFFIX):
            await self.app(scope, receive, send)
            return
        limit = limits().request_mb * 1024 * 1024
        declared = dict(scope.get("headers") or []).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > limit:
            await _too_large(send, limit)
            return
        body, more = [], True  # a body sent without a length: read it, up to the limit, then replay it
        size = 0
        while more:
            message = await receive()
            if message["type"] != "http.request":
                await self.app(scope, _replay([message]), send)
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                await _too_large(send, limit)
                return
            body.append(chunk)
            more = bool(message.get("more_body"))
        await self.app(scope, _replay([{"type": "http.request", "body": b"".join(body), "more_body": False}],
                                      receive), send)


def _replay(messages: list[Message], then: Receive | None = None) -> Receive:
    async def receive() -> Message:
        if messages:
            return messages.pop(0)
        if then is not None:
            return await then()
        return {"type": "http.disconnect"}
    return receive


async def _too_large(send: Send, limit: int) -> None:
    body = orjson.dumps({"message": f"the request body is over {limit} bytes ({setting('request_mb')})",
                         "status": 413})
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})

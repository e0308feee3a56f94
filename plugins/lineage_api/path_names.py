"""Names holding ``/`` in API paths. A dataset's name may be an identity such as
``s3://lake/sales/2026`` (``lineage.naming.identity``); links write it as one path segment, its ``/``
encoded ``%2F`` (``lineage_api.links``). Servers decode the path before routing, which would turn
that segment into several: ``KeepEncodedSlashes`` rebuilds the routed path from the raw one
keeping ``%2F`` (and ``%25``, a ``%`` of the name) encoded, and the ``name`` path convertor
(``{dataset:name}``) decodes them in the value the route receives. A ``{target:path}`` route
splits on ``/`` and decodes each segment with ``segment``.
"""

from __future__ import annotations

import re
from urllib.parse import quote, unquote

from starlette.convertors import Convertor, register_url_convertor
from starlette.types import ASGIApp, Receive, Scope, Send

_KEPT = re.compile(r"%(2[fF]|25)")
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")


def segment(text: str) -> str:
    """A path segment's name: ``%2F`` -> ``/``, ``%25`` -> ``%`` (the rest was decoded already)."""
    return text.replace("%2F", "/").replace("%25", "%") if "%" in text else text


def _decode_keeping_slashes(raw: str) -> str:
    """Decode every escape of ``raw`` but ``%2F`` and ``%25`` (kept, upper-cased)."""
    def one(match: re.Match[str]) -> str:
        code = match.group(1).upper()
        return f"%{code}" if code in ("2F", "25") else match.group(0)

    kept = _ESCAPE.sub(one, raw)
    parts = re.split(r"(%2F|%25)", kept)
    return "".join(part if part in ("%2F", "%25") else unquote(part) for part in parts)


class NameConvertor(Convertor[str]):
    regex = "[^/]+"

    def convert(self, value: str) -> str:
        return segment(value)

    def to_string(self, value: str) -> str:
        return quote(value, safe="")


register_url_convertor("name", NameConvertor())


class KeepEncodedSlashes:
    """ASGI middleware: route on the raw path with ``%2F`` and ``%25`` kept encoded."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        raw = scope.get("raw_path")
        if scope["type"] == "http" and isinstance(raw, bytes) and _KEPT.search(raw.decode("latin-1")):
            rebuilt = _decode_keeping_slashes(raw.decode("utf-8", errors="surrogateescape"))
            if unquote(rebuilt) == scope["path"]:  # the same path, only the name's escapes kept
                scope = {**scope, "path": rebuilt}
        await self.app(scope, receive, send)

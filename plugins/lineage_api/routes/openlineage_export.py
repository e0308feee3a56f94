"""OpenLineage out, Marquez-compatible: ``GET /lineage/api/v1/events/lineage`` gives a window's
lineage as OpenLineage run events (spec 2-0-2), with Marquez's parameters and answer shape
(``{"events": [...], "totalCount": n}``), so scripts written against Marquez read the warehouse.

Events that came in as OpenLineage come back as they came; runs of our own client and of
automatic Spark capture are rendered (``warehouse.service.openlineage_export``). A caller gets
the events touching only namespaces it may read (READ on each whole namespace; an instance admin
everything); the others are counted in ``withheld``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query

from lineage.errors import InvalidRequestError
from lineage_api.deps import Caller, Connection
from lineage_api.http_errors import answers
from lineage_api.models.openlineage import LineageEvents
from warehouse.db.openlineage_export_store import export_page, snapshot

router = APIRouter(responses=answers(400))  # at /api/v1 of the app
MAX_LIMIT = 1000
_EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
_LATEST = datetime(9999, 1, 1, tzinfo=UTC)


def parse_moment(text: str | None, name: str, default: datetime) -> datetime:
    """An ISO 8601 time with an offset (as Marquez takes ``after`` and ``before``)."""
    if text is None or text == "":
        return default
    try:
        moment = datetime.fromisoformat(text.replace(" ", "+"))  # a '+' sent unescaped in a query reads as ' '
    except ValueError:
        raise InvalidRequestError(f"{name} {text[:40]!r} is not an ISO 8601 time "
                                    "(e.g. 2026-11-27T00:00:00+00:00)") from None
    if moment.tzinfo is None:
        raise InvalidRequestError(f"{name} {text[:40]!r} has no offset (add Z or +00:00)")
    return moment


@router.get("/events/lineage", response_model=LineageEvents)
def lineage_events(caller: Caller, conn: Connection,
                   after: Annotated[str | None, Query(description="the window's start (inclusive), ISO 8601 "
                                                                  "with an offset; default: the beginning")] = None,
                   before: Annotated[str | None, Query(description="the window's end (exclusive); default: "
                                                                   "none")] = None,
                   limit: Annotated[int, Query(description=f"events per page, 0 to {MAX_LIMIT}")] = 100,
                   offset: Annotated[int, Query(description="events skipped, 0 or more")] = 0,
                   sortDirection: Annotated[str, Query(description="asc or desc (by event time)")] = "desc",
                   ) -> dict[str, Any]:
    """The window's lineage as OpenLineage run events, a page at a time, newest first by default
    (Marquez's ``GET /api/v1/events/lineage``): OpenLineage events as they came, runs of our own
    client rendered as a START and a COMPLETE, FAIL or ABORT with their datasets, schemas,
    column lineage, parent run and metadata. ``totalCount`` counts the caller's events of the
    window; ``withheld`` those touching a namespace the caller may not read."""
    if not 0 <= limit <= MAX_LIMIT:
        raise InvalidRequestError(f"limit {limit} is not between 0 and {MAX_LIMIT}")
    if offset < 0:
        raise InvalidRequestError(f"offset {offset} is negative")
    if sortDirection not in ("asc", "desc"):
        raise InvalidRequestError(f"sortDirection {sortDirection[:20]!r} is not asc or desc")
    start, end = parse_moment(after, "after", _EARLIEST), parse_moment(before, "before", _LATEST)
    if start >= end:
        raise InvalidRequestError("after must be before before")
    readable = caller.readable()  # None for an instance admin; a grant on the instance reaches into no namespace
    namespaces = None if readable is None else readable.namespaces
    with snapshot(conn):  # the count and the page agree
        page = export_page(conn, start, end, namespaces, ascending=sortDirection == "asc", limit=limit,
                           offset=offset)
    return {"events": page.events, "totalCount": page.total, "withheld": page.withheld}

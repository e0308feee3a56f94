"""Where does a tag go (issue 33): the datasets and fields carrying it in a window, by assignment
or propagation, the edges it crossed and where it stopped; JSON for the page, CSV for an audit."""

from __future__ import annotations

import csv
import io
import re
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response

from lineage.errors import NotFoundError
from lineage.limits import check_window
from lineage_api.deps import Caller, Connection, LineageWindow
from lineage_api.http_errors import answers
from lineage_api.models.field_tags import TagMap
from lineage_api.routes.field_tags import visibility_of
from warehouse.db.tag_propagation_store import EdgeQueries, tagged_fields
from warehouse.service.tag_propagation import (
    CSV_COLUMNS,
    Policy,
    policies_from,
    propagate,
    tag_map,
    tag_map_rows,
)

router = APIRouter(responses=answers(404))
_SAFE = re.compile(r"[^A-Za-z0-9_.-]")  # what a download's file name keeps of the tag


@router.get("/v3/tags/{tag}/map", response_model=TagMap, responses={200: {"content": {"text/csv": {}}}})
def where_a_tag_goes(request: Request, tag: str, window: LineageWindow, caller: Caller, conn: Connection,
                     format: Annotated[Literal["json", "csv"], Query(description="json, or csv for an audit")] = "json",
                     ) -> Any:
    """Where ``tag`` goes in [start, end): the fields it is assigned to and those its values reached
    along field lineage as its policy lets them (``LINEAGE_TAG_POLICIES``; a tag without one is
    walked with the default policy), grouped by dataset; the edges it crossed (a graph) and
    those that stopped it, with why. Datasets and programs the caller may not read are left out
    (counted in ``hidden``) or shown hidden. ``format=csv``: one row per assigned field, reach
    and stop. 404 when the tag is assigned to no field."""
    check_window(*window)
    origins = tagged_fields(conn, [tag]).get(tag, [])
    if not origins:
        raise NotFoundError(f"tag {tag!r} is assigned to no field")
    policy = policies_from(request.app.state.settings.tag_policies).get(tag, Policy())
    walk = propagate(tag, origins, policy, EdgeQueries(conn, *window).out_of)
    answer = tag_map(tag, policy, origins, walk, visibility_of(caller))
    if format == "json":
        return answer
    text = io.StringIO()
    writer = csv.writer(text)
    writer.writerow(CSV_COLUMNS)
    writer.writerows(tag_map_rows(answer))
    return Response(text.getvalue(), media_type="text/csv",
                    headers={"Content-Disposition": f'attachment; filename="tag-{_SAFE.sub("_", tag[:40])}-map.csv"'})

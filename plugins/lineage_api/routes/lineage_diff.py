"""What changed: a dataset's (or stream's) lineage in one window compared with a base window."""

from __future__ import annotations

from typing import Any

import psycopg
from fastapi import APIRouter

from lineage.limits import check_levels, check_window
from lineage_api.deps import BaseEnd, BaseStart, Caller, Changed, Connection, Namespace, TimeWindow, Window
from lineage_api.http_errors import answers
from lineage_api.models.lineage import LineageDiffAnswer
from lineage_api.routes.lineage import Levels, hide_for, node_links, origin_of
from warehouse.db import lineage_store
from warehouse.service.authorization import Access
from warehouse.service.timespec import base_window

router = APIRouter(prefix="/v3/namespaces/{namespace}", responses=answers(404))

def lineage_diff(conn: psycopg.Connection, namespace: str, data_type: str, name: str, window: TimeWindow,
                 base: TimeWindow, levels: int, changed: bool, caller: Access) -> dict[str, Any]:
    """Both windows walked (runs counted, no ids), compared, with the schema changes; READ on the
    data, nodes the caller cannot read hidden (one alias per node across both sides)."""
    check_levels(levels)
    check_window(*window)
    check_window(*base)
    origin = origin_of(conn, namespace, data_type, name, caller)
    answer = lineage_store.diff(conn, origin, window, base, levels, changed_only=changed,
                                shown=lambda relations: hide_for(caller, relations))
    return lineage_store.with_job_types(conn, {**answer, "links": node_links(answer.pop("nodes"))})


@router.get("/datasets/{dataset:name}/lineage/diff", response_model=LineageDiffAnswer)
def dataset_lineage_diff(window: Window, namespace: Namespace, dataset: str, caller: Caller, conn: Connection,
                         levels: Levels = 10, base_start: BaseStart = None, base_end: BaseEnd = None,
                         changed: Changed = False) -> dict[str, Any]:
    """What changed in a dataset's lineage: the walk of [start, end) against the walk of the base
    window [baseStart, baseEnd) (by default the window of the same length just before). Each
    relation, program and data is ``added`` (in the window only), ``removed`` (in the base only)
    or ``unchanged``, each relation with its runs counted on both sides."""
    base = base_window(window, base_start, base_end)
    return lineage_diff(conn, namespace, "dataset", dataset, window, base, levels, changed, caller)


@router.get("/streams/{stream:name}/lineage/diff", response_model=LineageDiffAnswer)
def stream_lineage_diff(window: Window, namespace: Namespace, stream: str, caller: Caller, conn: Connection,
                        levels: Levels = 10, base_start: BaseStart = None, base_end: BaseEnd = None,
                        changed: Changed = False) -> dict[str, Any]:
    """What changed in a stream's lineage, as for a dataset."""
    base = base_window(window, base_start, base_end)
    return lineage_diff(conn, namespace, "stream", stream, window, base, levels, changed, caller)

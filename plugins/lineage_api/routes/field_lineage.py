"""Field-level lineage (seed 004): a field's provenance (incoming) or impact (outgoing), and a
dataset's fields."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

import psycopg
from fastapi import APIRouter, HTTPException, Query

from lineage.field_views import detailed_view, simple_view
from lineage.lineage_graph import check_levels
from lineage.timespec import parse_window
from lineage_api.routes.lineage import End, Start, namespace_connection
from warehouse import field_lineage_store as store

router = APIRouter(prefix="/v3/namespaces/{namespace}/datasets/{dataset}")

View = Literal["simple", "detailed"]
_VIEWS = {"simple": simple_view, "detailed": detailed_view}


def _paths(conn: psycopg.Connection, namespace: str, dataset: str, field: str, window: tuple[datetime, datetime],
           view: View | None) -> list[dict[str, Any]]:
    paths = []
    for row in store.field_paths_in_window(conn, namespace, dataset, field, *window):
        path, descriptions = row["path"], row["descriptions"]
        rendered: dict[str, Any] = {
            "operations": [{**operation, "description": descriptions.get(operation["id"], "")}
                           for operation in path["operations"]],
            "sources": path["sources"],
            "runs": sorted(row["runs"]),
            "runCount": row["run_count"],
            "firstSeenInSeconds": int(row["first_seen"].timestamp()),
            "lastSeenInSeconds": int(row["last_seen"].timestamp()),
            "fingerprint": row["path_fingerprint"],
        }
        if view:
            rendered["graph"] = _VIEWS[view](path, dataset)
        paths.append(rendered)
    return paths


@router.get("/fields/{field:path}/lineage")
def field_lineage(namespace: str, dataset: str, field: str, start: Start = "now-7d", end: End = "now",
                  direction: Literal["incoming", "outgoing"] = "incoming", view: View | None = None,
                  levels: Annotated[int, Query()] = 1) -> dict[str, Any]:
    """Provenance (incoming, FLL-2) or impact (outgoing, FLL-1) of ``dataset.field`` in [start, end)."""
    window = parse_window(start, end)
    check_levels(levels)
    with namespace_connection(namespace) as conn:
        if not store.dataset_exists(conn, namespace, dataset):
            raise HTTPException(404, f"dataset {dataset!r} not found in namespace {namespace!r}")
        if not store.field_known(conn, namespace, dataset, field) and direction == "incoming":
            raise HTTPException(404, f"field {field!r} of dataset {dataset!r} has no recorded lineage")
        body: dict[str, Any] = {
            "fieldName": field, "startTimeInSeconds": int(window[0].timestamp()),
            "endTimeInSeconds": int(window[1].timestamp()), "direction": direction,
        }
        if direction == "incoming":
            body["paths"] = _paths(conn, namespace, dataset, field, window, view)
            body["upstream"] = _walk(conn, body["paths"], window, view, levels, incoming=True)
        else:
            body["impacts"] = _walk(conn, [{"sources": [{"namespace": namespace, "name": dataset, "field": field}]}],
                                    window, view, levels, incoming=False)
    return body


def _walk(conn: psycopg.Connection, paths: list[dict[str, Any]], window: tuple[datetime, datetime],
          view: View | None, levels: int, *, incoming: bool) -> list[dict[str, Any]]:
    """Fields one dataset further, level by level: the source fields of ``paths`` (incoming)
    or the fields generated from them (outgoing), each with its own paths."""
    found: list[dict[str, Any]] = []
    seen: set[tuple[str, str, str]] = set()
    frontier = paths
    for level in range(1, (levels - 1 if incoming else levels) + 1):
        fields: list[tuple[str, str, str]] = []
        for path in frontier:
            for source in path["sources"]:
                key = (source["namespace"], source["name"], source["field"])
                if incoming:
                    fields.append(key)
                else:
                    fields.extend(store.fields_fed_by(conn, *key, *window))
        next_frontier = []
        for namespace, dataset, field in dict.fromkeys(fields):
            if (namespace, dataset, field) in seen:
                continue
            seen.add((namespace, dataset, field))
            field_paths = _paths(conn, namespace, dataset, field, window, view)
            if incoming and not field_paths:
                continue  # a source with no lineage of its own: the walk ends there
            if not incoming:
                field_paths = [p for p in field_paths if _starts_at(p, frontier)]
            found.append({"namespace": namespace, "dataset": dataset, "field": field, "level": level,
                          "paths": field_paths})
            next_frontier.extend(field_paths if incoming else
                                 [{"sources": [{"namespace": namespace, "name": dataset, "field": field}]}])
        frontier = next_frontier
        if not frontier:
            break
    return found


def _starts_at(path: dict[str, Any], frontier: list[dict[str, Any]]) -> bool:
    starts = {(s["namespace"], s["name"], s["field"]) for p in frontier for s in p["sources"]}
    return any((s["namespace"], s["name"], s["field"]) in starts for s in path["sources"])


@router.get("/lineage/fields")
def dataset_fields(namespace: str, dataset: str, start: Start = "now-7d", end: End = "now",
                   prefix: str = "") -> dict[str, Any]:
    """The dataset's fields with lineage, each saying whether it has lineage in [start, end)."""
    window = parse_window(start, end)
    with namespace_connection(namespace) as conn:
        if not store.dataset_exists(conn, namespace, dataset):
            raise HTTPException(404, f"dataset {dataset!r} not found in namespace {namespace!r}")
        fields = store.dataset_fields(conn, namespace, dataset, *window, prefix)
    return {"dataset": dataset, "startTimeInSeconds": int(window[0].timestamp()),
            "endTimeInSeconds": int(window[1].timestamp()),
            "fields": [{"name": f["name"], "hasLineage": f["has_lineage"]} for f in fields]}

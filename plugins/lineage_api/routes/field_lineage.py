"""Field-level lineage (seed 004): a field's provenance (incoming) or impact (outgoing), and a
dataset's fields."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException, Query

from lineage import field_lineage_response
from lineage.authorization import Access, Privilege
from lineage.field_lineage_response import FieldKey
from lineage.field_views import hide_unreadable_sources
from lineage.lineage_graph import check_levels
from lineage.metadata_entity import from_path
from lineage.timespec import parse_window, visible_window
from lineage_api.auth import Caller
from lineage_api.routes.lineage import End, Start, namespace_connection
from warehouse import field_lineage_store as store
from warehouse import namespace_store, schema_store

router = APIRouter(prefix="/v3/namespaces/{namespace}/datasets/{dataset}")

View = Literal["simple", "detailed"]


@router.get("/fields/{field:path}/lineage")
def field_lineage(namespace: str, dataset: str, field: str, caller: Caller, start: Start = "now-7d", end: End = "now",
                  direction: Literal["incoming", "outgoing"] = "incoming", view: View | None = None,
                  levels: Annotated[int, Query()] = 1) -> dict[str, Any]:
    """Provenance (incoming, FLL-2) or impact (outgoing, FLL-1) of ``dataset.field`` in [start, end)."""
    window = parse_window(start, end)
    check_levels(levels)
    with namespace_connection(namespace) as conn:
        caller.require(from_path(namespace, ["datasets", dataset]), Privilege.READ)
        if not store.dataset_exists(conn, namespace, dataset):
            raise HTTPException(404, f"dataset {dataset!r} not found in namespace {namespace!r}")
        window = visible_window(window, namespace_store.visible_since(conn, namespace))
        if not store.field_known(conn, namespace, dataset, field) and direction == "incoming":
            raise HTTPException(404, f"field {field!r} of dataset {dataset!r} has no recorded lineage")
        found = field_lineage_response.field_lineage(
            store.FieldLineageQueries(conn, *window), FieldKey(namespace, dataset, field),
            int(window[0].timestamp()), int(window[1].timestamp()), direction=direction, view=view, levels=levels)
    return _hide_unreadable_fields(found, caller)


def _hide_unreadable_fields(body: dict[str, Any], caller: Access) -> dict[str, Any]:
    """Upstream and impacted fields of datasets the caller cannot read keep their place but
    lose their names and paths; references to such datasets inside paths become ``hidden``."""
    for listing in ("upstream", "impacts"):
        for item in body.get(listing, []):
            if not caller.allows(from_path(item["namespace"], ["datasets", item["dataset"]]), Privilege.READ):
                item.update(namespace="", dataset="hidden", field="hidden", paths=[])
    return hide_unreadable_sources(body, lambda namespace, kind, name: caller.allows(
        from_path(namespace, ["streams" if kind == "stream" else "datasets", name]), Privilege.READ))


@router.get("/lineage/fields")
def dataset_fields(namespace: str, dataset: str, caller: Caller, start: Start = "now-7d", end: End = "now",
                   prefix: str = "") -> dict[str, Any]:
    """The dataset's fields: those with lineage and those of its schema, each saying whether it
    has lineage in [start, end) and whether the current schema has it."""
    window = parse_window(start, end)
    with namespace_connection(namespace) as conn:
        caller.require(from_path(namespace, ["datasets", dataset]), Privilege.READ)
        since = namespace_store.visible_since(conn, namespace)
        window = visible_window(window, since)
        described = schema_store.current(conn, from_path(namespace, ["datasets", dataset]), since)
        if described is None and not store.dataset_exists(conn, namespace, dataset):
            raise HTTPException(404, f"dataset {dataset!r} not found in namespace {namespace!r}")
        with_lineage = {f["name"]: f["has_lineage"] for f in store.dataset_fields(conn, namespace, dataset, *window,
                                                                                   prefix)}
    in_schema = {f.name for f in described.fields if f.name.startswith(prefix)} if described else set()
    return {"dataset": dataset, "startTimeInSeconds": int(window[0].timestamp()),
            "endTimeInSeconds": int(window[1].timestamp()),
            "fields": [{"name": name, "hasLineage": with_lineage.get(name, False), "inSchema": name in in_schema}
                       for name in sorted(with_lineage.keys() | in_schema)]}

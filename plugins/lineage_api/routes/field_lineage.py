"""Field-level lineage (the *Field Level Lineage* design): a field's provenance (incoming) or
impact (outgoing), and a dataset's fields."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import psycopg
from fastapi import APIRouter, Query

from lineage.errors import InvalidLineageRequestError, NotFoundError
from lineage.limits import check_levels, check_window
from lineage.model.dataset_schema import DatasetSchema
from lineage.model.metadata_entity import dataset_entity
from lineage_api.deps import (
    BaseEnd,
    BaseStart,
    Caller,
    Changed,
    Connection,
    LineageWindow,
    Namespace,
    TimeWindow,
    Window,
    readable_program,
    seconds,
)
from lineage_api.http_errors import answers
from lineage_api.links import field_links
from lineage_api.models.field_lineage import CdapField, DatasetFields, FieldLineageAnswer, FieldLineageDiffAnswer
from lineage_api.path_names import segment
from warehouse.db import field_lineage_store as store
from warehouse.db import namespace_store, schema_store
from warehouse.service import field_lineage_response
from warehouse.service.authorization import Access, Privilege
from warehouse.service.field_hiding import hide_unreadable_programs
from warehouse.service.field_lineage_response import FieldKey, Graph
from warehouse.service.field_transformations import TransformationFilter
from warehouse.service.timespec import base_window, visible_window

router = APIRouter(prefix="/v3/namespaces/{namespace}/datasets/{dataset:name}", responses=answers(404))

View = Literal["simple", "detailed"]


@router.get("/fields/{field:path}/lineage", response_model=FieldLineageAnswer, response_model_exclude_unset=True)
def field_lineage(window: LineageWindow, namespace: Namespace, dataset: str, field: str, caller: Caller,
                  conn: Connection, direction: Literal["incoming", "outgoing"] = "incoming", view: View | None = None,
                  levels: Annotated[int, Query(description="datasets away, 1 to LINEAGE_LIMIT_LEVELS (100)")] = 1,
                  transformations: Annotated[TransformationFilter, Query(description=(
                      "all, or direct: only the chains whose every edge is DIRECT or has no transformation "
                      "recorded"))] = "all",
                  graph: Annotated[Graph, Query(description=(
                      "with a view: path, each path carries its drawing; answer, one drawing of every path "
                      "the answer shows, `graph` at its top, each node and edge once (a wide record's impact "
                      "draws its shared operations once instead of once per impacted field)"))] = "path"
                  ) -> dict[str, Any]:
    """Provenance (incoming, FLL-2) or impact (outgoing, FLL-1) of ``dataset.field`` in [start, end);
    each input of an operation, and each edge of a view, carries its transformation when one was
    recorded (OpenLineage's column lineage: type, subtype, description, masking)."""
    if graph == "answer" and view is None:
        raise InvalidLineageRequestError("graph=answer draws the answer in a view: give view=simple or view=detailed")
    return field_answer(conn, caller, namespace, dataset, segment(field), window, direction=direction, view=view,
                        levels=levels, transformations=transformations, graph=graph)


def field_answer(conn: psycopg.Connection, caller: Access, namespace: str, dataset: str, field: str,
                 window: TimeWindow, *, direction: str, levels: int, view: View | None = None,
                 transformations: TransformationFilter = "all", graph: Graph = "path") -> dict[str, Any]:
    """The field lineage answer for the caller: READ on the dataset, what it cannot read hidden."""
    check_levels(levels)
    check_window(*window)
    caller.require(dataset_entity(namespace, "dataset", dataset), Privilege.READ)
    if not store.dataset_exists(conn, namespace, dataset):
        raise NotFoundError(f"dataset {dataset!r} not found in namespace {namespace!r}")
    visible = visible_window(window, namespace_store.visible_since(conn, namespace))
    if direction == "incoming" and not store.field_written(conn, namespace, dataset, field):
        raise NotFoundError(f"field {field!r} of dataset {dataset!r} has no recorded lineage")
    found = field_lineage_response.field_lineage(
        store.FieldLineageQueries(conn, *visible), FieldKey(namespace, dataset, field), *seconds(visible),
        direction=direction, view=view, levels=levels, transformations=transformations, graph=graph,
        readable=None if caller.instance_admin else (  # an instance admin reads everything
            lambda ns, kind, name: caller.allows(dataset_entity(ns, kind, name), Privilege.READ)),
        readable_program=None if caller.instance_admin else readable_program(caller))
    if not caller.instance_admin:
        found = hide_unreadable_programs(found, readable_program(caller))
    for listing in ("upstream", "impacts"):  # fields shown (not hidden) carry their links
        for item in found.get(listing, []):
            if item["namespace"]:
                item["links"] = field_links(item["namespace"], item["dataset"], item["field"])
    return found


@router.get("/fields/{field:path}/lineage/diff", response_model=FieldLineageDiffAnswer,
            response_model_exclude_unset=True)
def field_lineage_diff(window: Window, namespace: Namespace, dataset: str, field: str, caller: Caller,
                       conn: Connection, direction: Literal["incoming", "outgoing"] = "incoming",
                       base_start: BaseStart = None, base_end: BaseEnd = None,
                       changed: Changed = False) -> dict[str, Any]:
    """What changed in a field's lineage: its provenance (incoming: the source fields) or impact
    (outgoing: the fields computed from it, one dataset away) in [start, end) against the base
    window (by default the window of the same length just before). Source or reached fields are
    added, removed or unchanged; each distinct path new, gone or unchanged, a gone path with the
    new one that replaced it and what differs (operations, transformation kinds: ``masked``)."""
    field = segment(field)
    base = base_window(window, base_start, base_end)
    check_window(*base)
    # a field with lineage in the window only, or in the base only: the other side is empty
    return store.diff(conn, FieldKey(namespace, dataset, field), window, base, changed_only=changed,
                      answer=lambda side: field_answer(conn, caller, namespace, dataset, field, side,
                                                       direction=direction, levels=1))


@router.get("/lineage/fields", response_model=DatasetFields | list[CdapField] | list[str])
def dataset_fields(window: Window, namespace: Namespace, dataset: str, caller: Caller, conn: Connection,
                   prefix: str = "", include_current: Annotated[bool | None, Query(alias="includeCurrent", description=(
                       "CDAP's answer: false, the names of the fields with lineage in the window; true, those "
                       "and the schema's fields as {name, lineage}; absent, this API's object"))] = None
                   ) -> Any:
    """The dataset's fields: those with lineage (written to it, or read from it and written or
    dropped) and those of its schema, each saying whether it has lineage in [start, end) and
    whether the current schema has it. With ``includeCurrent``, CDAP's shapes, which list the
    fields written to the dataset (a dataset only read lists none with lineage), as CDAP does."""
    visible, described = described_dataset(conn, caller, namespace, dataset, window)
    # CDAP's shapes list the fields written to the dataset (getFields); this API's, the read ones too
    with_lineage = store.lineage_fields(conn, [(namespace, dataset)], *visible, prefix,
                                        destinations_only=include_current is not None)[(namespace, dataset)]
    in_schema = {f.name for f in described.fields if f.name.startswith(prefix)} if described else set()
    if include_current is False:
        return sorted(name for name, has_lineage in with_lineage.items() if has_lineage)
    if include_current:
        return [{"name": name, "lineage": with_lineage.get(name, False)}
                for name in sorted({name for name, has in with_lineage.items() if has} | in_schema)]
    start, end = seconds(visible)
    return {"dataset": dataset, "startTimeInSeconds": start, "endTimeInSeconds": end,
            "fields": [{"name": name, "hasLineage": with_lineage.get(name, False), "inSchema": name in in_schema,
                        "links": field_links(namespace, dataset, name)}
                       for name in sorted(with_lineage.keys() | in_schema)]}


def described_dataset(conn: psycopg.Connection, caller: Access, namespace: str, dataset: str, window: TimeWindow
                      ) -> tuple[TimeWindow, DatasetSchema | None]:
    """The part of ``window`` the namespace's current life covers and the dataset's current
    schema, once the caller may READ the dataset and it is known (by a schema or by lineage)."""
    subject = dataset_entity(namespace, "dataset", dataset)
    caller.require(subject, Privilege.READ)
    since = namespace_store.visible_since(conn, namespace)
    described = schema_store.current(conn, subject, since)
    if described is None and not store.dataset_exists(conn, namespace, dataset):
        raise NotFoundError(f"dataset {dataset!r} not found in namespace {namespace!r}")
    return visible_window(window, since), described


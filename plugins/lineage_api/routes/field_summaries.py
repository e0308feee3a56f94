"""CDAP's field lineage endpoints (the lineage HTTP handler of cdapio/cdap): a field's summary,
its operations with the programs that ran them, and a dataset's summary of every field, in
CDAP's JSON shapes (``warehouse.service.field_summaries``). Same paths, window and authorization as the
rest of the v3 API; datasets the caller cannot read are hidden as elsewhere."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import psycopg
from fastapi import APIRouter, Query

from lineage.errors import NotFoundError
from lineage.model.metadata_entity import dataset_entity
from lineage_api.deps import Caller, Connection, Namespace, TimeWindow, Window, readable_program
from lineage_api.http_errors import answers
from lineage_api.models.field_lineage import DatasetFieldLineageSummary, FieldLineageDetails, FieldLineageSummary
from lineage_api.path_names import segment
from lineage_api.routes.field_lineage import described_dataset
from warehouse.db import field_lineage_store as store
from warehouse.db import field_lineage_summaries as summaries
from warehouse.db import namespace_store
from warehouse.service.authorization import Access, Privilege
from warehouse.service.field_hiding import Readable, hide_unreadable_programs, hide_unreadable_sources
from warehouse.service.field_lineage_response import FieldKey
from warehouse.service.field_summaries import Direction
from warehouse.service.hidden import hidden_dataset_ref
from warehouse.service.timespec import visible_window

router = APIRouter(prefix="/v3/namespaces/{namespace}/datasets/{dataset:name}/lineage", responses=answers(404))

DIRECTION = "incoming (its source fields), outgoing (the fields computed from it) or both"
RequiredDirection = Annotated[Literal["incoming", "outgoing", "both"], Query(description=DIRECTION)]


@router.get("/fields/{field:path}/operations", response_model=FieldLineageDetails,
            response_model_exclude_none=True)
def field_operations(window: Window, namespace: Namespace, dataset: str, field: str, caller: Caller,
                     conn: Connection, direction: Annotated[Direction, Query(description=DIRECTION)] = "both"
                     ) -> dict[str, Any]:
    """CDAP's operation details of ``dataset.field`` in [start, end): per distinct set of
    operations, the operations in topological order and the programs that ran them (each once,
    latest run first). Incoming: the operations that produced the field; outgoing: those it
    went through up to each write or drop."""
    field, visible = _known_field(conn, caller, namespace, dataset, field, window)
    details = summaries.operation_details(conn, FieldKey(namespace, dataset, field), *visible, direction,
                                          None if caller.instance_admin else _readable(caller))
    return _hide_endpoints(details, caller)


@router.get("/fields/{field:path}", response_model=FieldLineageSummary, response_model_exclude_none=True)
def field_lineage_summary(window: Window, namespace: Namespace, dataset: str, field: str, caller: Caller,
                          conn: Connection, direction: RequiredDirection) -> dict[str, Any]:
    """CDAP's summary of ``dataset.field`` in [start, end): the source fields it was computed
    from (incoming) and the fields computed from it (outgoing), one dataset away, by dataset."""
    field, visible = _known_field(conn, caller, namespace, dataset, field, window)
    summary = summaries.summary(conn, FieldKey(namespace, dataset, field), *visible, direction)
    for side in ("incoming", "outgoing"):
        for item in summary.get(side, []):
            _hide_dataset_id(item, "dataset", caller, fields=[])
    return summary


@router.get("/allfieldlineage", response_model=DatasetFieldLineageSummary)
def dataset_field_lineage(window: Window, namespace: Namespace, dataset: str, caller: Caller, conn: Connection,
                          direction: RequiredDirection) -> dict[str, Any]:
    """CDAP's summary of every field of the dataset in [start, end): its fields (with lineage, and
    of its schema), and per other dataset the (source, destination) field relations with that
    dataset's count of fields with lineage; one query per direction, not one walk per field."""
    visible, described = described_dataset(conn, caller, namespace, dataset, window)
    summary = summaries.dataset_field_lineage(conn, namespace, dataset, *visible, direction,
                                              {f.name for f in described.fields} if described else set())
    for side in ("incoming", "outgoing"):
        for item in summary[side]:
            _hide_dataset_id(item, "entityId", caller, relations=[], fieldCount=0)
    return summary


def _known_field(conn: psycopg.Connection, caller: Access, namespace: str, dataset: str, field: str,
                 window: TimeWindow) -> tuple[str, TimeWindow]:
    """The field's name and the visible window, once the caller may read the dataset and the
    field is known to it (written to it or read from it by a recorded operation set); else 404."""
    field = segment(field)
    caller.require(dataset_entity(namespace, "dataset", dataset), Privilege.READ)
    if not store.dataset_exists(conn, namespace, dataset):
        raise NotFoundError(f"dataset {dataset!r} not found in namespace {namespace!r}")
    if not store.field_known(conn, namespace, dataset, field):
        raise NotFoundError(f"field {field!r} of dataset {dataset!r} has no recorded lineage")
    return field, visible_window(window, namespace_store.visible_since(conn, namespace))


def _hide_dataset_id(item: dict[str, Any], key: str, caller: Access, **emptied: Any) -> None:
    """An entry about a dataset the caller cannot read keeps its place, not its name or contents."""
    ref = item[key]
    if not caller.allows(dataset_entity(ref["namespace"], "dataset", ref["dataset"]), Privilege.READ):
        item.update({key: hidden_dataset_ref(ref), **emptied})


def _readable(caller: Access) -> Readable:
    return lambda namespace, kind, name: caller.allows(
        dataset_entity(namespace, "stream" if kind == "stream" else "dataset", name), Privilege.READ)


def _hide_endpoints(body: dict[str, Any], caller: Access) -> dict[str, Any]:
    shown: dict[str, Any] = hide_unreadable_programs(hide_unreadable_sources(body, _readable(caller)),
                                                     readable_program(caller))
    return shown

"""Tags that follow the data (issue 33): a field's tags, assigned and propagated, and why a tag
did or did not reach it."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from lineage.errors import NotFoundError
from lineage.limits import check_window
from lineage.model.metadata_entity import dataset_entity, program_entity
from lineage_api.deps import Caller, Connection, LineageWindow, Namespace
from lineage_api.http_errors import answers
from lineage_api.models.field_tags import FieldTags
from lineage_api.path_names import segment
from warehouse.db import field_lineage_store, namespace_store
from warehouse.db.tag_propagation_store import EdgeQueries, assigned_tags
from warehouse.service.authorization import Access, Privilege
from warehouse.service.tag_propagation import FieldNode, Visibility, explain_field, policies_from
from warehouse.service.timespec import visible_window

router = APIRouter(prefix="/v3/namespaces/{namespace}/datasets/{dataset:name}", responses=answers(404))


def visibility_of(caller: Access) -> Visibility:
    """What of a tag's way ``caller`` may see: datasets and programs it may READ (an instance admin: all)."""
    if caller.instance_admin:
        return Visibility()
    return Visibility(
        dataset=lambda node: caller.allows(dataset_entity(node.namespace, node.dataset_type, node.dataset),
                                           Privilege.READ),
        program=lambda program: caller.allows(program_entity(program.namespace, program.application,
                                                             program.program_type, program.program), Privilege.READ))


@router.get("/fields/{field:path}/tags", response_model=FieldTags, response_model_exclude_none=True)
def field_tags(request: Request, window: LineageWindow, namespace: Namespace, dataset: str, field: str,
               caller: Caller, conn: Connection,
               explain: Annotated[str | None, Query(description="a tag: also where it stopped on the way to this "
                                                                "field, and why")] = None) -> dict[str, Any]:
    """The field's tags: those assigned to it (by people or programs), and those propagated to it
    along field lineage in [start, end) from the fields upstream they are assigned to, each with
    its origin and path (operations, transformation, program, runs), as each tag's policy lets
    it travel (``LINEAGE_TAG_POLICIES``); ``explain=TAG`` adds where TAG stopped on the way
    (masked, aggregated, used as a condition) and why. READ on the dataset; datasets and
    programs the caller may not read are shown hidden."""
    field = segment(field)
    check_window(*window)
    caller.require(dataset_entity(namespace, "dataset", dataset), Privilege.READ)
    if not field_lineage_store.dataset_exists(conn, namespace, dataset):
        raise NotFoundError(f"dataset {dataset!r} not found in namespace {namespace!r}")
    visibility = visibility_of(caller)
    policies = policies_from(request.app.state.settings.tag_policies)
    visible = visible_window(window, namespace_store.visible_since(conn, namespace))  # the race guard
    return explain_field(FieldNode(namespace, "dataset", dataset, field), EdgeQueries(conn, *visible),
                         lambda nodes: assigned_tags(conn, nodes), policies, explain, visibility)

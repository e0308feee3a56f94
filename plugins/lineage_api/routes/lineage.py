"""Dataset lineage (the *Metadata and Data Discovery* design): lineage of a dataset or stream, a
run's accesses, a program's runs."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

import psycopg
from fastapi import APIRouter, Query

from lineage.authorization import Access, Privilege
from lineage.errors import NotFoundError
from lineage.lineage_graph import (
    HIDDEN,
    DataRef,
    ProgramRef,
    Relation,
    check_levels,
    hide_unreadable,
    lineage_response,
    parse_collapse,
    walk_lineage,
)
from lineage.metadata_entity import MetadataEntity, dataset_entity, program_entity, program_run_entity
from lineage.timespec import visible_window
from lineage_api.deps import Caller, Connection, Namespace, TimeWindow, Window, seconds
from lineage_api.http_errors import answers
from lineage_api.links import entity_links
from lineage_api.models import LineageAnswer, ProgramRuns, RunAccesses
from warehouse import lineage_store, namespace_store

router = APIRouter(prefix="/v3/namespaces/{namespace}", responses=answers(404))

Levels = Annotated[int, Query(description="levels of data -> programs -> data to walk, 1-100")]
Collapse = Annotated[list[str], Query(description="access, run or component (repeat or comma-separate)")]


def data_entity(data: DataRef) -> MetadataEntity:
    return dataset_entity(data.namespace, data.type, data.name)


def program_of(program: ProgramRef) -> MetadataEntity:
    return program_entity(program.namespace, program.application, program.type, program.name)


def _lineage(conn: psycopg.Connection, namespace: str, data_type: str, name: str, window: TimeWindow,
             levels: int, collapse: list[str], caller: Access) -> dict[str, Any]:
    """The walk, needing READ on the dataset; nodes the caller cannot read are shown hidden."""
    check_levels(levels)
    collapse_types = parse_collapse(part for value in collapse for part in value.split(","))
    origin = DataRef(namespace, data_type, name)
    caller.require(data_entity(origin), Privilege.READ)
    visible = visible_window(window, namespace_store.visible_since(conn, namespace))
    accesses = walk_lineage(lineage_store.LineageQueries(conn, *visible), origin, levels)
    shown = hide_unreadable(accesses, lambda d: caller.allows(data_entity(d), Privilege.READ),
                            lambda p: caller.allows(program_of(p), Privilege.READ))
    return {**lineage_response(*seconds(window), shown, collapse_types), "links": _node_links(shown)}


def _node_links(relations: list[Relation]) -> dict[str, dict[str, str]]:
    """Each shown node's links, by its id in the answer (hidden nodes have none)."""
    links = {r.data.id: entity_links(data_entity(r.data)) for r in relations if r.data.type != HIDDEN}
    links.update({r.program.id: entity_links(program_of(r.program)) for r in relations if r.program.type != HIDDEN})
    return links


@router.get("/datasets/{dataset:name}/lineage", response_model=LineageAnswer)
def dataset_lineage(window: Window, namespace: Namespace, dataset: str, caller: Caller, conn: Connection,
                    levels: Levels = 10, collapse: Collapse = []) -> dict[str, Any]:  # noqa: B006 - a query default
    """The lineage of a dataset in [start, end), up to ``levels`` levels, as the *Metadata and
    Data Discovery* design shapes it."""
    return _lineage(conn, namespace, "dataset", dataset, window, levels, collapse, caller)


@router.get("/streams/{stream:name}/lineage", response_model=LineageAnswer)
def stream_lineage(window: Window, namespace: Namespace, stream: str, caller: Caller, conn: Connection,
                   levels: Levels = 10, collapse: Collapse = []) -> dict[str, Any]:  # noqa: B006
    """The lineage of a stream in [start, end), up to ``levels`` levels, as the *Metadata and Data
    Discovery* design shapes it."""
    return _lineage(conn, namespace, "stream", stream, window, levels, collapse, caller)


RUNS = "/apps/{application:name}/{program_type}/{program:name}/runs"


@router.get(RUNS + "/{run_id:name}/accesses", response_model=RunAccesses)
def run_accesses(namespace: Namespace, application: str, program_type: str, program: str, run_id: str,
                 caller: Caller, conn: Connection) -> dict[str, Any]:
    """What one run read and wrote, with times (Interaction 3 of the *Metadata and Data
    Discovery* design); READ on the program.
    Datasets the caller cannot read are shown hidden."""
    caller.require(program_entity(namespace, application, program_type, program), Privilege.READ)
    found = lineage_store.run_accesses(conn, namespace, application, program_type, program, run_id)
    if found is None or _predates(found, namespace_store.visible_since(conn, namespace)):
        raise NotFoundError(f"run {run_id!r} of {program_type} {application}.{program} not found")
    for access in found["accesses"]:
        subject = dataset_entity(access["namespace"], access["type"], access["name"])
        if caller.allows(subject, Privilege.READ):
            access["links"] = entity_links(subject)
        else:
            access.update(namespace="", type="hidden", name="", component=None, links={})
    return found


def _predates(run: dict[str, Any], since: datetime | None) -> bool:
    """A run from before the namespace's re-creation, not cleaned up yet (the race guard of the
    *System Applications (CDAP 6.0)* design)."""
    return since is not None and (run["started_at"] or run["stopped_at"] or 0) < since.timestamp()


@router.get(RUNS, response_model=ProgramRuns)
def program_runs(window: Window, namespace: Namespace, application: str, program_type: str, program: str,
                 caller: Caller, conn: Connection) -> dict[str, Any]:
    """The program's runs in [start, end), newest first; READ on the program."""
    caller.require(program_entity(namespace, application, program_type, program), Privilege.READ)
    visible = visible_window(window, namespace_store.visible_since(conn, namespace))
    runs = lineage_store.program_runs(conn, namespace, application, program_type, program, *visible)
    if runs is None:
        raise NotFoundError(f"{program_type} {application}.{program} not found in namespace {namespace!r}")
    for run in runs:
        run["links"] = entity_links(program_run_entity(namespace, application, program_type, program, run["run_id"]))
    start, end = seconds(window)
    return {"start": start, "end": end, "runs": runs}

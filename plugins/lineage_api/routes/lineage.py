"""Dataset lineage (the *Metadata and Data Discovery* design): lineage of a dataset or stream
(rolled up to parent or root runs on request), a run with its parent and children, a run's
accesses, a program's runs."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, TypeVar, cast

import psycopg
from fastapi import APIRouter, Query

from lineage.errors import NotFoundError
from lineage.limits import check_levels, check_window
from lineage.model.metadata_entity import MetadataEntity, dataset_entity, program_entity, program_run_entity
from lineage_api.deps import Caller, Connection, LineageWindow, Namespace, TimeWindow, Window, seconds
from lineage_api.http_errors import answers
from lineage_api.links import entity_links
from lineage_api.models.base import Links
from lineage_api.models.lineage import (
    ChildRun,
    LineageAnswer,
    ProgramRun,
    ProgramRuns,
    RunAccess,
    RunAccesses,
    RunAnswer,
    RunFacets,
    RunLink,
)
from warehouse.db import lineage_store, namespace_store, run_store
from warehouse.service import run_rows
from warehouse.service.authorization import Access, Privilege
from warehouse.service.hidden import HIDDEN_CHILD_RUN, HIDDEN_LINKED_RUN, hidden_access
from warehouse.service.lineage_graph import (
    HIDDEN,
    DataRef,
    ProgramRef,
    Relation,
    hide_unreadable,
    lineage_response,
    parse_collapse,
    parse_runs_shape,
)
from warehouse.service.run_hierarchy import parse_rollup, roll_up
from warehouse.service.timespec import epoch_seconds, visible_window

router = APIRouter(prefix="/v3/namespaces/{namespace}", responses=answers(404))

Levels = Annotated[int, Query(description="levels of data -> programs -> data to walk, 1-100")]
Collapse = Annotated[list[str], Query(description="access, run or component (repeat or comma-separate)")]
Rollup = Annotated[str | None, Query(description="parent or root: show each run's parent (or root) run, under "
                                                 "its own program, in place of the run; runs merged")]
Runs = Annotated[str, Query(description="ids (every run id of each relation), count (none: the count, first "
                                        "and last run only) or latest (the newest run's id)")]


def data_entity(data: DataRef) -> MetadataEntity:
    return dataset_entity(data.namespace, data.type, data.name)


def program_of(program: ProgramRef) -> MetadataEntity:
    return program_entity(program.namespace, program.application, program.type, program.name)


def _links(subject: MetadataEntity) -> Links:
    """``entity_links`` as the answer models type them (``lineage_api.links`` may not import the models)."""
    return cast(Links, entity_links(subject))


def origin_of(conn: psycopg.Connection, namespace: str, data_type: str, name: str, caller: Access) -> DataRef:
    """The data a lineage question starts from, needing READ on it: the dataset named, or the one
    it is an alias of (OpenLineage's symlinks)."""
    asked = DataRef(namespace, data_type, name)
    origin = lineage_store.dataset_named(conn, asked)  # an alias: its dataset
    if not caller.allows(data_entity(origin), Privilege.READ):
        origin = asked  # an alias of what the caller cannot read is a name that is nothing: no word of it
    caller.require(data_entity(origin), Privilege.READ)
    return origin


def hide_for(caller: Access, relations: list[Relation]) -> list[Relation]:
    """``relations`` with the nodes the caller cannot read shown hidden."""
    return hide_unreadable(relations, lambda d: caller.allows(data_entity(d), Privilege.READ),
                           lambda p: caller.allows(program_of(p), Privilege.READ))


def _lineage(conn: psycopg.Connection, namespace: str, data_type: str, name: str, window: TimeWindow,
             levels: int, collapse: list[str], rollup: str | None, runs: str, caller: Access) -> dict[str, Any]:
    """The walk, needing READ on the dataset; nodes the caller cannot read are shown hidden."""
    check_levels(levels)
    check_window(*window)
    collapse_types = parse_collapse(part for value in collapse for part in value.split(","))
    rolled_up_to = parse_rollup(rollup)
    shape = parse_runs_shape(runs)
    origin = origin_of(conn, namespace, data_type, name, caller)
    # Merging relations (a roll-up, collapsed access types) counts their runs from the ids.
    needs_ids = shape == "ids" or rolled_up_to is not None or "access" in collapse_types
    accesses, truncated = lineage_store.walk(conn, origin, window, levels, run_ids=needs_ids)
    if rolled_up_to is not None:
        accesses = roll_up(accesses, lambda runs: run_store.run_links(conn, runs), rolled_up_to)
    shown = hide_for(caller, accesses)
    return lineage_store.with_job_types(conn, {**lineage_response(*seconds(window), shown, collapse_types, shape),
                                               "links": node_links(shown), "truncated": truncated})


def node_links(relations: list[Relation]) -> dict[str, dict[str, str]]:
    """Each shown node's links, by its id in the answer (hidden nodes have none)."""
    links = {r.data.id: entity_links(data_entity(r.data)) for r in relations if r.data.type != HIDDEN}
    links.update({r.program.id: entity_links(program_of(r.program)) for r in relations if r.program.type != HIDDEN})
    return links


RUNS = "/apps/{application:name}/{program_type}/{program:name}/runs"


@router.get("/datasets/{dataset:name}/lineage", response_model=LineageAnswer)
def dataset_lineage(window: LineageWindow, namespace: Namespace, dataset: str, caller: Caller, conn: Connection,
                    levels: Levels = 10, collapse: Collapse = [],  # noqa: B006 - a query default
                    rollup: Rollup = None, runs: Runs = "ids") -> dict[str, Any]:
    """The lineage of a dataset in [start, end), up to ``levels`` levels, as the *Metadata and
    Data Discovery* design shapes it; ``rollup=parent`` (or ``root``) shows each run's parent (or
    root) run in place of the run. A dataset's alias (OpenLineage's symlinks) finds the dataset.
    Each relation counts its runs (``runCount``, ``firstRun``, ``lastRun``, ``latestRun``);
    ``runs=count`` leaves out the run ids, which keeps a long window's answer small."""
    return _lineage(conn, namespace, "dataset", dataset, window, levels, collapse, rollup, runs, caller)


@router.get("/streams/{stream:name}/lineage", response_model=LineageAnswer)
def stream_lineage(window: LineageWindow, namespace: Namespace, stream: str, caller: Caller, conn: Connection,
                   levels: Levels = 10, collapse: Collapse = [],  # noqa: B006
                   rollup: Rollup = None, runs: Runs = "ids") -> dict[str, Any]:
    """The lineage of a stream in [start, end), up to ``levels`` levels, as the *Metadata and Data
    Discovery* design shapes it; ``rollup`` and ``runs`` as for a dataset."""
    return _lineage(conn, namespace, "stream", stream, window, levels, collapse, rollup, runs, caller)


@router.get(RUNS + "/{run_id:name}", response_model=RunAnswer)
def run(namespace: Namespace, application: str, program_type: str, program: str, run_id: str, caller: Caller,
        conn: Connection) -> RunAnswer:
    """A run: status and times, its parent, root and children (OpenLineage's ``parent`` facet), the
    run and job facets its events carried and warnings about them; READ on the program. A run
    known only as the parent or root of others answers with ``recorded`` false. Linked runs of
    programs the caller cannot read are shown hidden."""
    caller.require(program_entity(namespace, application, program_type, program), Privilege.READ)
    found = run_store.run_detail(conn, namespace, application, program_type, program, run_id)
    if found is None or (found.recorded and _predates(found.started_at, found.stopped_at,
                                                      namespace_store.visible_since(conn, namespace))):
        raise NotFoundError(f"run {run_id!r} of {program_type} {application}.{program} not found")
    return RunAnswer(
        run_id=found.run_id, recorded=found.recorded, status=found.status,
        started_at=epoch_seconds(found.started_at), stopped_at=epoch_seconds(found.stopped_at),
        parent=_run_link(found.parent, caller), root=_run_link(found.root, caller),
        children=[_child_run(child, caller) for child in found.children], childCount=found.child_count,
        facets=RunFacets(run=found.run_facets, job=found.job_facets), warnings=list(found.warnings),
        links=_links(program_run_entity(namespace, application, program_type, program, run_id)))


Linked = TypeVar("Linked", bound=run_rows.LinkedRun)


def _shown_run(linked: Linked, hidden: Linked, caller: Access) -> tuple[Linked, Links]:
    """A linked run with its links, or ``hidden`` (and no links) when the caller may not read its program."""
    program = linked.run.program
    if not caller.allows(program_of(program), Privilege.READ):
        return hidden, {}
    return linked, _links(program_run_entity(program.namespace, program.application, program.type, program.name,
                                             linked.run.run_id))


def _run_link(linked: run_rows.LinkedRun | None, caller: Access) -> RunLink | None:
    """A linked run (parent, root) with its links, or hidden when the caller may not read its program."""
    if linked is None:
        return None
    shown, links = _shown_run(linked, HIDDEN_LINKED_RUN, caller)
    program = shown.run.program
    return RunLink(namespace=program.namespace, application=program.application, type=program.type,
                   program=program.name, run_id=shown.run.run_id, recorded=shown.recorded, links=links)


def _child_run(child: run_rows.ChildRun, caller: Access) -> ChildRun:
    """A child run with its links, or hidden when the caller may not read its program."""
    shown, links = _shown_run(child, HIDDEN_CHILD_RUN, caller)
    program = shown.run.program
    return ChildRun(namespace=program.namespace, application=program.application, type=program.type,
                    program=program.name, run_id=shown.run.run_id, recorded=shown.recorded, links=links,
                    status=shown.status, started_at=epoch_seconds(shown.started_at))


@router.get(RUNS + "/{run_id:name}/accesses", response_model=RunAccesses)
def run_accesses(namespace: Namespace, application: str, program_type: str, program: str, run_id: str,
                 caller: Caller, conn: Connection) -> RunAccesses:
    """What one run read and wrote, with times (Interaction 3 of the *Metadata and Data
    Discovery* design); READ on the program.
    Datasets the caller cannot read are shown hidden."""
    caller.require(program_entity(namespace, application, program_type, program), Privilege.READ)
    found = lineage_store.run_accesses(conn, namespace, application, program_type, program, run_id)
    if found is None or _predates(found.started_at, found.stopped_at, namespace_store.visible_since(conn, namespace)):
        raise NotFoundError(f"run {run_id!r} of {program_type} {application}.{program} not found")
    return RunAccesses(run_id=found.run_id, status=found.status, started_at=epoch_seconds(found.started_at),
                       stopped_at=epoch_seconds(found.stopped_at),
                       accesses=[_run_access(access, caller) for access in found.accesses])


def _run_access(access: run_rows.DatasetAccess, caller: Access) -> RunAccess:
    """A run's access with the dataset's links, or hidden when the caller may not read the dataset."""
    subject = dataset_entity(access.namespace, access.type, access.name)
    links: Links = {}
    if caller.allows(subject, Privilege.READ):
        links = _links(subject)
    else:
        access = hidden_access(access)
    return RunAccess(namespace=access.namespace, type=access.type, name=access.name, access=access.access,
                     component=access.component, accessed_at=epoch_seconds(access.accessed_at), links=links)


def _predates(started_at: datetime | None, stopped_at: datetime | None, since: datetime | None) -> bool:
    """A run from before the namespace's re-creation, not cleaned up yet (the race guard of the
    *System Applications (CDAP 6.0)* design)."""
    return since is not None and (epoch_seconds(started_at) or epoch_seconds(stopped_at) or 0) < since.timestamp()


@router.get(RUNS, response_model=ProgramRuns)
def program_runs(window: Window, namespace: Namespace, application: str, program_type: str, program: str,
                 caller: Caller, conn: Connection) -> ProgramRuns:
    """The program's runs in [start, end), newest first, each with its parent run; READ on the program."""
    caller.require(program_entity(namespace, application, program_type, program), Privilege.READ)
    visible = visible_window(window, namespace_store.visible_since(conn, namespace))
    runs = lineage_store.program_runs(conn, namespace, application, program_type, program, *visible)
    if runs is None:
        raise NotFoundError(f"{program_type} {application}.{program} not found in namespace {namespace!r}")
    start, end = seconds(window)
    return ProgramRuns(start=start, end=end, runs=[
        ProgramRun(run_id=run.run_id, status=run.status, started_at=epoch_seconds(run.started_at),
                   stopped_at=epoch_seconds(run.stopped_at), parent=_run_link(run.parent, caller),
                   links=_links(program_run_entity(namespace, application, program_type, program, run.run_id)))
        for run in runs])

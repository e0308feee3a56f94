"""Dataset lineage (seed 001): lineage of a dataset or stream, a run's accesses, a program's runs."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Annotated, Any

import psycopg
from fastapi import APIRouter, HTTPException, Query

from lineage.authorization import Access, Privilege
from lineage.lineage_graph import (
    DataRef,
    ProgramRef,
    check_levels,
    hide_unreadable,
    lineage_response,
    parse_collapse,
    walk_lineage,
)
from lineage.metadata_entity import MetadataEntity, from_path
from lineage.timespec import parse_window, visible_window
from lineage_api import warehouse_queries
from lineage_api.auth import Caller
from warehouse import lineage_store, namespace_store

router = APIRouter(prefix="/v3/namespaces/{namespace}")

Start = Annotated[str, Query(description="epoch seconds, now, now-30m, now-6h, now-7d")]
End = Annotated[str, Query(description="epoch seconds, now, now-30m, now-6h, now-7d")]


@contextmanager
def namespace_connection(namespace: str | None) -> Iterator[psycopg.Connection]:
    """A warehouse connection, after checking the namespace exists (404 otherwise); ``None``
    (an external entity, outside any namespace) is not checked."""
    with warehouse_queries.connection() as conn:
        if namespace is not None and not lineage_store.namespace_exists(conn, namespace):
            raise HTTPException(404, f"namespace {namespace!r} not found")
        yield conn


def data_entity(data: DataRef) -> MetadataEntity:
    return from_path(data.namespace, ["streams" if data.type == "stream" else "datasets", data.name])


def program_entity(program: ProgramRef) -> MetadataEntity:
    return from_path(program.namespace, ["apps", program.application, program.type, program.name])


def _lineage(namespace: str, data_type: str, name: str, start: str, end: str, levels: int,
             collapse: list[str], caller: Access) -> dict[str, Any]:
    """The walk, needing READ on the dataset; nodes the caller cannot read are shown hidden."""
    window = parse_window(start, end)
    check_levels(levels)
    collapse_types = parse_collapse(part for value in collapse for part in value.split(","))
    origin = DataRef(namespace, data_type, name)
    with namespace_connection(namespace) as conn:
        caller.require(data_entity(origin), Privilege.READ)
        visible = visible_window(window, namespace_store.visible_since(conn, namespace))
        accesses = walk_lineage(lineage_store.LineageQueries(conn, *visible), origin, levels)
    shown = hide_unreadable(accesses, lambda d: caller.allows(data_entity(d), Privilege.READ),
                            lambda p: caller.allows(program_entity(p), Privilege.READ))
    return lineage_response(int(window[0].timestamp()), int(window[1].timestamp()), shown, collapse_types)


@router.get("/datasets/{dataset}/lineage")
def dataset_lineage(namespace: str, dataset: str, caller: Caller, start: Start = "now-7d", end: End = "now",
                    levels: int = 10,
                    collapse: Annotated[list[str], Query()] = []) -> dict[str, Any]:  # noqa: B006 - FastAPI query default
    """Seed 001's lineage of a dataset in [start, end), up to ``levels`` levels."""
    return _lineage(namespace, "dataset", dataset, start, end, levels, collapse, caller)


@router.get("/streams/{stream}/lineage")
def stream_lineage(namespace: str, stream: str, caller: Caller, start: Start = "now-7d", end: End = "now",
                   levels: int = 10,
                   collapse: Annotated[list[str], Query()] = []) -> dict[str, Any]:  # noqa: B006
    """Seed 001's lineage of a stream in [start, end), up to ``levels`` levels."""
    return _lineage(namespace, "stream", stream, start, end, levels, collapse, caller)


@router.get("/apps/{application}/{program_type}/{program}/runs/{run_id}/accesses")
def run_accesses(namespace: str, application: str, program_type: str, program: str, run_id: str,
                 caller: Caller) -> dict[str, Any]:
    """What one run read and wrote, with times (seed 001 interaction 3); READ on the program.
    Datasets the caller cannot read are shown hidden."""
    with namespace_connection(namespace) as conn:
        caller.require(program_entity(ProgramRef(namespace, application, program_type, program)), Privilege.READ)
        found = lineage_store.run_accesses(conn, namespace, application, program_type, program, run_id)
        since = namespace_store.visible_since(conn, namespace)
    if found is None or _predates(found, since):
        raise HTTPException(404, f"run {run_id!r} of {program_type} {application}.{program} not found")
    for access in found["accesses"]:
        if not caller.allows(data_entity(DataRef(access["namespace"], access["type"], access["name"])),
                             Privilege.READ):
            access.update(namespace="", type="hidden", name="", component=None)
    return found


def _predates(run: dict[str, Any], since: datetime | None) -> bool:
    """A run from before the namespace's re-creation, not cleaned up yet (seed 003's race guard)."""
    return since is not None and (run["started_at"] or run["stopped_at"] or 0) < since.timestamp()


@router.get("/apps/{application}/{program_type}/{program}/runs")
def program_runs(namespace: str, application: str, program_type: str, program: str, caller: Caller,
                 start: Start = "now-7d", end: End = "now") -> dict[str, Any]:
    """The program's runs in [start, end), newest first; READ on the program."""
    window = parse_window(start, end)
    with namespace_connection(namespace) as conn:
        caller.require(program_entity(ProgramRef(namespace, application, program_type, program)), Privilege.READ)
        visible = visible_window(window, namespace_store.visible_since(conn, namespace))
        runs = lineage_store.program_runs(conn, namespace, application, program_type, program, *visible)
    if runs is None:
        raise HTTPException(404, f"{program_type} {application}.{program} not found in namespace {namespace!r}")
    return {"start": int(window[0].timestamp()), "end": int(window[1].timestamp()), "runs": runs}

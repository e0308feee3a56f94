"""Dataset lineage (seed 001): lineage of a dataset or stream, a run's accesses, a program's runs."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

import psycopg
from fastapi import APIRouter, HTTPException, Query

from lineage.lineage_graph import DataRef, check_levels, lineage_response, parse_collapse
from lineage.timespec import parse_window
from lineage_api import warehouse_queries
from warehouse import lineage_store

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


def _lineage(namespace: str, data_type: str, name: str, start: str, end: str, levels: int,
             collapse: list[str]) -> dict[str, Any]:
    window = parse_window(start, end)
    check_levels(levels)
    collapse_types = parse_collapse(part for value in collapse for part in value.split(","))
    with namespace_connection(namespace) as conn:
        accesses = lineage_store.walk_lineage(conn, DataRef(namespace, data_type, name), *window, levels)
    return lineage_response(int(window[0].timestamp()), int(window[1].timestamp()), accesses, collapse_types)


@router.get("/datasets/{dataset}/lineage")
def dataset_lineage(namespace: str, dataset: str, start: Start = "now-7d", end: End = "now", levels: int = 10,
                    collapse: Annotated[list[str], Query()] = []) -> dict[str, Any]:  # noqa: B006 - FastAPI query default
    """Seed 001's lineage of a dataset in [start, end), up to ``levels`` levels."""
    return _lineage(namespace, "dataset", dataset, start, end, levels, collapse)


@router.get("/streams/{stream}/lineage")
def stream_lineage(namespace: str, stream: str, start: Start = "now-7d", end: End = "now", levels: int = 10,
                   collapse: Annotated[list[str], Query()] = []) -> dict[str, Any]:  # noqa: B006
    """Seed 001's lineage of a stream in [start, end), up to ``levels`` levels."""
    return _lineage(namespace, "stream", stream, start, end, levels, collapse)


@router.get("/apps/{application}/{program_type}/{program}/runs/{run_id}/accesses")
def run_accesses(namespace: str, application: str, program_type: str, program: str, run_id: str) -> dict[str, Any]:
    """What one run read and wrote, with times (seed 001 interaction 3)."""
    with namespace_connection(namespace) as conn:
        found = lineage_store.run_accesses(conn, namespace, application, program_type, program, run_id)
    if found is None:
        raise HTTPException(404, f"run {run_id!r} of {program_type} {application}.{program} not found")
    return found


@router.get("/apps/{application}/{program_type}/{program}/runs")
def program_runs(namespace: str, application: str, program_type: str, program: str,
                 start: Start = "now-7d", end: End = "now") -> dict[str, Any]:
    """The program's runs in [start, end), newest first."""
    window = parse_window(start, end)
    with namespace_connection(namespace) as conn:
        runs = lineage_store.program_runs(conn, namespace, application, program_type, program, *window)
    if runs is None:
        raise HTTPException(404, f"{program_type} {application}.{program} not found in namespace {namespace!r}")
    return {"start": int(window[0].timestamp()), "end": int(window[1].timestamp()), "runs": runs}

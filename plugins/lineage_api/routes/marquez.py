"""Marquez's read API (issue 34) under ``/lineage/api/v1/``: namespaces, datasets (with fields
and tags), dataset versions, jobs, a job's runs, a run by id, ``lineage``, ``column-lineage``,
``search`` and ``tags``, in Marquez 0.50's paths, parameters and answer shapes, so Marquez's
own clients (``marquez-python``) and scripts read the warehouse. Every dataset and job is named
by its OpenLineage identity (what ``lineage export`` gives); ``lineage`` and ``column-lineage``
take our window (``start``, ``end``: all time by default, as Marquez reads) where Marquez has none.

A caller sees what it may read, as everywhere: lists leave the rest out (and count it in no
total), a named dataset, job or run the caller may not read answers 404 as one that does not
exist, and graphs leave out the nodes it may not read (counted in ``withheld``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Annotated, Any, TypeVar

import psycopg
from fastapi import APIRouter, Query

from lineage.errors import InvalidRequestError, NotFoundError
from lineage.ids import DataRef, ProgramRef
from lineage.limits import check_levels, check_window, limits
from lineage.model.metadata_entity import dataset_entity, program_entity
from lineage.naming.identity import DatasetIdentity, exported_dataset, exported_job
from lineage_api.deps import Caller, Connection, HistoryWindow, TimeWindow
from lineage_api.http_errors import answers
from lineage_api.models.marquez import (
    MarquezDataset,
    MarquezDatasets,
    MarquezDatasetVersion,
    MarquezDatasetVersions,
    MarquezGraph,
    MarquezJob,
    MarquezJobs,
    MarquezNamespace,
    MarquezNamespaces,
    MarquezRun,
    MarquezRuns,
    MarquezSearch,
    MarquezTags,
)
from warehouse.db import entity_keys, lineage_store, metadata_search, namespace_store
from warehouse.db import marquez_store as store
from warehouse.db.tag_propagation_store import EdgeQueries
from warehouse.service import marquez
from warehouse.service.authorization import Access, Privilege
from warehouse.service.search_query import parse_query
from warehouse.service.tag_propagation import FieldNode
from warehouse.service.timespec import visible_window

router = APIRouter(responses=answers(400, 404))  # at /api/v1 of the app
MAX_LIMIT = 1000
Limit = Annotated[int, Query(description=f"items per page, 0 to {MAX_LIMIT}")]
Offset = Annotated[int, Query(description="items skipped, 0 or more")]
Depth = Annotated[int, Query(description="levels to walk, 1 to LINEAGE_LIMIT_LEVELS (100)")]
T = TypeVar("T")


def _page(items: Sequence[T], limit: int, offset: int) -> list[T]:
    if not 0 <= limit <= MAX_LIMIT:
        raise InvalidRequestError(f"limit {limit} is not between 0 and {MAX_LIMIT}")
    if offset < 0:
        raise InvalidRequestError(f"offset {offset} is negative")
    return list(items[offset:offset + limit])


def _candidates(caller: Access) -> list[str] | None:
    """The warehouse namespaces the caller may read something in (None: every one)."""
    readable = caller.readable()
    if readable is None:
        return None
    under = {key.split(",", 1)[0].removeprefix("namespace=") for key in readable.entity_keys
             if key.startswith("namespace=")}
    return sorted(set(readable.namespaces) | under)


def _reads_dataset(caller: Access) -> Callable[[str, str, str], bool]:
    return lambda namespace, kind, name: caller.allows(dataset_entity(namespace, kind, name), Privilege.READ)


def _reads_program(caller: Access, item: store.ProgramName) -> bool:
    return caller.allows(program_entity(item.namespace, item.application, item.program_type, item.program),
                         Privilege.READ)


@router.get("/namespaces", response_model=MarquezNamespaces)
def list_namespaces(caller: Caller, conn: Connection, limit: Limit = 100, offset: Offset = 0) -> dict[str, Any]:
    """The OpenLineage namespaces of the datasets and jobs the caller may read something in: data
    sources (``postgres://db:5432``), job namespaces, and ``lineage://<namespace>`` for what our
    own client names."""
    return {"namespaces": [marquez.namespace(row) for row in _page(_namespaces(conn, caller), limit, offset)]}


def _namespaces(conn: psycopg.Connection, caller: Access) -> list[marquez.NamespaceRow]:
    """The OpenLineage namespaces of what the caller may read: of every dataset and job of the
    namespaces it reads whole, and of the datasets and jobs it may read in the others."""
    readable = caller.readable()
    whole = None if readable is None else readable.namespaces
    found = [(name, first, last) for name, _, first, last in store.ol_namespaces(conn, whole)]
    partial = sorted(set(_candidates(caller) or ()) - set(whole or ()))
    if partial:
        datasets, programs = store.entities_in(conn, partial)
        reads = _reads_dataset(caller)
        found += [(exported_dataset(d.namespace, d.type, d.name).namespace, at, at) for d, at in datasets
                  if reads(d.namespace, d.type, d.name)]
        found += [(exported_job(p.namespace, p.application, p.type, p.name)[0], at, at) for p, at in programs
                  if _reads_program_ref(caller)(p)]
    merged: dict[str, marquez.NamespaceRow] = {}
    for name, first, last in found:
        known = merged.get(name)
        merged[name] = marquez.NamespaceRow(name, min(first, known.created_at) if known else first,
                                            max(last, known.updated_at) if known else last)
    return [merged[name] for name in sorted(merged)]


@router.get("/namespaces/{namespace:name}", response_model=MarquezNamespace)
def get_namespace(namespace: str, caller: Caller, conn: Connection) -> dict[str, Any]:
    """One OpenLineage namespace (404 when the caller sees nothing in it)."""
    found = next((row for row in _namespaces(conn, caller) if row.name == namespace), None)
    if found is None:
        raise NotFoundError(f"namespace {namespace!r} not found")
    return marquez.namespace(found)


def _datasets(conn: psycopg.Connection, caller: Access, namespace: str, name: str | None = None
              ) -> list[store.DatasetName]:
    reads = _reads_dataset(caller)
    return [item for item in store.dataset_names(conn, namespace, _candidates(caller), name)
            if exported_dataset(item.namespace, item.dataset_type, item.name).namespace == namespace
            and reads(item.namespace, item.dataset_type, item.name)]


def _dataset_row(conn: psycopg.Connection, caller: Access, namespace: str, name: str, *,
                 times: bool = True) -> marquez.DatasetRow:
    found = _dataset_name(conn, caller, namespace, name)
    return store.dataset_rows(conn, [found.key], times=times)[found.key]


@router.get("/namespaces/{namespace:name}/datasets", response_model=MarquezDatasets)
def list_datasets(namespace: str, caller: Caller, conn: Connection, limit: Limit = 100,
                  offset: Offset = 0) -> dict[str, Any]:
    """The datasets of an OpenLineage namespace, by name."""
    found = _datasets(conn, caller, namespace)
    page = _page(found, limit, offset)
    rows = store.dataset_rows(conn, [item.key for item in page])
    return {"datasets": [marquez.dataset(rows[item.key]) for item in page], "totalCount": len(found)}


@router.get("/namespaces/{namespace:name}/datasets/{dataset:name}", response_model=MarquezDataset)
def get_dataset(namespace: str, dataset: str, caller: Caller, conn: Connection,
                window: HistoryWindow) -> dict[str, Any]:
    """A dataset: its fields (the latest schema, with their tags), tags, facets, current version,
    and column lineage (each field's inputs one level up, in the window)."""
    row = _dataset_row(conn, caller, namespace, dataset)
    check_window(*window)
    fields = _fields(conn, row)
    flows, _withheld = _column_flows(conn, caller, [_field(row, name) for name in fields], window, 1, False)
    return marquez.dataset(row, marquez.dataset_column_lineage(fields, row.identity, flows))


def _fields(conn: psycopg.Connection, row: marquez.DatasetRow) -> list[str]:
    """The dataset's fields: its schema's, then those only its column lineage names."""
    named = [f.name for f in row.fields]
    return named + [name for name in store.written_fields(conn, row.namespace, row.dataset_type, row.name)
                    if name not in set(named)]


def _field(row: marquez.DatasetRow, name: str) -> FieldNode:
    return FieldNode(row.namespace, row.dataset_type, row.name, name)


def _column_flows(conn: psycopg.Connection, caller: Access, start: list[FieldNode], window: TimeWindow, depth: int,
                  downstream: bool) -> tuple[list[marquez.FieldFlow], int]:
    if start:  # of a namespace deleted and awaiting its cleanup, nothing from before its re-creation
        window = visible_window(window, namespace_store.visible_since(conn, start[0].namespace))
    queries = EdgeQueries(conn, *window)
    return marquez.field_walk(start, depth, downstream, queries.into, queries.out_of, _reads_dataset(caller))


@router.get("/namespaces/{namespace:name}/datasets/{dataset:name}/versions", response_model=MarquezDatasetVersions)
def list_dataset_versions(namespace: str, dataset: str, caller: Caller, conn: Connection, limit: Limit = 100,
                          offset: Offset = 0) -> dict[str, Any]:
    """The dataset's schema versions, newest first (the warehouse versions a dataset by its schema)."""
    row = _dataset_row(conn, caller, namespace, dataset)
    versions = store.schema_versions(conn, row)
    return {"versions": [marquez.dataset_version(row, v) for v in _page(versions, limit, offset)],
            "totalCount": len(versions)}


@router.get("/namespaces/{namespace:name}/datasets/{dataset:name}/versions/{version}",
            response_model=MarquezDatasetVersion)
def get_dataset_version(namespace: str, dataset: str, version: str, caller: Caller,
                        conn: Connection) -> dict[str, Any]:
    """One schema version of the dataset, by the UUID its answers give."""
    row = _dataset_row(conn, caller, namespace, dataset)
    for item in store.schema_versions(conn, row):
        if marquez.version_id(row.identity, item.version) == version:
            return marquez.dataset_version(row, item)
    raise NotFoundError(f"version {version[:80]!r} of dataset {dataset!r} not found")


def _programs(conn: psycopg.Connection, caller: Access, namespace: str, name: str | None = None
              ) -> list[store.ProgramName]:
    return [item for item in store.program_names(conn, namespace, _candidates(caller), name)
            if exported_job(item.namespace, item.application, item.program_type, item.program)[0] == namespace
            and _reads_program(caller, item)]


def _reads_program_ref(caller: Access) -> Callable[[ProgramRef], bool]:
    return lambda p: caller.allows(program_entity(p.namespace, p.application, p.type, p.name), Privilege.READ)


def _shown_program(caller: Access, row: marquez.ProgramRow) -> marquez.ProgramRow:
    """A job as the caller may see it: its latest run's datasets and its parent job, readable ones only."""
    return marquez.readable_program(row, _reads_dataset(caller), _reads_program_ref(caller))


def _program(conn: psycopg.Connection, caller: Access, namespace: str, job: str) -> store.ProgramName:
    found = _programs(conn, caller, namespace, job)
    if not found:
        raise NotFoundError(f"job {job!r} not found in namespace {namespace!r}")
    return found[0]


@router.get("/namespaces/{namespace:name}/jobs", response_model=MarquezJobs)
def list_jobs(namespace: str, caller: Caller, conn: Connection, limit: Limit = 100,
              offset: Offset = 0) -> dict[str, Any]:
    """The jobs of an OpenLineage job namespace, by name: each with its latest run."""
    found = _programs(conn, caller, namespace)
    return {"jobs": [marquez.job(_shown_program(caller, row)) for row in store.program_rows(
        conn, _page(found, limit, offset))], "totalCount": len(found)}


@router.get("/namespaces/{namespace:name}/jobs/{job:name}", response_model=MarquezJob)
def get_job(namespace: str, job: str, caller: Caller, conn: Connection) -> dict[str, Any]:
    """A job: its latest run, that run's inputs and outputs, job facets and parent job."""
    return marquez.job(_shown_program(caller, store.program_rows(conn, [_program(conn, caller, namespace, job)])[0]))


@router.get("/namespaces/{namespace:name}/jobs/{job:name}/runs", response_model=MarquezRuns)
def list_job_runs(namespace: str, job: str, caller: Caller, conn: Connection, limit: Limit = 100,
                  offset: Offset = 0) -> dict[str, Any]:
    """The job's runs, newest first."""
    program = _program(conn, caller, namespace, job)
    _page((), limit, offset)  # the parameters' checks
    total, runs = store.program_runs(conn, program.key, limit, offset)
    return {"runs": [marquez.run(marquez.readable_run(row, _reads_dataset(caller))) for row in runs],
            "totalCount": total}


@router.get("/jobs/runs/{run_id}", response_model=MarquezRun)
def get_run(run_id: str, caller: Caller, conn: Connection) -> dict[str, Any]:
    """A run by its id (a run id shared by runs of several jobs: the first the caller may read)."""
    for program, row in store.runs_by_id(conn, run_id, _candidates(caller)):
        if _reads_program(caller, program):
            return marquez.run(marquez.readable_run(row, _reads_dataset(caller)))
    raise NotFoundError(f"run {run_id[:80]!r} not found")


@router.get("/tags", response_model=MarquezTags)
def list_tags(caller: Caller, conn: Connection, limit: Limit = 100, offset: Offset = 0) -> dict[str, Any]:
    """The tags assigned to anything the caller may read (in a namespace it reads whole, or on an
    entity it may read and what is under it)."""
    readable = caller.readable()
    names = (store.tags(conn, None) if readable is None
             else store.tags(conn, readable.namespaces, readable.entity_keys))
    return {"tags": [{"name": name, "description": None} for name in _page(names, limit, offset)]}


def _origin(conn: psycopg.Connection, caller: Access, node_id: str) -> marquez.NodeId:
    """The node a graph starts from, once the caller may read it (404 otherwise)."""
    node = marquez.parse_node_id(node_id)
    if node.kind == "job":
        _program(conn, caller, node.namespace, node.name)
    else:
        _dataset_name(conn, caller, node.namespace, node.name)
    return node


def _dataset_name(conn: psycopg.Connection, caller: Access, namespace: str, name: str) -> store.DatasetName:
    found = _datasets(conn, caller, namespace, name)
    if not found:
        raise NotFoundError(f"dataset {name!r} not found in namespace {namespace!r}")
    return found[0]


@router.get("/lineage", response_model=MarquezGraph)
def lineage(caller: Caller, conn: Connection, window: HistoryWindow,
            nodeId: Annotated[str, Query(description="dataset:<namespace>:<name> or job:<namespace>:<name>")],
            depth: Depth = 20) -> dict[str, Any]:
    """The dataset lineage around a dataset or job in the window, as Marquez's graph: dataset and
    job nodes, a read an edge from the dataset to the job, a write from the job to the dataset."""
    check_levels(depth)
    check_window(*window)
    node = _origin(conn, caller, nodeId)
    if node.kind == "datasetField":
        raise InvalidRequestError("a datasetField node's lineage is column-lineage's")
    if node.kind == "job":
        origins = store.program_datasets(conn, _program(conn, caller, node.namespace, node.name).key, window)
    else:
        named = _dataset_name(conn, caller, node.namespace, node.name)
        origins = [DataRef(named.namespace, named.dataset_type, named.name)]
    relations = [relation for origin in origins
                 for relation in lineage_store.walk(conn, origin, window, depth, run_ids=False)[0]]
    walked = marquez.relation_flows(relations, _reads_dataset(caller), _reads_program_ref(caller))
    data = _node_data(conn, walked, set(origins) if node.kind != "job" else set())
    if node.kind == "job" and not walked.programs:  # a job without runs in the window: its node alone
        for item in store.program_rows(conn, [_program(conn, caller, node.namespace, node.name)]):
            data[marquez.job_node(*item.job)] = marquez.job_data(_shown_program(caller, item))
    return {**marquez.lineage_graph(walked.flows, data), "withheld": walked.withheld}


@router.get("/column-lineage", response_model=MarquezGraph)
def column_lineage_graph(caller: Caller, conn: Connection, window: HistoryWindow,
                         nodeId: Annotated[str, Query(description="dataset:<namespace>:<name> or "
                                                                  "datasetField:<namespace>:<name>:<field>")],
                         depth: Depth = 20,
                         withDownstream: Annotated[str, Query(description="true: the fields computed from "
                                                                          "them too (True and False accepted)")]
                         = "false") -> dict[str, Any]:
    """The column lineage of a dataset's fields (or one field) in the window, as Marquez's graph
    of ``DATASET_FIELD`` nodes: each field with its inputs and their transformations (kinds,
    masking, the operations on the way), upstream ``depth`` levels and, with ``withDownstream``,
    downstream as far."""
    check_levels(depth)
    check_window(*window)
    downstream = _flag(withDownstream, "withDownstream")
    node = _origin(conn, caller, nodeId)
    if node.kind == "job":
        raise InvalidRequestError("give a dataset or datasetField node (a job's column lineage is its outputs')")
    row = _dataset_row(conn, caller, node.namespace, node.name, times=False)
    names = [node.field] if node.field else _fields(conn, row)
    flows, withheld = _column_flows(conn, caller, [_field(row, name) for name in names], window, depth, downstream)
    own = [(row.identity.namespace, row.identity.name, name) for name in names]
    types = {(row.identity.namespace, row.identity.name, f.name): f.type for f in row.fields}
    return {**marquez.column_lineage_graph(own, flows, types), "withheld": withheld}


def _node_data(conn: psycopg.Connection, walked: marquez.WalkedGraph, origins: set[DataRef]
               ) -> dict[str, dict[str, Any]]:
    """Each node's data, by node id: the datasets' fields, tags and facets (one query), their
    latest write and the jobs' reads and writes from the walk, the jobs' creation (one query)."""
    datasets = sorted(walked.datasets | origins, key=lambda d: (d.namespace, d.type, d.name))
    keys = entity_keys.dataset_keys(conn, datasets)
    rows = store.dataset_rows(conn, list(keys.values()), times=False)
    data = {marquez.dataset_node_of(ref): marquez.dataset_data(replace(
        rows[key], last_write=walked.last_write.get(ref), last_access=walked.last_access.get(ref)))
        for ref, key in keys.items()}
    created = store.programs_created(conn, sorted(walked.programs, key=lambda p: (p.namespace, p.application,
                                                                                 p.type, p.name)))
    for program, created_at in created.items():
        data[marquez.job_node_of(program)] = marquez.graph_job_data(program, created_at, walked)
    return data


def _flag(text: str, name: str) -> bool:
    if text.lower() not in ("true", "false"):
        raise InvalidRequestError(f"{name} {text[:20]!r} is not true or false")
    return text.lower() == "true"


@router.get("/search", response_model=MarquezSearch)
def search(caller: Caller, conn: Connection, q: Annotated[str, Query(description="the query (this API's search "
                                                                                "language: words, tags:PII, ...)")],
           filter: Annotated[str | None, Query(description="DATASET or JOB")] = None,
           sort: Annotated[str, Query(description="name, or updated_at: by relevance (hits carry no update time)")]
           = "name",
           limit: Annotated[int, Query(description="results, 1 to the page size (LINEAGE_LIMIT_PAGE_SIZE)")] = 10,
           namespace: Annotated[str | None, Query(description="an OpenLineage namespace")] = None
           ) -> dict[str, Any]:
    """Datasets and jobs matching ``q``, best first (Marquez's answer: type, name, namespace,
    nodeId), in the caller's reach."""
    kinds = {"DATASET": ["dataset", "stream"], "JOB": ["program"], None: ["dataset", "stream", "program"]}
    targets = kinds.get(filter.upper() if filter else None)
    if targets is None:
        raise InvalidRequestError(f"filter {filter!r} is not DATASET or JOB")
    if sort not in ("name", "updated_at"):
        raise InvalidRequestError(f"sort {sort[:20]!r} is not name or updated_at")
    if not 1 <= limit <= limits().page_size:
        raise InvalidRequestError(f"limit must be 1-{limits().page_size}")
    # a namespace is an OpenLineage one, known once a hit is named: the most a page holds is read
    found = metadata_search.search(conn, parse_query(q), targets=targets, offset=0, readable=caller.readable(),
                                   limit=limit if namespace is None else limits().page_size)
    results = [hit for hit in (_hit(item["entity"]) for item in found["results"]) if hit is not None
               and (namespace is None or hit["namespace"] == namespace)][:limit]
    if sort == "name":
        results.sort(key=lambda hit: (hit["name"], hit["namespace"]))
    return {"totalCount": len(results), "results": results}


def _hit(found: dict[str, Any]) -> dict[str, Any] | None:
    details = found["details"]
    parts = {item["key"]: item["value"] for item in details} if isinstance(details, list) else dict(details)
    if found["type"] in ("dataset", "stream"):
        identity: DatasetIdentity = exported_dataset(parts["namespace"], found["type"], parts[found["type"]])
        return {"type": "DATASET", "name": identity.name, "namespace": identity.namespace, "updatedAt": None,
                "nodeId": marquez.dataset_node(identity.namespace, identity.name)}
    if found["type"] == "program":
        job_namespace, job = exported_job(parts["namespace"], parts["application"], parts["type"], parts["program"])
        return {"type": "JOB", "name": job, "namespace": job_namespace, "updatedAt": None,
                "nodeId": marquez.job_node(job_namespace, job)}
    return None


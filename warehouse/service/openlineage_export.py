"""The warehouse's lineage as OpenLineage run events (spec 2-0-2): what the export gives back.

A run that came in as OpenLineage is given back as its events came (``lineage.openlineage_events``,
verbatim). A run of our own client or of automatic Spark capture is rendered here, from what the
warehouse keeps of it (``RunExport``), as two events: a START at the run's time (its inputs and
outputs named) and, once it ended, a COMPLETE, FAIL or ABORT at its end carrying each dataset
with its facets: ``schema`` (the latest schema version of the dataset),
``columnLineage`` of each written dataset (``lineage.model.column_lineage``: each output field's
source fields, each with its transformation type, subtype, masking, and as description the
operations on the way), the facets kept for the
dataset, and ``lineageWarehouse_metadata`` (its tags and properties). The run carries ``parent``
(parent and root run) and the facets kept for it; the job ``jobType`` and the job facets kept.

Names: datasets and programs keep their OpenLineage identity (``lineage.naming.identity``:
``exported_dataset``, ``exported_job``); names of our own client get one of the reserved scheme
``lineage://``, which the mapping reads back, so an export ingested into another warehouse lands
under the same names. A run id that is no UUID (the spec asks for one) is exported as a UUID
derived from the run's identity, the id itself kept in the ``lineageWarehouse_run`` run facet,
which the mapping reads back too.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from typing import Any, NamedTuple

from lineage.model.column_lineage import ColumnSource
from lineage.naming.identity import exported_dataset, exported_job
from lineage.openlineage.event import is_uuid
from lineage.openlineage.facets import WAREHOUSE_ACCESS_FACET, WAREHOUSE_RUN_FACET

PRODUCER = "https://github.com/lineage-warehouse/lineage-warehouse/export"
SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
DATASET_EVENT_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent"
JOB_EVENT_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent"
_FACETS = "https://openlineage.io/spec/facets"
_SCHEMA_URLS = {
    "parent": f"{_FACETS}/1-2-0/ParentRunFacet.json#/$defs/ParentRunFacet",
    "jobType": f"{_FACETS}/2-0-4/JobTypeJobFacet.json#/$defs/JobTypeJobFacet",
    "schema": f"{_FACETS}/1-2-0/SchemaDatasetFacet.json#/$defs/SchemaDatasetFacet",
    "columnLineage": f"{_FACETS}/1-2-0/ColumnLineageDatasetFacet.json#/$defs/ColumnLineageDatasetFacet",
    WAREHOUSE_RUN_FACET: "https://lineage-warehouse.dev/spec/facets/1-0-0/LineageWarehouseRunFacet.json",
    "lineageWarehouse_metadata": "https://lineage-warehouse.dev/spec/facets/1-0-0/LineageWarehouseMetadataFacet.json",
    WAREHOUSE_ACCESS_FACET: "https://lineage-warehouse.dev/spec/facets/1-0-0/LineageWarehouseAccessFacet.json",
}
_ENDS = {"completed": "COMPLETE", "failed": "FAIL", "killed": "ABORT"}
_RUN_NAMESPACE = uuid.UUID("6f1c3b0e-5a8e-4f59-9d55-0c2b7a1e4d21")  # of the derived run UUIDs
# Integration and job type of a program type (the jobType facet); others: the type upper-cased, JOB.
_JOB_TYPES = {"spark": ("SPARK", "APPLICATION"), "workflow": ("LINEAGE_WAREHOUSE", "DAG"),
              "mapreduce": ("MAPREDUCE", "JOB"), "service": ("LINEAGE_WAREHOUSE", "SERVICE")}


class Program(NamedTuple):
    namespace: str
    application: str
    program_type: str
    program: str


class DatasetRef(NamedTuple):
    """A dataset (a tuple: hashed and compared in C, as the export does for every run's datasets)."""

    namespace: str
    dataset_type: str
    name: str


@dataclass(frozen=True, slots=True)
class LinkedRunRef:
    """A run a run links to (its parent or root), named by its identity."""

    program: Program
    run_id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RunExport:
    """What the warehouse keeps of a run, as the export renders it."""

    program: Program
    run_id: str
    status: str
    run_at: datetime
    stopped_at: datetime | None
    started: bool = True  # its start is known (run_at is when it started); else run_at is its first event's time
    reads: tuple[DatasetRef, ...] = ()
    writes: tuple[DatasetRef, ...] = ()
    unknown: frozenset[DatasetRef] = frozenset()  # reads whose access is unknown (used, not said how)
    parent: LinkedRunRef | None = None
    root: LinkedRunRef | None = None
    run_facets: Mapping[str, Any] = field(default_factory=dict)
    job_facets: Mapping[str, Any] = field(default_factory=dict)
    # per written dataset, the column lineage edges of the run's operation sets written into it
    column_edges: Mapping[DatasetRef, Sequence[ColumnEdge]] = field(default_factory=dict)
    # its datasets' facets (a mapping holding at least them: an export shares one for all its runs)
    datasets: Mapping[DatasetRef, DatasetDescription] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class DatasetDescription:
    """A dataset's facets as every event naming it carries them: the facets kept for it, ``schema``
    (its latest schema version) and ``lineageWarehouse_metadata`` (its tags and properties);
    rendered once per export however many runs name the dataset."""

    facets: Mapping[str, Any]


def describe_dataset(schema: Sequence[Mapping[str, Any]], kept: Mapping[str, Any],
                     metadata: Mapping[str, Any] | None) -> DatasetDescription:
    """``schema``'s fields (name, type), the facets kept, the tags and properties by scope."""
    facets: dict[str, Any] = {key: value for key, value in kept.items()
                              if isinstance(value, dict) and key not in ("schema", "columnLineage")}
    if schema:
        facets["schema"] = _facet("schema", {"fields": _schema_fields(schema)})
    if metadata:
        facets["lineageWarehouse_metadata"] = _facet("lineageWarehouse_metadata", dict(metadata))
    return DatasetDescription(facets)


_UNDESCRIBED = DatasetDescription({})
_UNKNOWN_ACCESS = {WAREHOUSE_ACCESS_FACET: {"_producer": PRODUCER, "_schemaURL": _SCHEMA_URLS[WAREHOUSE_ACCESS_FACET],
                                            "access": "unknown"}}


def run_events(run: RunExport, which: Iterable[str] = ("start", "end")) -> list[dict[str, Any]]:
    """The run's events: ``start`` (at its time) and ``end`` (at its end, when it ended). A run
    whose start the warehouse never saw has no START made up: its first event is a RUNNING at
    the time of the first event it has (so a warehouse ingesting the export does not learn a
    start either)."""
    events = []
    for kind in which:
        if kind == "start":
            events.append(_event(run, "START" if run.started else "RUNNING", run.run_at,
                                 with_facets=run.stopped_at is None))
        elif run.status in _ENDS and run.stopped_at is not None:
            events.append(_event(run, _ENDS[run.status], run.stopped_at, with_facets=True))
    return events


def _event(run: RunExport, event_type: str, moment: datetime, *, with_facets: bool) -> dict[str, Any]:
    namespace, name = job_of(run.program)
    run_facets: dict[str, Any] = {key: value for key, value in run.run_facets.items()
                                  if isinstance(value, dict) and key not in ("parent", WAREHOUSE_RUN_FACET)}
    if run.parent is not None or run.root is not None:
        run_facets["parent"] = _parent_facet(run.parent or run.root, run.root)  # type: ignore[arg-type]
    kept_ids = {key: linked.run_id for key, linked in (("runId", run), ("parentRunId", run.parent or run.root),
                                                       ("rootRunId", run.root)) if linked is not None}
    if not all(is_uuid(run_id) for run_id in kept_ids.values()):
        run_facets[WAREHOUSE_RUN_FACET] = _facet(WAREHOUSE_RUN_FACET, kept_ids)
    job_facets = {key: value for key, value in run.job_facets.items() if isinstance(value, dict)}
    job_facets.setdefault("jobType", _job_type(run.program.program_type))
    written = set(run.writes)
    return {
        "eventType": event_type,
        "eventTime": moment.isoformat(),
        "producer": PRODUCER,
        "schemaURL": SCHEMA_URL,
        "run": {"runId": exported_run_id(run.program, run.run_id), "facets": run_facets},
        "job": {"namespace": namespace, "name": name, "facets": job_facets},
        "inputs": [_dataset(run, ref, with_facets, output=False) for ref in run.reads],
        "outputs": [_dataset(run, ref, with_facets, output=True) for ref in sorted(written, key=_order)],
    }


def _order(ref: DatasetRef) -> tuple[str, str, str]:
    return ref.namespace, ref.dataset_type, ref.name


@lru_cache(maxsize=4096)
def job_of(program: Program) -> tuple[str, str]:
    return exported_job(program.namespace, program.application, program.program_type, program.program)


def exported_run_id(program: Program, run_id: str) -> str:
    """The run's id when it is a UUID; else a UUID derived from the run's identity (the same each export)."""
    if is_uuid(run_id):
        return run_id
    return str(uuid.uuid5(_RUN_NAMESPACE, "\x1f".join((program.namespace, program.application, program.program_type,
                                                        program.program, run_id))))


def _parent_facet(parent: LinkedRunRef, root: LinkedRunRef | None) -> dict[str, Any]:
    body: dict[str, Any] = _linked(parent)
    if root is not None:
        body["root"] = _linked(root)
    return _facet("parent", body)


def _linked(linked: LinkedRunRef) -> dict[str, Any]:
    namespace, name = job_of(linked.program)
    return {"run": {"runId": exported_run_id(linked.program, linked.run_id)},
            "job": {"namespace": namespace, "name": name}}


@lru_cache(maxsize=4096)  # one facet per program type, shared by every event (never changed after)
def _job_type(program_type: str) -> dict[str, Any]:
    integration, job_type = _JOB_TYPES.get(program_type, (program_type.upper(), "JOB"))
    return _facet("jobType", {"processingType": "BATCH", "integration": integration, "jobType": job_type})


def _facet(name: str, body: dict[str, Any]) -> dict[str, Any]:
    return {"_producer": PRODUCER, "_schemaURL": _SCHEMA_URLS[name], **body}


def _dataset(run: RunExport, ref: DatasetRef, with_facets: bool, *, output: bool) -> dict[str, Any]:
    identity = exported_dataset(ref.namespace, ref.dataset_type, ref.name)
    rendered: dict[str, Any] = {"namespace": identity.namespace, "name": identity.name}
    if not output and ref in run.unknown:  # on every event naming it: each is mapped on its own
        rendered["inputFacets"] = _UNKNOWN_ACCESS
    if not with_facets:
        return rendered
    facets = run.datasets.get(ref, _UNDESCRIBED).facets
    edges = run.column_edges.get(ref, ()) if output else ()
    if edges:
        facets = {**facets, "columnLineage": _facet("columnLineage", {"fields": column_lineage_fields(edges)})}
    if facets:
        rendered["facets"] = facets
    return rendered


def _schema_fields(fields: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """A schema's fields as the facet nests them (``a/b`` paths become ``b`` inside ``a``)."""
    top: list[dict[str, Any]] = []
    by_path: dict[str, dict[str, Any]] = {}
    for item in fields:
        path = item["name"]
        parent_path, _, leaf = path.rpartition("/")
        rendered: dict[str, Any] = {"name": leaf, "type": item.get("type") or "unknown"}
        if isinstance(item.get("nullable"), bool):  # not in the spec's fields (which allow more): the mapping
            rendered["nullable"] = item["nullable"]  # reads it back, optional as much as required
        by_path[path] = rendered
        parent = by_path.get(parent_path) if parent_path else None
        if parent is None:  # a top field, or one whose name holds a "/" (no field is its parent)
            rendered["name"] = path
            top.append(rendered)  # the same object as by_path's: its own fields nest in it
        else:
            parent.setdefault("fields", []).append(rendered)
    return top


class ColumnEdge(NamedTuple):
    """One way values of a source field reach a written field, as ``lineage.field_edges`` keeps it
    (``lineage.model.column_lineage.field_edges``): the source, with the composed kind, and the
    transform operations on the way."""

    source: ColumnSource
    written: str
    operations: tuple[str, ...]


def column_lineage_fields(edges: Iterable[ColumnEdge]) -> dict[str, Any]:
    """The ``fields`` of a ``columnLineage`` facet from the edges written into one dataset: each
    written field's source fields, each source with every (type, subtype, masking) that reaches it."""
    merged: dict[str, dict[ColumnSource, set[str]]] = {}
    for edge in edges:
        merged.setdefault(edge.written, {}).setdefault(edge.source, set()).update(edge.operations)
    fields: dict[str, Any] = {}
    for written in sorted(merged):
        by_field: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        for source in sorted(merged[written]):
            identity = exported_dataset(source.namespace, source.dataset_type, source.name)
            transformation: dict[str, Any] = {"type": source.type, "masking": source.masking}
            if source.subtype:
                transformation["subtype"] = source.subtype
            if merged[written][source]:  # the operations on the way: sha2, concat, ...
                transformation["description"] = ", ".join(sorted(merged[written][source]))[:1024]
            by_field.setdefault((identity.namespace, identity.name, source.field), []).append(transformation)
        fields[written] = {"inputFields": [
            {"namespace": namespace_, "name": name, "field": source_field, "transformations": transformations}
            for (namespace_, name, source_field), transformations in by_field.items()]}
    return fields


@dataclass(frozen=True, slots=True, kw_only=True)
class DatasetExport:
    """A dataset with what the warehouse keeps of it beside runs: its schema, facets and metadata."""

    ref: DatasetRef
    updated_at: datetime  # the latest of its schema versions' and metadata's times
    description: DatasetDescription


def dataset_event(dataset: DatasetExport) -> dict[str, Any]:
    """An OpenLineage DatasetEvent for a dataset no run of the window names: its schema, facets
    kept and metadata (``--datasets``)."""
    identity = exported_dataset(dataset.ref.namespace, dataset.ref.dataset_type, dataset.ref.name)
    return {"eventTime": dataset.updated_at.isoformat(), "producer": PRODUCER, "schemaURL": DATASET_EVENT_URL,
            "dataset": {"namespace": identity.namespace, "name": identity.name,
                        "facets": dict(dataset.description.facets)}}


@dataclass(frozen=True, slots=True)
class JobExport:
    """A program's declared lineage (an OpenLineage JobEvent's): what its latest declaration, made
    at ``declared_at``, says it reads and writes."""

    program: Program
    declared_at: datetime
    inputs: tuple[DatasetRef, ...]
    outputs: tuple[DatasetRef, ...]


def job_event(job: JobExport) -> dict[str, Any]:
    """An OpenLineage JobEvent for a program's declared lineage: what came in as one goes out as one."""
    namespace, name = exported_job(*job.program)

    def named(refs: Sequence[DatasetRef]) -> list[dict[str, str]]:
        identities = (exported_dataset(ref.namespace, ref.dataset_type, ref.name) for ref in refs)
        return [{"namespace": identity.namespace, "name": identity.name} for identity in identities]

    return {"eventTime": job.declared_at.isoformat(), "producer": PRODUCER, "schemaURL": JOB_EVENT_URL,
            "job": {"namespace": namespace, "name": name}, "inputs": named(job.inputs), "outputs": named(job.outputs)}

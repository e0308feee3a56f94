"""Marquez's read API over the warehouse (issue 34): the answer shapes Marquez 0.50 gives, built
from the warehouse's rows, every dataset and job named by its OpenLineage identity (the names
``lineage export`` gives: ``lineage.naming.identity``), so scripts and clients written against
Marquez read this warehouse.

Pure: the store (``warehouse.db.marquez_store``) reads the rows, the routes
(``lineage_api.routes.marquez``) authorize and page. What differs from Marquez is said where it
happens and in docs/openlineage.md.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from lineage.errors import InvalidRequestError
from lineage.ids import DataRef, ProgramRef
from lineage.naming.identity import DatasetIdentity, exported_dataset, exported_job
from warehouse.service.lineage_graph import Relation
from warehouse.service.tag_propagation import Edge, FieldNode

# A run's status as Marquez names its state
STATES = {"running": "RUNNING", "completed": "COMPLETED", "failed": "FAILED", "killed": "ABORTED"}
DATASET_TYPES = {"dataset": "DB_TABLE", "stream": "STREAM"}
NODE_KINDS = ("dataset", "datasetField", "job")
_PORT = re.compile(r"[0-9]+(?=[/:])")  # ':5432' in 'postgres://db:5432:...' is no separator
_VERSIONS = uuid.UUID("6f0c1d2e-5b7a-4c43-9a55-2f1c8e3b7d10")  # the namespace of version UUIDs


@dataclass(frozen=True, slots=True)
class NodeId:
    """A Marquez node id: ``dataset:<namespace>:<name>``, ``datasetField:<namespace>:<name>:<field>``
    or ``job:<namespace>:<name>``."""

    kind: str
    namespace: str
    name: str
    field: str | None = None

    def render(self) -> str:
        tail = f":{self.field}" if self.field is not None else ""
        return f"{self.kind}:{self.namespace}:{self.name}{tail}"


def dataset_node(namespace: str, name: str) -> str:
    return NodeId("dataset", namespace, name).render()


def field_node(namespace: str, name: str, field_name: str) -> str:
    return NodeId("datasetField", namespace, name, field_name).render()


def job_node(namespace: str, name: str) -> str:
    return NodeId("job", namespace, name).render()


def parse_node_id(text: str) -> NodeId:
    """A node id as Marquez reads it: the kind, then the namespace up to the first ``:`` that is
    neither the ``://`` of a scheme nor the ``:`` of a port (``postgres://db:5432:...``: digits
    followed by ``/`` or ``:``; ``lineage://sales:2024`` is dataset ``2024``), then the name
    (for a field, up to the last ``:``). A version (``#<uuid>``) is refused: this warehouse keeps
    no dataset versions by UUID in lineage."""
    kind, colon, rest = text.partition(":")
    if not colon or kind not in NODE_KINDS:
        raise InvalidRequestError(f"nodeId {text[:80]!r} is not dataset:<namespace>:<name>, "
                                  "datasetField:<namespace>:<name>:<field> or job:<namespace>:<name>")
    if "#" in rest:
        raise InvalidRequestError(f"nodeId {text[:80]!r}: versions (#...) are not served")
    field_name = None
    if kind == "datasetField":
        rest, colon, field_name = rest.rpartition(":")
        if not colon or not field_name:
            raise InvalidRequestError(f"nodeId {text[:80]!r} names no field (datasetField:<namespace>:<name>:<field>)")
    cut = _separator(rest)
    if cut is None or cut == 0 or cut == len(rest) - 1:
        raise InvalidRequestError(f"nodeId {text[:80]!r} has no <namespace>:<name>")
    return NodeId(kind, rest[:cut], rest[cut + 1:], field_name)


def _separator(text: str) -> int | None:
    """The position of the ``:`` between namespace and name."""
    at = text.find(":")
    while at >= 0:
        after = text[at + 1:]
        if not after.startswith("//") and not _PORT.match(after):
            return at
        at = text.find(":", at + 1)
    return None


def version_id(identity: DatasetIdentity, version: int | None) -> str | None:
    """The UUID standing for a dataset's schema version (the same every time)."""
    if version is None:
        return None
    return str(uuid.uuid5(_VERSIONS, f"{identity.namespace}\x00{identity.name}\x00{version}"))


def iso(moment: datetime | None) -> str | None:
    """An instant as Marquez writes one (ISO 8601, UTC, ``Z``)."""
    if moment is None:
        return None
    return moment.isoformat().replace("+00:00", "Z")


@dataclass(frozen=True, slots=True)
class SchemaField:
    name: str
    type: str | None
    description: str | None = None


@dataclass(frozen=True, slots=True)
class DatasetRow:
    """A warehouse dataset as the store reads it for Marquez's answers."""

    namespace: str  # the warehouse's
    dataset_type: str  # dataset | stream
    name: str  # the warehouse's
    created_at: datetime
    last_access: datetime | None = None
    last_write: datetime | None = None
    schema_version: int | None = None
    schema_at: datetime | None = None
    fields: tuple[SchemaField, ...] = ()
    tags: tuple[str, ...] = ()
    field_tags: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    facets: Mapping[str, Any] = field(default_factory=dict)

    @property
    def identity(self) -> DatasetIdentity:
        return exported_dataset(self.namespace, self.dataset_type, self.name)

    @property
    def updated_at(self) -> datetime:
        return max(t for t in (self.created_at, self.last_access, self.schema_at) if t is not None)


def _description(facets: Mapping[str, Any]) -> str | None:
    documentation = facets.get("documentation")
    text = documentation.get("description") if isinstance(documentation, dict) else None
    return text if isinstance(text, str) else None


def _lifecycle(facets: Mapping[str, Any]) -> str | None:
    change = facets.get("lifecycleStateChange")
    state = change.get("lifecycleStateChange") if isinstance(change, dict) else None
    return state if isinstance(state, str) else None


def dataset_fields(fields: Iterable[SchemaField], field_tags: Mapping[str, tuple[str, ...]]) -> list[dict[str, Any]]:
    """Marquez's fields of a schema, each with its tags."""
    return [{"name": f.name, "type": f.type, "tags": list(field_tags.get(f.name, ())), "description": f.description}
            for f in fields]


def dataset_data(row: DatasetRow) -> dict[str, Any]:
    """Marquez's ``DatasetData`` (a dataset node of a lineage graph)."""
    identity = row.identity
    return {"id": {"namespace": identity.namespace, "name": identity.name},
            "type": DATASET_TYPES[row.dataset_type], "name": identity.name, "physicalName": identity.name,
            "createdAt": iso(row.created_at), "updatedAt": iso(row.updated_at), "namespace": identity.namespace,
            "sourceName": identity.namespace, "fields": dataset_fields(row.fields, row.field_tags),
            "tags": list(row.tags),
            "lastModifiedAt": iso(row.last_write), "description": _description(row.facets),
            "lastLifecycleState": _lifecycle(row.facets)}


def dataset(row: DatasetRow, column_lineage: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Marquez's ``Dataset``: ``DatasetData`` with the current version, column lineage and facets."""
    return {**dataset_data(row), "currentVersion": version_id(row.identity, row.schema_version),
            "columnLineage": column_lineage or None, "facets": dict(row.facets), "deleted": False}


@dataclass(frozen=True, slots=True)
class SchemaVersion:
    version: int
    created_at: datetime
    fields: tuple[SchemaField, ...]


def dataset_version(row: DatasetRow, version: SchemaVersion) -> dict[str, Any]:
    """Marquez's ``DatasetVersion``: a dataset at one of its schema versions (the warehouse versions
    a dataset by its schema; Marquez also by each write: ``createdByRun`` is null here)."""
    identity = row.identity
    return {"id": {"namespace": identity.namespace, "name": identity.name},
            "type": DATASET_TYPES[row.dataset_type], "name": identity.name, "physicalName": identity.name,
            "createdAt": iso(version.created_at), "version": version_id(identity, version.version),
            "namespace": identity.namespace, "sourceName": identity.namespace,
            "fields": dataset_fields(version.fields, row.field_tags), "tags": list(row.tags),
            "lifecycleState": _lifecycle(row.facets),
            "description": _description(row.facets), "currentSchemaVersion": version_id(identity, version.version),
            "createdByRun": None, "facets": {}}


@dataclass(frozen=True, slots=True)
class DatasetUse:
    """A dataset a run read or wrote (``data``: the warehouse's, which authorization checks), with
    its schema version at the run's time."""

    data: DataRef
    schema_version: int | None

    @property
    def identity(self) -> DatasetIdentity:
        return exported_dataset(self.data.namespace, self.data.type, self.data.name)


@dataclass(frozen=True, slots=True)
class RunRow:
    run_id: str
    status: str
    started_at: datetime | None
    stopped_at: datetime | None
    first_event_at: datetime | None
    facets: Mapping[str, Any] = field(default_factory=dict)  # run facets, by name
    inputs: tuple[DatasetUse, ...] = ()
    outputs: tuple[DatasetUse, ...] = ()


def _versions(uses: Sequence[DatasetUse]) -> list[dict[str, Any]]:
    return [{"datasetVersionId": {"namespace": use.identity.namespace, "name": use.identity.name,
                                  "version": version_id(use.identity, use.schema_version)}, "facets": {}}
            for use in uses]


def readable_run(row: RunRow, reads_dataset: Readable) -> RunRow:
    """``row`` with only the datasets the caller may read (the others are left out, as a run's
    accesses are everywhere)."""
    def kept(uses: tuple[DatasetUse, ...]) -> tuple[DatasetUse, ...]:
        return tuple(use for use in uses if reads_dataset(use.data.namespace, use.data.type, use.data.name))

    return replace(row, inputs=kept(row.inputs), outputs=kept(row.outputs))


def readable_program(row: ProgramRow, reads_dataset: Readable, reads_program: Callable[[ProgramRef], bool]
                     ) -> ProgramRow:
    """``row`` with its latest run's datasets and its parent job as the caller may see them."""
    shown = row.parent_program is not None and reads_program(row.parent_program)
    parent = row.parent if shown else None
    latest = readable_run(row.latest_run, reads_dataset) if row.latest_run is not None else None
    return replace(row, latest_run=latest, parent=parent)


def run(row: RunRow) -> dict[str, Any]:
    """Marquez's ``Run``."""
    created = row.first_event_at or row.started_at
    duration = (int((row.stopped_at - row.started_at).total_seconds() * 1000)
                if row.started_at and row.stopped_at else None)
    nominal = row.facets.get("nominalTime")
    nominal = nominal if isinstance(nominal, dict) else {}
    return {"id": row.run_id, "createdAt": iso(created), "updatedAt": iso(row.stopped_at or row.started_at or created),
            "nominalStartTime": nominal.get("nominalStartTime"), "nominalEndTime": nominal.get("nominalEndTime"),
            "state": STATES[row.status], "startedAt": iso(row.started_at), "endedAt": iso(row.stopped_at),
            "durationMs": duration, "args": {}, "jobVersion": None,
            "inputDatasetVersions": _versions(row.inputs), "outputDatasetVersions": _versions(row.outputs),
            "facets": dict(row.facets)}


@dataclass(frozen=True, slots=True)
class ProgramRow:
    """A warehouse program, as the store reads it for Marquez's jobs."""

    namespace: str
    application: str
    program_type: str
    program: str
    created_at: datetime
    latest_run: RunRow | None = None
    job_facets: Mapping[str, Any] = field(default_factory=dict)  # the latest run's
    parent: tuple[str, str, str | None] | None = None  # the latest run's parent job (namespace, name, run id)
    tags: tuple[str, ...] = ()
    parent_program: ProgramRef | None = None  # the parent job's program, which authorization checks

    @property
    def job(self) -> tuple[str, str]:
        return exported_job(self.namespace, self.application, self.program_type, self.program)


def _job_type(facets: Mapping[str, Any]) -> str:
    facet = facets.get("jobType")
    processing = facet.get("processingType") if isinstance(facet, dict) else None
    return "STREAM" if processing == "STREAMING" else "BATCH"


def _location(facets: Mapping[str, Any]) -> str | None:
    facet = facets.get("sourceCodeLocation")
    url = facet.get("url") if isinstance(facet, dict) else None
    return url if isinstance(url, str) else None


def job_data(row: ProgramRow) -> dict[str, Any]:
    """Marquez's ``JobData`` (a job node of a lineage graph)."""
    namespace, name = row.job
    latest = row.latest_run
    inputs = [{"namespace": u.identity.namespace, "name": u.identity.name} for u in latest.inputs] if latest else []
    outputs = [{"namespace": u.identity.namespace, "name": u.identity.name} for u in latest.outputs] if latest else []
    parent = row.parent
    return {"id": {"namespace": namespace, "name": name}, "type": _job_type(row.job_facets), "name": name,
            "simpleName": name.rsplit(".", 1)[-1] if parent else name,
            "parentJobName": parent[1] if parent else None,
            "parentJobUuid": parent[2] if parent else None,
            "createdAt": iso(row.created_at),
            "updatedAt": iso(max(t for t in (row.created_at, latest.stopped_at if latest else None,
                                             latest.started_at if latest else None) if t is not None)),
            "namespace": namespace, "inputs": inputs, "outputs": outputs, "location": _location(row.job_facets),
            "description": _description(row.job_facets), "latestRun": run(latest) if latest else None}


def job(row: ProgramRow) -> dict[str, Any]:
    """Marquez's ``Job``: ``JobData`` with its latest runs, facets, labels and tags."""
    data = job_data(row)
    return {**data, "latestRuns": [data["latestRun"]] if data["latestRun"] else [],
            "facets": dict(row.job_facets), "currentVersion": None, "labels": [], "tags": list(row.tags)}


@dataclass(frozen=True, slots=True)
class NamespaceRow:
    """An OpenLineage namespace the caller sees something in."""

    name: str
    created_at: datetime
    updated_at: datetime
    description: str | None = None


def namespace(row: NamespaceRow) -> dict[str, Any]:
    return {"name": row.name, "createdAt": iso(row.created_at), "updatedAt": iso(row.updated_at),
            "ownerName": "anonymous", "description": row.description, "isHidden": False}


# Lineage graphs


@dataclass(frozen=True, slots=True)
class Flow:
    """A job's read (``reads``) or write of a dataset, node ids both."""

    dataset: str
    job: str
    reads: bool


def lineage_graph(flows: Iterable[Flow], data: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    """Marquez's ``{"graph": [...]}``: each node with its data and its edges (a read is an edge
    from the dataset to the job, a write from the job to the dataset), sorted by id."""
    nodes: dict[str, dict[str, Any]] = {}

    def node(node_id: str) -> dict[str, Any]:
        if node_id not in nodes:
            kind = "DATASET" if node_id.startswith("dataset:") else "JOB"
            nodes[node_id] = {"id": node_id, "type": kind, "data": data.get(node_id), "inEdges": [], "outEdges": []}
        return nodes[node_id]

    seen: set[tuple[str, str]] = set()
    for flow in flows:
        origin, destination = (flow.dataset, flow.job) if flow.reads else (flow.job, flow.dataset)
        if (origin, destination) in seen:
            continue
        seen.add((origin, destination))
        edge = {"origin": origin, "destination": destination}
        node(origin)["outEdges"].append(edge)
        node(destination)["inEdges"].append(edge)
    for node_id in data:
        node(node_id)
    for item in nodes.values():
        item["inEdges"].sort(key=lambda e: (e["origin"], e["destination"]))
        item["outEdges"].sort(key=lambda e: (e["origin"], e["destination"]))
    return {"graph": [nodes[key] for key in sorted(nodes)]}


@dataclass(frozen=True, slots=True)
class FieldFlow:
    """One way a source field reaches a field: its transformation (kind, subtype, masking) and the
    operations on the way."""

    source: tuple[str, str, str]  # OpenLineage namespace, name, field
    target: tuple[str, str, str]
    kind: str
    subtype: str
    masking: bool
    operations: tuple[str, ...]


def _transformation(flow: FieldFlow) -> dict[str, Any]:
    return {"type": flow.kind, "subtype": flow.subtype, "masking": flow.masking,
            "description": ", ".join(flow.operations)}


def _described(flows: Sequence[FieldFlow]) -> tuple[str | None, str | None]:
    """Marquez's one ``transformationType`` and ``transformationDescription`` for an input: the
    kinds (``DIRECT/IDENTITY``), and the operations, of every way it reaches the field."""
    kinds = sorted({f"{flow.kind}/{flow.subtype}" + (" (masking)" if flow.masking else "") for flow in flows})
    operations = sorted({op for flow in flows for op in flow.operations})
    return (", ".join(kinds) or None), (", ".join(operations) or None)


def input_fields(flows: Sequence[FieldFlow]) -> list[dict[str, Any]]:
    """A field's inputs as Marquez lists them, one per source field, each with every way it reaches
    the field (``transformations``, OpenLineage's, besides Marquez's one type and description)."""
    by_source: dict[tuple[str, str, str], list[FieldFlow]] = {}
    for flow in flows:
        by_source.setdefault(flow.source, []).append(flow)
    found = []
    for source in sorted(by_source):
        kinds, operations = _described(by_source[source])
        found.append({"namespace": source[0], "dataset": source[1], "datasetVersion": None, "field": source[2],
                      "transformationDescription": operations, "transformationType": kinds,
                      "transformations": sorted((_transformation(f) for f in by_source[source]),
                                                key=lambda t: (t["type"], t["subtype"], t["description"]))})
    return found


def column_lineage_graph(fields: Iterable[tuple[str, str, str]], flows: Iterable[FieldFlow],
                         types: Mapping[tuple[str, str, str], str | None]) -> dict[str, Any]:
    """Marquez's column-lineage ``{"graph": [...]}``: a ``DATASET_FIELD`` node per field, its data
    with its inputs; ``inEdges`` from the node to each input field and ``outEdges`` from the node
    to each field it feeds (Marquez's own direction for both)."""
    flows = list(flows)
    into: dict[tuple[str, str, str], list[FieldFlow]] = {}
    out_of: dict[tuple[str, str, str], set[tuple[str, str, str]]] = {}
    every = set(fields)
    for flow in flows:
        into.setdefault(flow.target, []).append(flow)
        out_of.setdefault(flow.source, set()).add(flow.target)
        every |= {flow.source, flow.target}
    graph = []
    for key in sorted(every):
        node_id = field_node(*key)
        inputs = input_fields(into.get(key, []))
        graph.append({
            "id": node_id, "type": "DATASET_FIELD",
            "data": {"namespace": key[0], "dataset": key[1], "datasetVersion": None, "field": key[2],
                     "fieldType": types.get(key), "transformationDescription": None, "transformationType": None,
                     "inputFields": inputs},
            "inEdges": [{"origin": node_id, "destination": field_node(i["namespace"], i["dataset"], i["field"])}
                        for i in inputs],
            "outEdges": [{"origin": node_id, "destination": field_node(*target)}
                         for target in sorted(out_of.get(key, ()))]})
    return {"graph": graph}


def dataset_column_lineage(fields: Sequence[str], identity: DatasetIdentity, flows: Sequence[FieldFlow]
                           ) -> list[dict[str, Any]]:
    """Marquez's ``Dataset.columnLineage``: each field's inputs one level up."""
    found = []
    for name in fields:
        key = (identity.namespace, identity.name, name)
        into = [flow for flow in flows if flow.target == key]
        if into:
            kinds, operations = _described(into)
            found.append({"name": name, "inputFields": [
                {k: item[k] for k in ("namespace", "dataset", "field", "transformationDescription",
                                      "transformationType")} for item in input_fields(into)],
                "transformationDescription": operations, "transformationType": kinds})
    return found


# Walks


Readable = Callable[[str, str, str], bool]  # (warehouse namespace, dataset type, name) -> may read


def _ol_field(node: FieldNode) -> tuple[str, str, str]:
    identity = exported_dataset(node.namespace, node.dataset_type, node.dataset)
    return identity.namespace, identity.name, node.field


def field_walk(start: Sequence[FieldNode], depth: int, downstream: bool,
               into: Callable[[Sequence[FieldNode]], list[Edge]], out_of: Callable[[Sequence[FieldNode]], list[Edge]],
               readable: Readable) -> tuple[list[FieldFlow], int]:
    """The field flows ``depth`` levels upstream of ``start`` (and, with ``downstream``, as far
    downstream), each once however many programs recorded it, and how many fields the caller may
    not read were left out (the walk does not go through them)."""
    flows: dict[FieldFlow, None] = {}
    withheld: set[FieldNode] = set()
    for step, far_end in ((into, lambda e: e.source), *(((out_of, lambda e: e.target),) if downstream else ())):
        seen = set(start)
        frontier = list(start)
        for _level in range(depth):
            found = []
            for edge in step(frontier):
                other = far_end(edge)
                if not readable(other.namespace, other.dataset_type, other.dataset):
                    withheld.add(other)
                    continue
                flows[FieldFlow(_ol_field(edge.source), _ol_field(edge.target), edge.kind, edge.subtype,
                                edge.masking, edge.operations)] = None
                if other not in seen:
                    seen.add(other)
                    found.append(other)
            if not found:
                break
            frontier = sorted(found, key=lambda n: (n.namespace, n.dataset_type, n.dataset, n.field))
    return list(flows), len(withheld)


@dataclass(slots=True)
class WalkedGraph:
    """The walk's relations as Marquez's graph needs them: the flows (node ids of OpenLineage
    identities), the datasets and programs shown, what the walk knows of them (a dataset's latest
    write, a program's reads, writes and latest run, in the window), and how many nodes the
    caller may not read were left out."""

    flows: list[Flow] = field(default_factory=list)
    datasets: set[DataRef] = field(default_factory=set)
    programs: set[ProgramRef] = field(default_factory=set)
    withheld: int = 0
    last_write: dict[DataRef, datetime] = field(default_factory=dict)
    last_access: dict[DataRef, datetime] = field(default_factory=dict)
    reads: dict[ProgramRef, list[DataRef]] = field(default_factory=dict)
    writes: dict[ProgramRef, list[DataRef]] = field(default_factory=dict)
    last_run: dict[ProgramRef, datetime] = field(default_factory=dict)


def relation_flows(relations: Iterable[Relation], reads_dataset: Readable, reads_program: Callable[[ProgramRef], bool]
                   ) -> WalkedGraph:
    """The walk's relations (runs counted: ``Relation.span``) as Marquez's graph needs them."""
    walked = WalkedGraph()
    withheld: set[object] = set()
    for relation in relations:
        data, program = relation.data, relation.program
        if relation.access not in ("read", "write", "read_write"):  # an unknown access: no edge Marquez has
            continue
        if not reads_dataset(data.namespace, data.type, data.name):
            withheld.add(data)
            continue
        if not reads_program(program):
            withheld.add(program)
            continue
        walked.datasets.add(data)
        walked.programs.add(program)
        dataset_id, job_id = dataset_node_of(data), job_node_of(program)
        last = (datetime.fromtimestamp(relation.span.last, UTC)
                if relation.span is not None and relation.span.last is not None else None)
        if relation.access in ("read", "read_write"):
            walked.flows.append(Flow(dataset_id, job_id, reads=True))
            walked.reads.setdefault(program, []).append(data)
        if relation.access in ("write", "read_write"):
            walked.flows.append(Flow(dataset_id, job_id, reads=False))
            walked.writes.setdefault(program, []).append(data)
            if last is not None:
                walked.last_write[data] = max(last, walked.last_write.get(data, last))
        if last is not None:
            walked.last_access[data] = max(last, walked.last_access.get(data, last))
            walked.last_run[program] = max(last, walked.last_run.get(program, last))
    walked.withheld = len(withheld)
    return walked


def graph_job_data(program: ProgramRef, created_at: datetime, walked: WalkedGraph) -> dict[str, Any]:
    """Marquez's ``JobData`` of a job node, from what the walk knows of its program: its reads and
    writes in the window; ``latestRun`` is null (a job's runs: ``/jobs/{name}/runs``)."""
    namespace, name = exported_job(program.namespace, program.application, program.type, program.name)

    def named(refs: Iterable[DataRef]) -> list[dict[str, str]]:
        identities = sorted({exported_dataset(d.namespace, d.type, d.name) for d in refs},
                            key=lambda i: (i.namespace, i.name))
        return [{"namespace": i.namespace, "name": i.name} for i in identities]

    return {"id": {"namespace": namespace, "name": name}, "type": "BATCH", "name": name, "simpleName": name,
            "parentJobName": None, "parentJobUuid": None, "createdAt": iso(created_at),
            "updatedAt": iso(max(created_at, walked.last_run.get(program, created_at))), "namespace": namespace,
            "inputs": named(walked.reads.get(program, ())), "outputs": named(walked.writes.get(program, ())),
            "location": None, "description": None, "latestRun": None}


def dataset_node_of(data: DataRef) -> str:
    identity = exported_dataset(data.namespace, data.type, data.name)
    return dataset_node(identity.namespace, identity.name)


def job_node_of(program: ProgramRef) -> str:
    return job_node(*exported_job(program.namespace, program.application, program.type, program.name))

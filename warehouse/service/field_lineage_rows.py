"""The rows field lineage is read as: what ``warehouse.db.field_lineage_store`` answers the
service's ``FieldLineageQueries`` with, and what the walks, the renderings (``field_lineage_response``,
``field_summaries``), the hiding (``field_hiding``) and the narrowing (``field_transformations``)
take. They are defined here, in the service, because the service declares the queries it asks;
the store, a layer above, builds them.

The warehouse stores each distinct operation set once (its operations, descriptions, paths and
flows) and one small row per run that recorded it. A row is one operation set's contribution to
an answer: a field's path in that set (``PathRow``) or where a source field went in it
(``FlowRow``), with what every such row carries (``OperationSetRow``): the set's latest
descriptions and the runs, programs and first and last run times that recorded it in the
window. Rows of one path or flow recorded by several operation sets merge when rendered.

The path and flow themselves stay the JSON documents the field lineage job stored
(``FieldPath.to_dict()``, ``SourceFieldFlow.to_dict()``): the answers render them almost as they
are, and a wide record's answer holds thousands of their operations.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple, TypeAlias

from lineage.ids import DataRef

PathDocument: TypeAlias = dict[str, Any]
"""A stored path of a field (``lineage.model.field_paths.FieldPath.to_dict()``): ``field``,
``origin``, ``fingerprint``, ``operations`` (in topological order, each ``id``, ``type``, ``name``,
``inputs`` [{``field``, ``origin``, ``transformation``?}], ``outputs``, ``sources``), ``sources``
(the source fields it starts from: ``namespace``, ``type``, ``name``, ``field``) and ``warnings``
when the record had some; as the store answers it, ``set``: the operation set's fingerprint.
Parsed for one answer only, so it may be changed in place."""

FlowDocument: TypeAlias = dict[str, Any]
"""A stored flow of a source field (``warehouse.service.field_flows.SourceFieldFlow.to_dict()``):
the source (``namespace``, ``type``, ``name``), ``field``, ``fingerprint``, ``operations`` (its
reads, then every operation the field went through), ``destinationFields`` and ``drops``
(operation ids)."""


class FieldKey(NamedTuple):
    """A field of a dataset: what field lineage is asked about, and walks through."""

    namespace: str
    dataset: str
    field: str


@dataclass(frozen=True, slots=True)
class ProgramLastRun:
    """A program whose runs recorded an operation set in the window, with the start of its
    latest such run (CDAP's ``ProgramInfo`` before rendering; ``field_summaries.program_infos``)."""

    namespace: str
    application: str
    type: str
    program: str
    last_run_seconds: int  # epoch seconds; CDAP's lastExecutedTimeInSeconds
    runs: tuple[str, ...] = ()  # its runs' ids (the set's ``runs`` among them)

    @classmethod
    def from_json(cls, item: Mapping[str, Any]) -> ProgramLastRun:
        """One element of the queries' ``programs`` aggregate (``field_lineage_store.run_groups``)."""
        return cls(item["namespace"], item["application"], item["type"], item["program"],
                   item["lastExecutedTimeInSeconds"], tuple(item.get("runs") or ()))

    def as_program(self) -> dict[str, str]:
        """The program as a program info names it (what ``ReadableProgram`` is asked about)."""
        return {"namespace": self.namespace, "application": self.application, "type": self.type,
                "program": self.program}


@dataclass(frozen=True, slots=True, kw_only=True)
class OperationSetRow:
    """What every row of an operation set carries: the set's latest descriptions, and the runs
    that recorded the set in the window (shared by every row of the set, not copied)."""

    descriptions: Mapping[str, str]  # operation id -> its latest description
    described_at: datetime  # the event time of those descriptions
    runs: tuple[str, ...]  # run ids
    programs: tuple[ProgramLastRun, ...]
    first_seen: datetime  # the earliest and latest run time (start, else earliest event)
    last_seen: datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class PathRow(OperationSetRow):
    """One operation set's path of the field ``key`` (``FieldLineageQueries.paths``)."""

    key: FieldKey
    path_fingerprint: str  # the fingerprint of ``path`` as stored (field, origins, operations)
    path: PathDocument  # with its operations


@dataclass(frozen=True, slots=True, kw_only=True)
class FlowRow(OperationSetRow):
    """Where a source field went in one operation set that reads it (``FieldLineageQueries.flows``):
    its flow, up to the writes or drops, and the set's destination."""

    flow_fingerprint: str
    flow: FlowDocument
    destination: DataRef  # the record's destination: namespace, type (dataset, stream...), name

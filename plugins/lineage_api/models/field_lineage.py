"""Field lineage (the Field Level Lineage design): paths, flows, summaries."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from lineage_api.models.base import Body, Links


class FieldPath(Body):
    """One distinct path into a field, with every run that recorded it."""

    operations: list[dict[str, Any]] = Field(
        description="the path's operations, first to last, as the *Field Level Lineage* design records them; "
                    "an input carries its `transformation` ({type: DIRECT or INDIRECT, subtype, description, "
                    "masking}) when the producer recorded one, and no such key otherwise")
    sources: list[dict[str, Any]] = Field(description="the source fields the path starts from")
    runs: list[str]
    runCount: int
    programs: list[ProgramInfo] = Field(description="the programs whose runs recorded the path, each once with "
                                                    "its latest run start in the window, newest first")
    firstSeenInSeconds: int
    lastSeenInSeconds: int
    fingerprint: str
    warnings: list[RecordWarning] | None = Field(
        None, description="what the record was accepted with on the path's operations (CDAP's leniency)")
    graph: dict[str, Any] | None = Field(
        None, description="the simple or detailed view's nodes and edges; a detailed edge carries its input's "
                          "`transformation`, a simple edge the distinct `transformations` between its source "
                          "field and the field, each only when recorded; a detailed view also the `warnings`")


class RecordWarning(Body):
    operation: str = Field(description="the operation id the warning is about")
    message: str


class CdapProgramId(Body):
    """CDAP's ``ProgramId``."""

    namespace: str
    application: str
    type: str
    program: str
    entity: Literal["PROGRAM"]


class ProgramInfo(Body):
    """CDAP's ``ProgramInfo``: a program and the start of its latest run in the window."""

    program: CdapProgramId
    lastExecutedTimeInSeconds: int


class FieldDrop(Body):
    operation: str = Field(description="the id of the transform with no outputs that dropped the field")
    name: str
    description: str


class FieldFlow(Body):
    """Where a source field went in one distinct operation set: written, dropped, or nowhere."""

    destination: dict[str, str] = Field(description="the record's destination: namespace, type, name")
    operations: list[dict[str, Any]] = Field(description="its reads, then every operation the field went "
                                                         "through up to the writes or the drops")
    destinationFields: list[str] = Field(description="the destination's fields it reached")
    drops: list[FieldDrop]
    reachesNothing: bool = Field(description="read, and neither written nor dropped")
    runs: list[str]
    runCount: int
    programs: list[ProgramInfo]
    firstSeenInSeconds: int
    lastSeenInSeconds: int
    fingerprint: str


class RelatedField(Body):
    namespace: str
    dataset: str
    field: str
    level: int
    paths: list[FieldPath]
    links: Links | None = Field(None, description="absent for a field the caller may not read")


class FieldLineageAnswer(Body):
    """Provenance (``paths`` and ``upstream``) or impact (``impacts``) of a field."""

    fieldName: str
    startTimeInSeconds: int
    endTimeInSeconds: int
    direction: Literal["incoming", "outgoing"]
    paths: list[FieldPath] | None = None
    upstream: list[RelatedField] | None = None
    flows: list[FieldFlow] | None = Field(
        None, description="outgoing: where the field went, per distinct operation set (written, dropped, nowhere)")
    impacts: list[RelatedField] | None = None
    truncated: bool | None = Field(None, description="true when fields with lineage lay beyond `levels`: the "
                                                     "walk (upstream or impacts) was cut there")
    graph: dict[str, Any] | None = Field(
        None, description="with `graph=answer`: one drawing of every path the answer shows, in the view asked "
                          "(the union of the paths' drawings, each node and edge once); the paths then carry none")


class DatasetField(Body):
    name: str
    hasLineage: bool
    inSchema: bool
    links: Links


class CdapField(Body):
    """CDAP's ``Field`` (``includeCurrent=true``)."""

    name: str
    lineage: bool = Field(description="whether the field has lineage in the window (false: only in the schema)")


class CdapDatasetId(Body):
    namespace: str
    dataset: str
    entity: Literal["DATASET"]


class CdapDatasetFields(Body):
    """CDAP's ``DatasetField``: a dataset and some of its fields."""

    dataset: CdapDatasetId
    fields: list[str]


class FieldLineageSummary(Body):
    """CDAP's ``FieldLineageSummary``; a direction not asked for is absent."""

    incoming: list[CdapDatasetFields] | None = Field(None, description="the source fields, by dataset")
    outgoing: list[CdapDatasetFields] | None = Field(None, description="the destination fields, by dataset")


class ProgramFieldOperationInfo(Body):
    """CDAP's ``ProgramFieldOperationInfo``: one distinct set of operations and its programs."""

    programs: list[ProgramInfo]
    operations: list[dict[str, Any]] = Field(
        description="CDAP's FieldOperationInfo in topological order: name, description, type, inputs "
                    "({endPoint} for a read, else {fields: [{origin, name}]}), outputs ({endPoint} for a "
                    "write, else {fields})")
    warnings: list[RecordWarning] | None = None


class FieldLineageDetails(Body):
    """CDAP's ``FieldLineageDetails``; a direction not asked for is absent."""

    incoming: list[ProgramFieldOperationInfo] | None = None
    outgoing: list[ProgramFieldOperationInfo] | None = None


class FieldRelation(Body):
    source: str
    destination: str


class FieldLineageRelations(Body):
    entityId: CdapDatasetId
    fieldCount: int = Field(description="the other dataset's fields with lineage in the window")
    relations: list[FieldRelation]


class DatasetFieldLineageSummary(Body):
    """CDAP's ``DatasetFieldLineageSummary`` (``start-ts``/``end-ts`` in milliseconds, as CDAP)."""

    direction: Literal["INCOMING", "OUTGOING", "BOTH"]
    start_ts: int = Field(alias="start-ts")
    end_ts: int = Field(alias="end-ts")
    entityId: CdapDatasetId
    fields: list[str]
    incoming: list[FieldLineageRelations]
    outgoing: list[FieldLineageRelations]


class DatasetFields(Body):
    dataset: str
    startTimeInSeconds: int
    endTimeInSeconds: int
    fields: list[DatasetField]


class FieldRunsSide(Body):
    runCount: int
    firstSeenInSeconds: int
    lastSeenInSeconds: int


class TransformationChange(Body):
    """An input whose transformation changed from a gone path to the new one that replaced it."""

    field: str = Field(description="the input field's name in the operations")
    before: list[dict[str, Any]]
    after: list[dict[str, Any]]
    summary: str = Field(description="e.g. 'ssn: DIRECT/IDENTITY -> DIRECT/TRANSFORMATION masking'")
    masked: bool = Field(description="masked now, not before")
    unmasked: bool = Field(description="masked before, not now")


class PathDifferences(Body):
    operationsAdded: list[str]
    operationsRemoved: list[str]
    transformationsChanged: list[TransformationChange]


class FieldPathChange(Body):
    """A distinct path on either side: new (in the window only), gone (in the base only) or unchanged."""

    field: dict[str, str] | None = Field(None, description="outgoing: the reached field the path produces")
    fingerprint: str
    change: str
    operations: list[str]
    sources: list[dict[str, Any]]
    current: FieldRunsSide | None
    base: FieldRunsSide | None
    replacedBy: str | None = Field(None, description="a gone path: the new path of the same field that replaced it")
    differences: PathDifferences | None = None


class FieldDiffSummary(Body):
    sources: dict[str, int] | None = Field(None, description="incoming: source fields added, removed, unchanged")
    reached: dict[str, int] | None = Field(None, description="outgoing: reached fields added, removed, unchanged")
    paths: dict[str, int] = Field(description="paths new, gone, unchanged")
    masked: int = Field(description="inputs masked now that were not before")


class FieldLineageDiffAnswer(Body):
    fieldName: str
    direction: str
    start: int
    end: int
    baseStart: int
    baseEnd: int
    summary: FieldDiffSummary
    sources: list[dict[str, Any]] | None = Field(None, description="incoming: each source field with its change")
    reached: list[dict[str, Any]] | None = Field(None, description="outgoing: each reached field (namespace, "
                                                                     "dataset, field, level) with its change")
    paths: list[FieldPathChange]

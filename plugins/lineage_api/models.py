"""The API's request and response bodies, so ``/lineage/openapi.json`` describes what routes
take and answer. Routes still return what the core and the stores build; these models check
and document it at the boundary.

Request bodies validate with the core's own checks (``lineage.model.metadata_values``,
``lineage.model.namespaces``), so a bad body is a 400 naming the rule it breaks. Parts whose shape
the core owns and documents (a field path's operations, a view's drawing) are typed as JSON
objects here.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    WithJsonSchema,
    model_validator,
)
from typing_extensions import TypedDict

from lineage.errors import InvalidRequestError
from lineage.model.metadata_values import check_properties, check_tags
from lineage.model.namespaces import check_description
from warehouse.service.ingest_keys import check_name


class Body(BaseModel):
    model_config = ConfigDict(populate_by_name=True)


# --- errors ---------------------------------------------------------------------------------

class ErrorBody(Body):
    """Every error answer: what went wrong (naming the bad value) and the HTTP status."""

    message: str
    status: int


class SchemaConflictBody(ErrorBody):
    """A 409 of a schema update: each incompatibility with the current schema."""

    incompatibilities: list[str] | None = None


# --- links: where a page goes next ----------------------------------------------------------

class Links(TypedDict, total=False):
    """Paths relative to the API's prefix (``/lineage/``): API resources of an entity and the
    pages that show it. Only those that apply are present."""

    metadata: Annotated[str, Field(description="the entity's metadata, both scopes")]
    tags: Annotated[str, Field(description="its tags (POST adds; DELETE with /{tag} appended removes one)")]
    properties: Annotated[str, Field(description="its properties (POST adds; DELETE with /{key} appended removes one)")]
    history: Annotated[str, Field(description="its metadata changes")]
    page: Annotated[str, Field(description="the page of the entity (or of a run)")]
    lineage: Annotated[str, Field(description="a dataset's or stream's lineage; a field's provenance or impact")]
    lineagePage: Annotated[str, Field(description="the dataset lineage page centred on it")]
    fields: Annotated[str, Field(description="a dataset's fields")]
    provenancePage: Annotated[str, Field(description="the field provenance page of a field")]
    runs: Annotated[str, Field(description="a program's runs")]
    accesses: Annotated[str, Field(description="what a run read and wrote")]
    run: Annotated[str, Field(description="a run: its status, parent, root, children, facets and warnings")]
    search: Annotated[str, Field(description="a namespace's metadata search")]
    suggest: Annotated[str, Field(description="a namespace's search suggestions")]


# --- entities and metadata ------------------------------------------------------------------

class EntityPart(Body):
    key: str
    value: str


class EntityRef(Body):
    """A metadata entity: its type and its ordered key=value parts."""

    type: str
    details: list[EntityPart]


class ScopeMetadata(Body):
    tags: list[str]
    properties: dict[str, str]


Scope = Literal["USER", "SYSTEM"]


class EntityMetadata(Body):
    entity: EntityRef
    metadata: dict[Scope, ScopeMetadata]
    links: Links


class ChangeAnswer(Body):
    """A USER change: its change id (null when nothing changed) and whether the
    ``lineage_metadata_changes`` asset event was emitted through Airflow's REST API."""

    changeId: int | None
    assetEvent: bool


class ChangeRecord(Body):
    changeId: int
    scope: Scope
    previous: ScopeMetadata
    updated: ScopeMetadata
    additions: ScopeMetadata
    deletions: ScopeMetadata
    time: int
    updater: str


class MetadataHistory(Body):
    entity: EntityRef
    changes: list[ChangeRecord]


Tags = Annotated[list[str], BeforeValidator(check_tags)]
Properties = Annotated[dict[str, str], BeforeValidator(check_properties)]


# --- search ---------------------------------------------------------------------------------

class SearchMatch(Body):
    scope: Scope
    kind: str
    key: str | None
    value: str


class SearchScore(Body):
    matchedTerms: int
    exactMatches: int


class SearchResult(Body):
    entity: EntityRef
    matches: list[SearchMatch]
    score: SearchScore
    links: Links


class SearchAnswer(Body):
    query: str
    terms: list[str]
    total: int
    limit: int
    offset: int
    results: list[SearchResult]


class Suggestion(Body):
    type: Literal["key", "value"]
    key: str | None
    text: str


class SuggestAnswer(Body):
    prefix: str
    suggestions: list[Suggestion]


# --- dataset lineage (the Metadata and Data Discovery design) ------------------------------

class LineageRelation(Body):
    data: str
    program: str
    access: str
    runs: list[str]
    components: list[str]


class ProgramId(Body):
    namespace: str
    application: str
    type: str
    id: str


class ProgramNode(Body):
    id: ProgramId


class DataId(Body):
    namespace: str
    type: str
    id: str


class DataNode(Body):
    id: DataId


class LineageAnswer(Body):
    """The lineage JSON of the *Metadata and Data Discovery* design; ``links`` maps each node id
    the caller may read to its links."""

    start: int
    end: int
    relations: list[LineageRelation]
    programs: dict[str, ProgramNode]
    data: dict[str, DataNode]
    links: dict[str, Links]


class RunAccess(Body):
    namespace: str
    type: str
    name: str
    access: str
    component: str | None
    accessed_at: int | None
    links: Links


class RunAccesses(Body):
    run_id: str
    status: str
    started_at: int | None
    stopped_at: int | None
    accesses: list[RunAccess]


class RunLink(Body):
    """A run linked to another (its parent, root or child), named as the warehouse names runs;
    a run whose program the caller may not read is shown as type ``hidden`` with empty names."""

    namespace: str
    application: str
    type: str
    program: str
    run_id: str
    recorded: bool = Field(description="whether the warehouse holds the run itself (a parent may send no events)")
    links: Links


class ChildRun(RunLink):
    status: str | None
    started_at: int | None


class RunFacets(Body):
    run: dict[str, dict[str, Any]] = Field(description="run facets by name, as the latest event carried them")
    job: dict[str, dict[str, Any]] = Field(description="job facets by name, as the latest event carried them")


class RunAnswer(Body):
    """A run: its status and times, its place in a run hierarchy (OpenLineage's ``parent``
    facet), the facets its events carried, and warnings about them."""

    run_id: str
    recorded: bool = Field(description="false for a run known only as the parent or root of others")
    status: str | None
    started_at: int | None
    stopped_at: int | None
    parent: RunLink | None
    root: RunLink | None
    children: list[ChildRun] = Field(description="runs naming this one as their parent, oldest first "
                                                 "(at most 1,000)")
    childCount: int
    facets: RunFacets
    warnings: list[str] = Field(description="what its events were accepted with but should not have had, "
                                            "e.g. 'eventTime without offset, read as UTC'")
    links: Links


class ProgramRun(Body):
    run_id: str
    status: str
    started_at: int | None
    stopped_at: int | None
    parent: RunLink | None
    links: Links


class ProgramRuns(Body):
    start: int
    end: int
    runs: list[ProgramRun]


# --- field lineage (the Field Level Lineage design) ----------------------------------------

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


# --- dataset schemas (the Datasets 3.5.0 design) -------------------------------------------

class SchemaFieldBody(Body):
    name: str
    type: str
    nullable: bool = True


class SchemaBody(Body):
    fields: list[SchemaFieldBody]


_SCHEMA_JSON_SCHEMA: dict[str, Any] = {"anyOf": [
    {"type": "object", "required": ["fields"], "properties": {"fields": {"type": "array", "items": {
        "type": "object", "required": ["name", "type"],
        "properties": {"name": {"type": "string"}, "type": {"type": "string"},
                       "nullable": {"type": "boolean", "default": True}}}}}},
    {"type": "string", "description": "the same schema as a JSON string"}]}
SCHEMA_BODY_RULE = ('the body is {"schema": {"fields": [{"name": ..., "type": ..., "nullable": ...}]}}; '
                    "other dataset properties are metadata (POST .../metadata/properties)")


class SchemaUpdate(Body):
    """``{"schema": {"fields": [...]}}``; the schema may be a JSON string, as CDAP's dataset
    properties carry it. Its rules are checked by ``lineage.model.dataset_schema``."""

    model_config = ConfigDict(extra="forbid")

    schema_: Annotated[dict[str, Any] | str, WithJsonSchema(_SCHEMA_JSON_SCHEMA)] = Field(alias="schema")

    @model_validator(mode="before")
    @classmethod
    def _one_key(cls, data: Any) -> Any:
        if not isinstance(data, dict) or set(data) != {"schema"}:
            raise InvalidRequestError(SCHEMA_BODY_RULE)
        return data


class SchemaStored(Body):
    version: int | None
    changeId: int | None
    assetEvent: bool


class DatasetProperties(Body):
    schema_: SchemaBody | None = Field(alias="schema")
    version: int | None


class SchemaVersion(Body):
    version: int
    schema_: SchemaBody = Field(alias="schema")
    time: int
    updater: str


class SchemaVersions(Body):
    dataset: str
    versions: list[SchemaVersion]


# --- namespaces (the System Applications (CDAP 6.0) design) ---------------------------------

class NamespaceUpdate(Body):
    """The optional body of ``PUT /v3/namespaces/{ns}``."""

    model_config = ConfigDict(extra="forbid")

    description: Annotated[str | None, BeforeValidator(check_description)] = None

    @model_validator(mode="before")
    @classmethod
    def _an_object(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            raise InvalidRequestError('the body is optional: {"description": "..."}')
        return data


class NamespaceInfo(Body):
    name: str
    description: str
    createdAt: int


class NamespaceCreated(NamespaceInfo):
    created: bool


class NamespaceDeleted(Body):
    namespace: str
    deletionId: int
    deletedAt: int
    assetEvent: bool = Field(description="whether the deletion's asset event (which schedules the cleanup) was emitted")


class NamespaceDeletion(Body):
    deletionId: int
    namespace: str
    deletedAt: int
    deletedBy: str
    cleanedAt: int | None
    removed: dict[str, int] | None = Field(description="rows removed per table, once cleaned")


# --- grants (the Metadata Custom Entities and Authorization design) -------------------------

class GrantRequest(Body):
    """Give ``principal`` exactly ``privilege`` on ``entity``: ``instance``, an entity path such as
    ``namespaces/sales/datasets/orders`` (a name holding ``/`` raw or ``%2F``:
    ``namespaces/sales/datasets/s3://lake/orders``), or a key as grants are listed
    (``namespace=sales,dataset=s3://lake/orders``)."""

    model_config = ConfigDict(extra="forbid")

    principal: str
    entity: str
    privilege: str = Field(description="READ, WRITE or ADMIN")

    @model_validator(mode="before")
    @classmethod
    def _three_keys(cls, data: Any) -> Any:
        if not isinstance(data, dict) or set(data) != {"principal", "entity", "privilege"}:
            raise InvalidRequestError(
                'the body is {"principal": "...", "entity": "namespaces/...", "privilege": "READ"}')
        return data


class Grant(Body):
    principal: str
    entity: str
    privilege: str
    grantedBy: str
    grantedAt: int


class GrantGiven(Body):
    principal: str
    entity: str
    privilege: str


class GrantRevoked(Body):
    principal: str
    entity: str
    revoked: bool


class MyGrants(Body):
    principal: str
    instanceAdmin: bool
    grants: dict[str, str]


# --- status ---------------------------------------------------------------------------------

class Health(Body):
    status: Literal["ok"]
    warehouse: Literal["ok", "unreachable"]


class Compaction(Body):
    batch_id: str
    dag_run_id: str | None
    interval_end: datetime | None
    started_at: datetime
    finished_at: datetime
    files: int
    events_read: int
    events_compacted: int
    duplicates: int
    quarantined: int
    runs_touched: int
    accesses_added: int


class Compactions(Body):
    compactions: list[Compaction]


class Summary(Body):
    namespaces: int
    runs: int
    dataset_accesses: int
    quarantined_lines: int
    compacted_files: int


# --- OpenLineage in ---------------------------------------------------------------------------

class RefusedEvent(Body):
    index: int = Field(description="the event's position in the request (0 for a single event)")
    reason: str


class LineageAccepted(Body):
    """What the OpenLineage endpoint did with a request: the events appended to the raw log,
    durable on disk when this answers, and the ones refused (a 400 or 403 answer lists them;
    the accepted ones of the same request landed all the same)."""

    accepted: int
    refused: list[RefusedEvent] = Field(default_factory=list)


class IngestKeyRequest(Body):
    """A key for ``principal`` (whose grants decide what it may write), named for what it is for."""

    model_config = ConfigDict(extra="forbid")

    name: Annotated[str, BeforeValidator(lambda value: check_name(value) if isinstance(value, str) else value)]
    principal: str


class IngestKey(Body):
    id: int
    name: str
    principal: str
    key: str = Field(description="the key's first characters, to tell keys apart")
    createdBy: str
    createdAt: int
    lastUsedAt: int | None = None
    revokedAt: int | None = None
    revokedBy: str | None = None


class IngestKeyCreated(IngestKey):
    secret: str = Field(description="the whole key, shown this once: send it as 'Authorization: Bearer <key>'")

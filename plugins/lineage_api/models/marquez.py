"""Marquez's read API: its answer shapes (Marquez 0.50's JSON), every name an OpenLineage identity."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from lineage_api.models.base import Body


class MarquezNamespace(Body):
    name: str = Field(description="an OpenLineage namespace (a data source, a job namespace, or lineage://<ns>)")
    createdAt: str
    updatedAt: str
    ownerName: str
    description: str | None
    isHidden: bool


class MarquezNamespaces(Body):
    namespaces: list[MarquezNamespace]


class DatasetIdBody(Body):
    namespace: str
    name: str


class MarquezField(Body):
    name: str
    type: str | None
    tags: list[str]
    description: str | None


class InputField(Body):
    namespace: str
    dataset: str
    field: str
    transformationDescription: str | None = Field(description="the operations on the way (e.g. sha2)")
    transformationType: str | None = Field(description="the kinds, e.g. DIRECT/TRANSFORMATION (masking)")


class ColumnLineage(Body):
    name: str
    inputFields: list[InputField]
    transformationDescription: str | None
    transformationType: str | None


class MarquezDataset(Body):
    id: DatasetIdBody
    type: Literal["DB_TABLE", "STREAM"]
    name: str
    physicalName: str
    createdAt: str
    updatedAt: str
    namespace: str
    sourceName: str
    fields: list[MarquezField]
    tags: list[str]
    lastModifiedAt: str | None = Field(description="the latest write")
    lastLifecycleState: str | None
    description: str | None
    currentVersion: str | None = Field(description="the current schema version, as a UUID")
    columnLineage: list[ColumnLineage] | None
    facets: dict[str, Any]
    deleted: bool


class MarquezDatasets(Body):
    datasets: list[MarquezDataset]
    totalCount: int


class MarquezDatasetVersion(Body):
    id: DatasetIdBody
    type: Literal["DB_TABLE", "STREAM"]
    name: str
    physicalName: str
    createdAt: str
    version: str
    namespace: str
    sourceName: str
    fields: list[MarquezField]
    tags: list[str]
    lifecycleState: str | None
    description: str | None
    currentSchemaVersion: str | None
    createdByRun: dict[str, Any] | None
    facets: dict[str, Any]


class MarquezDatasetVersions(Body):
    versions: list[MarquezDatasetVersion]
    totalCount: int


class DatasetVersionIdBody(Body):
    namespace: str
    name: str
    version: str | None


class DatasetVersionRef(Body):
    datasetVersionId: DatasetVersionIdBody
    facets: dict[str, Any]


class MarquezRun(Body):
    id: str
    createdAt: str | None
    updatedAt: str | None
    nominalStartTime: str | None
    nominalEndTime: str | None
    state: Literal["RUNNING", "COMPLETED", "FAILED", "ABORTED"]
    startedAt: str | None
    endedAt: str | None
    durationMs: int | None
    args: dict[str, str]
    jobVersion: dict[str, Any] | None
    inputDatasetVersions: list[DatasetVersionRef]
    outputDatasetVersions: list[DatasetVersionRef]
    facets: dict[str, Any]


class MarquezRuns(Body):
    runs: list[MarquezRun]
    totalCount: int


class MarquezJob(Body):
    id: DatasetIdBody
    type: Literal["BATCH", "STREAM"]
    name: str
    simpleName: str
    parentJobName: str | None
    parentJobUuid: str | None = Field(description="the latest run's parent run id")
    createdAt: str
    updatedAt: str
    namespace: str
    inputs: list[DatasetIdBody]
    outputs: list[DatasetIdBody]
    location: str | None
    description: str | None
    latestRun: MarquezRun | None
    latestRuns: list[MarquezRun]
    facets: dict[str, Any]
    currentVersion: str | None
    labels: list[str]
    tags: list[str]


class MarquezJobs(Body):
    jobs: list[MarquezJob]
    totalCount: int


class Edge(Body):
    origin: str
    destination: str


class GraphNode(Body):
    id: str
    type: Literal["DATASET", "JOB", "DATASET_FIELD"]
    data: dict[str, Any] | None
    inEdges: list[Edge]
    outEdges: list[Edge]


class MarquezGraph(Body):
    graph: list[GraphNode]
    withheld: int = Field(0, description="nodes left out: the caller may not read them (not in Marquez's answer)")


class MarquezTag(Body):
    name: str
    description: str | None


class MarquezTags(Body):
    tags: list[MarquezTag]


class SearchHit(Body):
    type: Literal["DATASET", "JOB"]
    name: str
    updatedAt: str | None
    namespace: str
    nodeId: str


class MarquezSearch(Body):
    totalCount: int
    results: list[SearchHit]

"""Dataset lineage (the Metadata and Data Discovery design), runs and their accesses."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from lineage_api.models.base import Body, Links
from lineage_api.models.dataset_schemas import SchemaChanges


class RunCounts(Body):
    """A relation's runs in the window counted (all null where the runs are hidden)."""

    runCount: int | None = Field(description="how many runs made the access in the window")
    firstRun: int | None = Field(description="the first run's time (its start, or else its earliest event)")
    lastRun: int | None = Field(description="the last run's time")
    latestRun: str | None = Field(description="the newest run's id")


class LineageRelation(RunCounts):
    data: str
    program: str
    access: str
    runs: list[str] = Field(description="runs=ids: every run id; runs=latest: the newest; runs=count: none")
    components: list[str]
    declared: bool = Field(description="the program declares this access without a run (declared lineage: an "
                                       "OpenLineage JobEvent); runCount 0 when it is only declared")


class ProgramId(Body):
    namespace: str
    application: str
    type: str
    id: str


class ProgramNode(Body):
    id: ProgramId
    jobType: str | None = Field(description="an OpenLineage job's type from its jobType facet (airflow_dag, "
                                            "airflow_task, spark_application, spark_sql_job, dbt_model, dbt_job, "
                                            "flink_job, ...); null for other programs and jobs without the facet")


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
    truncated: bool = Field(description="true when programs lie beyond `levels`: the walk was cut there")


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


class ChangeCounts(Body):
    added: int
    removed: int
    unchanged: int


class DiffSummary(Body):
    relations: ChangeCounts
    programs: ChangeCounts
    data: ChangeCounts
    schemas: int = Field(description="datasets of either graph whose schema changed between the windows' ends")


class SchemaChange(SchemaChanges):
    """A dataset's schema in force at the end of the base window against at the end of the window."""

    baseVersion: int | None = Field(description="null: no schema yet then")
    currentVersion: int | None


class RelationChange(Body):
    """A relation of either window: ``added`` (in the window only), ``removed`` (in the base
    only) or ``unchanged``, with its runs counted on each side (null: not on that side)."""

    data: str
    program: str
    access: str
    change: str
    current: RunCounts | None
    base: RunCounts | None


class ProgramChange(ProgramNode):
    change: str


class DataChange(DataNode):
    change: str


class DiffTruncated(Body):
    """Whether `levels` cut the walk of each window (programs lay beyond)."""

    current: bool
    base: bool


class LineageDiffAnswer(Body):
    """Two windows' lineage of a dataset compared: the window [start, end) against the base
    [baseStart, baseEnd)."""

    start: int
    end: int
    baseStart: int
    baseEnd: int
    levels: int
    summary: DiffSummary
    relations: list[RelationChange]
    programs: dict[str, ProgramChange]
    data: dict[str, DataChange]
    schemas: dict[str, SchemaChange] = Field(description="by data id, the schema changes of the data shown")
    truncated: DiffTruncated
    links: dict[str, Links]

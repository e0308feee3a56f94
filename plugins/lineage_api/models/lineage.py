"""Dataset lineage (the Metadata and Data Discovery design), runs and their accesses."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from lineage_api.models.base import Body, Links


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

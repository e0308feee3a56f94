"""Run-level lineage: runs upstream or downstream of a run, through the datasets between them."""

from __future__ import annotations

from pydantic import Field

from lineage_api.models.base import Body, Links


class LineageRun(Body):
    """A run of the answer; a run of a program the caller may not read is ``hidden.N``, unnamed."""

    id: str = Field(description="namespace.application.type.program.run, escaped as every id (or hidden.N)")
    level: int = Field(description="steps from the run asked about (0: that run)")
    namespace: str
    application: str
    type: str
    program: str
    run_id: str
    status: str | None
    started_at: int | None
    stopped_at: int | None
    links: Links


class LineageDataset(Body):
    id: str
    namespace: str
    type: str
    name: str


class RunEdge(Body):
    """``writer`` wrote the version of ``dataset`` that ``reader`` read (run ids of the answer)."""

    writer: str
    dataset: LineageDataset
    reader: str


class RunEnd(Body):
    """Where the walk found no run: a dataset read that no run wrote before (upstream), or written
    and read by no run before the next write (downstream)."""

    run: str
    dataset: LineageDataset
    reason: str


class RunLineageAnswer(Body):
    direction: str
    run: LineageRun
    runs: list[LineageRun] = Field(description="the runs reached, by level, then time")
    edges: list[RunEdge]
    ends: list[RunEnd]
    truncated: bool = Field(description="true when levels or LINEAGE_LIMIT_RUN_LINEAGE_RUNS stopped the walk "
                                        "while it could have gone on")
    truncatedBy: str | None = Field(description="levels or runs")

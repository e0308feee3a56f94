"""The blast radius of a bad dataset: incidents and what they reached."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field

from lineage_api.models.base import Body


class IncidentRequest(Body):
    """The dataset's writes in [from, until) were bad (times: epoch seconds, now or now-<n><s|m|h|d>)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    from_: str = Field(alias="from")
    until: str = "now"
    reason: str = Field(min_length=1, max_length=4096)


class IncidentBody(Body):
    id: int
    namespace: str
    type: str
    dataset: str
    from_: int = Field(alias="from")
    until: int
    reason: str
    source: str
    createdBy: str
    createdAt: int


class BlastRadius(Body):
    """The runs downstream of the bad writes, level by level, the datasets they wrote, and which
    of those were rewritten since by a run outside the blast."""

    dataset: dict[str, str]
    incidents: list[IncidentBody]
    badWrites: list[dict[str, Any]]
    levels: list[dict[str, Any]] = Field(description="each level: the runs that read what the level before wrote, "
                                                     "and the datasets they wrote, each with its fields that hold "
                                                     "what came from the bad writes (null: no field lineage recorded)")
    recovered: list[dict[str, Any]] = Field(description="affected datasets rewritten since by a run outside the blast")
    stillAffected: list[dict[str, str]]
    truncated: bool
    hidden: int = Field(description="runs and datasets you may not read, left out")

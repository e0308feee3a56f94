"""The blast radius of a bad dataset: incidents and what they reached."""

from __future__ import annotations

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


class BlastRun(Body):
    """A run of the blast (or one that rewrote an affected dataset since)."""

    id: str
    namespace: str
    application: str
    type: str
    program: str
    run_id: str
    status: str
    started_at: int | None
    stopped_at: int | None


class BlastDataRef(Body):
    namespace: str
    type: str
    name: str


class AffectedField(Body):
    name: str
    kinds: list[str] = Field(description="how it came from the bad writes: DIRECT (a value), INDIRECT (a row choice)")


class AffectedDataset(BlastDataRef):
    fields: list[AffectedField] | None = Field(
        description="its fields that hold what came from the bad writes; null: its writers recorded no field lineage")


class BlastLevel(Body):
    level: int
    runs: list[BlastRun] = Field(description="the runs that read what the level before wrote")
    datasets: list[AffectedDataset] = Field(description="the datasets they wrote")


class RecoveredDataset(BlastDataRef):
    rewrittenAt: int | None
    by: BlastRun | None = Field(description="the run outside the blast that rewrote it (null: one you may not read)")


class BlastRadius(Body):
    """The runs downstream of the bad writes, level by level, the datasets they wrote, and which
    of those were rewritten since by a run outside the blast."""

    dataset: BlastDataRef
    incidents: list[IncidentBody]
    badWrites: list[BlastRun]
    levels: list[BlastLevel]
    recovered: list[RecoveredDataset] = Field(
        description="affected datasets rewritten since by a run outside the blast")
    stillAffected: list[BlastDataRef]
    truncated: bool
    hidden: int = Field(description="runs and datasets you may not read, left out")

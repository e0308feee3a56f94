"""Tags that follow the data: a field's assigned and propagated tags."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from lineage_api.models.base import Body


class FieldRefBody(Body):
    namespace: str
    dataset: str
    field: str


class AssignedTag(Body):
    tag: str
    scope: str


class PropagatedTag(Body):
    tag: str
    from_: FieldRefBody = Field(alias="from", description="the field the tag is assigned to")
    levels: int = Field(description="edges from there")
    path: list[dict[str, Any]] = Field(description="the edges, from the origin: from, to, transformation, "
                                                   "operations, program, runs")
    runs: list[str]
    firstSeen: int
    lastSeen: int


class StoppedTag(Body):
    tag: str
    from_: FieldRefBody = Field(alias="from", description="the field the tag is assigned to")
    at: dict[str, Any] = Field(description="the edge it did not cross")
    reason: str = Field(description='e.g. "masked by sha2 in spark Crm.Contacts"')


class FieldTags(Body):
    """A field's tags: assigned, propagated (with origin and path) and, with ``explain``, the stops."""

    field: FieldRefBody
    assigned: list[AssignedTag]
    propagated: list[PropagatedTag]
    policies: dict[str, str] = Field(description="tag -> its propagation policy")
    truncated: bool = Field(description="the walk upstream was cut (100 levels or 10,000 fields)")
    explained: str | None = None
    explainedWith: str | None = Field(None, description="when the explained tag has no policy: how it was explained")
    stopped: list[StoppedTag] | None = None


class TagMap(Body):
    """Where a tag goes: the fields carrying it grouped by dataset, the edges it crossed, its stops."""

    tag: str
    policy: str
    truncated: bool = Field(description="its policy's levels stopped it where it would have gone on")
    datasets: list[dict[str, Any]] = Field(description="namespace, type, dataset and its fields: field, assigned, "
                                                       "reached (from, levels, operations)")
    edges: list[dict[str, Any]] = Field(description="the edges it crossed: from, to, transformation, operations, "
                                                    "program, runs")
    stops: list[dict[str, Any]] = Field(description="where it stopped: from (its origin), at (the edge), reason")
    hidden: int = Field(description="fields carrying it in datasets you may not read, left out")

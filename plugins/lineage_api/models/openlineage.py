"""OpenLineage in: what the endpoint answers, and ingest keys."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, ConfigDict, Field

from lineage_api.models.base import Body
from warehouse.service.ingest_keys import check_name


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


class LineageEvents(Body):
    """A page of the window's lineage as OpenLineage run events (Marquez's answer shape)."""

    events: list[dict[str, Any]] = Field(description="OpenLineage run events (spec 2-0-2), in time order")
    totalCount: int = Field(description="the caller's events in the window")
    withheld: int = Field(description="events of the window touching a namespace the caller may not read")

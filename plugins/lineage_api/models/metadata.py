"""Entities, tags and properties, and their change history."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BeforeValidator

from lineage.model.metadata_values import check_properties, check_tags
from lineage_api.models.base import Body, Links


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

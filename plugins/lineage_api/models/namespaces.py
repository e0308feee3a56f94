"""Namespaces (the System Applications (CDAP 6.0) design)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, ConfigDict, Field, model_validator

from lineage.errors import InvalidRequestError
from lineage.model.namespaces import check_description
from lineage_api.models.base import Body


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

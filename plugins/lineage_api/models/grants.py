"""Grants (the Metadata Custom Entities and Authorization design)."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field, model_validator

from lineage.errors import InvalidRequestError
from lineage_api.models.base import Body


class GrantRequest(Body):
    """Give ``principal`` exactly ``privilege`` on ``entity``: ``instance``, an entity path such as
    ``namespaces/sales/datasets/orders`` (a name holding ``/`` raw or ``%2F``:
    ``namespaces/sales/datasets/s3://lake/orders``), or a key as grants are listed
    (``namespace=sales,dataset=s3://lake/orders``)."""

    model_config = ConfigDict(extra="forbid")

    principal: str
    entity: str
    privilege: str = Field(description="READ, WRITE or ADMIN")

    @model_validator(mode="before")
    @classmethod
    def _three_keys(cls, data: Any) -> Any:
        if not isinstance(data, dict) or set(data) != {"principal", "entity", "privilege"}:
            raise InvalidRequestError(
                'the body is {"principal": "...", "entity": "namespaces/...", "privilege": "READ"}')
        return data


class Grant(Body):
    principal: str
    entity: str
    privilege: str
    grantedBy: str
    grantedAt: int


class GrantGiven(Body):
    principal: str
    entity: str
    privilege: str


class GrantRevoked(Body):
    principal: str
    entity: str
    revoked: bool


class MyGrants(Body):
    principal: str
    instanceAdmin: bool
    grants: dict[str, str]

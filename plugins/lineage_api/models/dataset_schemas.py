"""Dataset schemas and their versions (the Datasets 3.5.0 design)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, WithJsonSchema, model_validator

from lineage.errors import InvalidRequestError
from lineage_api.models.base import Body


class SchemaFieldBody(Body):
    name: str
    type: str
    nullable: bool = True


class SchemaBody(Body):
    fields: list[SchemaFieldBody]


_SCHEMA_JSON_SCHEMA: dict[str, Any] = {"anyOf": [
    {"type": "object", "required": ["fields"], "properties": {"fields": {"type": "array", "items": {
        "type": "object", "required": ["name", "type"],
        "properties": {"name": {"type": "string"}, "type": {"type": "string"},
                       "nullable": {"type": "boolean", "default": True}}}}}},
    {"type": "string", "description": "the same schema as a JSON string"}]}
SCHEMA_BODY_RULE = ('the body is {"schema": {"fields": [{"name": ..., "type": ..., "nullable": ...}]}}; '
                    "other dataset properties are metadata (POST .../metadata/properties)")


class SchemaUpdate(Body):
    """``{"schema": {"fields": [...]}}``; the schema may be a JSON string, as CDAP's dataset
    properties carry it. Its rules are checked by ``lineage.model.dataset_schema``."""

    model_config = ConfigDict(extra="forbid")

    schema_: Annotated[dict[str, Any] | str, WithJsonSchema(_SCHEMA_JSON_SCHEMA)] = Field(alias="schema")

    @model_validator(mode="before")
    @classmethod
    def _one_key(cls, data: Any) -> Any:
        if not isinstance(data, dict) or set(data) != {"schema"}:
            raise InvalidRequestError(SCHEMA_BODY_RULE)
        return data


class SchemaStored(Body):
    version: int | None
    changeId: int | None
    assetEvent: bool


class DatasetProperties(Body):
    schema_: SchemaBody | None = Field(alias="schema")
    version: int | None


class RetypedField(Body):
    name: str
    before: str
    after: str


class NullabilityChange(Body):
    name: str
    before: bool
    after: bool


class SchemaChanges(Body):
    """What a version changed from the one before it: fields added and removed, fields whose type
    changed (as written: ``integer`` -> ``int`` counts), fields made optional or required, and
    whether the fields kept were reordered."""

    added: list[SchemaFieldBody]
    removed: list[SchemaFieldBody]
    retyped: list[RetypedField]
    nullability: list[NullabilityChange]
    reordered: bool


class SchemaVersion(Body):
    """One kept version. ``source``: ``declared`` (a program's ``record_schema`` or ``PUT
    .../properties``, held to the compatibility rule) or ``observed`` (what a producer saw: an
    OpenLineage ``schema`` facet, kept whatever it changes). ``time``: when it was stored;
    ``eventTime``: when the schema was reported (the event's time; the request's for the API).
    ``changes``: from the version before (``null`` for the first)."""

    version: int
    schema_: SchemaBody = Field(alias="schema")
    time: int
    updater: str
    source: Literal["declared", "observed"]
    eventTime: int
    changes: SchemaChanges | None


class SchemaVersions(Body):
    dataset: str
    versions: list[SchemaVersion]

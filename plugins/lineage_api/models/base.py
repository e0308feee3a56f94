"""The base of every body, the error answers and the links a page follows next."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict


class Body(BaseModel):
    model_config = ConfigDict(populate_by_name=True)



class ErrorBody(Body):
    """Every error answer: what went wrong (naming the bad value) and the HTTP status."""

    message: str
    status: int


class SchemaConflictBody(ErrorBody):
    """A 409 of a schema update: each incompatibility with the current schema."""

    incompatibilities: list[str] | None = None



class Links(TypedDict, total=False):
    """Paths relative to the API's prefix (``/lineage/``): API resources of an entity and the
    pages that show it. Only those that apply are present."""

    metadata: Annotated[str, Field(description="the entity's metadata, both scopes")]
    tags: Annotated[str, Field(description="its tags (POST adds; DELETE with /{tag} appended removes one)")]
    properties: Annotated[str, Field(description="its properties (POST adds; DELETE with /{key} appended removes one)")]
    history: Annotated[str, Field(description="its metadata changes")]
    page: Annotated[str, Field(description="the page of the entity (or of a run)")]
    lineage: Annotated[str, Field(description="a dataset's or stream's lineage; a field's provenance or impact; a "
                                              "run's upstream or downstream runs")]
    lineageDiff: Annotated[str, Field(description="what changed in a dataset's, stream's or field's lineage "
                                                  "against a base window")]
    lineagePage: Annotated[str, Field(description="the dataset lineage page centred on it")]
    fields: Annotated[str, Field(description="a dataset's fields")]
    schemas: Annotated[str, Field(description="a dataset's schema versions, each with what it changed")]
    incidents: Annotated[str, Field(description="a dataset's incidents (its bad writes; POST records one)")]
    blastRadius: Annotated[str, Field(description="what a dataset's bad writes reached downstream")]
    provenancePage: Annotated[str, Field(description="the field provenance page of a field")]
    runs: Annotated[str, Field(description="a program's runs")]
    accesses: Annotated[str, Field(description="what a run read and wrote")]
    run: Annotated[str, Field(description="a run: its status, parent, root, children, facets and warnings")]
    search: Annotated[str, Field(description="a namespace's metadata search")]
    suggest: Annotated[str, Field(description="a namespace's search suggestions")]

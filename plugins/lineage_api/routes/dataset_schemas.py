"""Dataset properties and schema versions (seed 002 "Updatable Datasets").

``PUT .../datasets/{ds}/properties`` with ``{"schema": {"fields": [...]}}`` updates the
dataset's schema: an incompatible update answers 409 listing each incompatibility and changes
nothing; a compatible one stores a new version. The schema itself is the SYSTEM property
``schema`` (read it with the metadata API too); ``.../schemas`` lists the versions kept.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import orjson
import psycopg
from fastapi import APIRouter, Body, HTTPException

from lineage.authorization import Access, Privilege
from lineage.dataset_schema import SCHEMA_PROPERTY, parse_schema
from lineage.errors import InvalidSchemaError
from lineage.metadata_entity import MetadataEntity, from_path
from lineage_api.asset_events import emit_metadata_changes
from lineage_api.auth import Caller
from lineage_api.routes.lineage import namespace_connection
from warehouse import namespace_store, schema_store

router = APIRouter(prefix="/v3/namespaces/{namespace}/datasets/{dataset}")


def _dataset(namespace: str, dataset: str) -> MetadataEntity:
    return from_path(namespace, ["datasets", dataset])


@router.put("/properties")
def update_properties(namespace: str, dataset: str, caller: Caller,
                      body: Any = Body(...)) -> dict[str, Any]:  # noqa: B008
    """Set the dataset's schema: ``{"schema": {"fields": [{"name", "type", "nullable"}]}}`` (the
    schema may also be given as a JSON string, as CDAP's dataset properties carry it)."""
    if not isinstance(body, dict) or set(body) != {SCHEMA_PROPERTY}:
        raise HTTPException(400, 'the body is {"schema": {"fields": [{"name": ..., "type": ..., "nullable": ...}]}}; '
                                 "other dataset properties are metadata (POST .../metadata/properties)")
    described = body[SCHEMA_PROPERTY]
    if isinstance(described, str):
        try:
            described = orjson.loads(described)
        except orjson.JSONDecodeError as exc:
            raise InvalidSchemaError(f"the schema string is not JSON: {exc}") from exc
    proposed = parse_schema(described)
    subject = _dataset(namespace, dataset)
    with namespace_connection(namespace) as conn:
        caller.require(subject, Privilege.WRITE)
        stored = schema_store.set_schema(conn, subject, proposed, caller.principal)
    emitted = stored["changeId"] is not None and emit_metadata_changes([stored["changeId"]], caller.principal)
    return {**stored, "assetEvent": emitted}


@contextmanager
def _reading(namespace: str, dataset: str, caller: Access
             ) -> Iterator[tuple[psycopg.Connection, MetadataEntity, datetime | None]]:
    """(connection, dataset entity, race-guard time) once the caller may READ the dataset."""
    subject = _dataset(namespace, dataset)
    with namespace_connection(namespace) as conn:
        caller.require(subject, Privilege.READ)
        yield conn, subject, namespace_store.visible_since(conn, namespace)


@router.get("/properties")
def get_properties(namespace: str, dataset: str, caller: Caller) -> dict[str, Any]:
    """The dataset's schema and its version (``null`` when none was reported)."""
    with _reading(namespace, dataset, caller) as (conn, subject, since):
        found = schema_store.current(conn, subject, since)
        version = schema_store.latest_version(conn, subject, since)
    return {"schema": orjson.loads(found.to_json()) if found else None, "version": version}


@router.get("/schemas")
def schema_versions(namespace: str, dataset: str, caller: Caller) -> dict[str, Any]:
    """Every schema version kept for the dataset, newest first."""
    with _reading(namespace, dataset, caller) as (conn, subject, since):
        return {"dataset": dataset, "versions": schema_store.versions(conn, subject, since)}

"""Dataset properties and schema versions ("Updatable Datasets" of the *Datasets 3.5.0* design).

``PUT .../datasets/{ds}/properties`` with ``{"schema": {"fields": [...]}}`` updates the
dataset's schema: an incompatible update answers 409 listing each incompatibility and changes
nothing; a compatible one stores a new version. The schema itself is the SYSTEM property
``schema`` (read it with the metadata API too); ``.../schemas`` lists the versions kept. Both
reads answer 404 for a dataset the warehouse does not know (no schema, no lineage).
"""

from __future__ import annotations

from typing import Any

import orjson
import psycopg
from fastapi import APIRouter

from lineage.errors import InvalidSchemaError, NotFoundError
from lineage.model.dataset_schema import parse_schema
from lineage.model.metadata_entity import dataset_entity
from lineage_api.asset_events import emit_metadata_changes
from lineage_api.deps import Airflow, Caller, Connection, Incarnation, Namespace
from lineage_api.http_errors import answers
from lineage_api.models.dataset_schemas import (
    DatasetProperties,
    SchemaBody,
    SchemaChanges,
    SchemaStored,
    SchemaUpdate,
    SchemaVersion,
    SchemaVersions,
)
from warehouse.db import field_lineage_store, namespace_store, schema_store
from warehouse.service.authorization import Privilege
from warehouse.service.timespec import epoch_seconds

router = APIRouter(prefix="/v3/namespaces/{namespace}/datasets/{dataset:name}", responses=answers(404))


@router.put("/properties", response_model=SchemaStored, responses=answers(409))
def update_properties(body: SchemaUpdate, namespace: Namespace, born: Incarnation, dataset: str, caller: Caller,
                      conn: Connection, airflow: Airflow) -> SchemaStored:
    """Set the dataset's schema: ``{"schema": {"fields": [{"name", "type", "nullable"}]}}`` (the
    schema may also be given as a JSON string, as CDAP's dataset properties carry it)."""
    described = body.schema_
    if isinstance(described, str):
        try:
            described = orjson.loads(described)
        except orjson.JSONDecodeError as exc:
            raise InvalidSchemaError(f"the schema string is not JSON: {exc}") from exc
    proposed = parse_schema(described)
    subject = dataset_entity(namespace, "dataset", dataset)
    caller.require(subject, Privilege.WRITE)
    stored = schema_store.set_schema(conn, subject, proposed, caller.principal, born)
    emitted = stored.change_id is not None and emit_metadata_changes(airflow, [stored.change_id], caller.principal)
    return SchemaStored(version=stored.version, changeId=stored.change_id, assetEvent=emitted)


@router.get("/properties", response_model=DatasetProperties)
def get_properties(namespace: Namespace, dataset: str, caller: Caller, conn: Connection) -> dict[str, Any]:
    """The dataset's schema and its version (``null`` for a dataset known by its lineage that no
    schema was reported for); 404 for a dataset the warehouse does not know."""
    subject = dataset_entity(namespace, "dataset", dataset)
    caller.require(subject, Privilege.READ)
    since = namespace_store.visible_since(conn, namespace)
    found = schema_store.current(conn, subject, since)
    if found is None:
        _require_known(conn, namespace, dataset)
    return {"schema": orjson.loads(found.to_json()) if found else None,
            "version": schema_store.latest_version(conn, subject, since)}


@router.get("/schemas", response_model=SchemaVersions)
def schema_versions(namespace: Namespace, dataset: str, caller: Caller, conn: Connection) -> SchemaVersions:
    """Every schema version kept for the dataset, newest first (none for a dataset known by its
    lineage alone); 404 for a dataset the warehouse does not know."""
    subject = dataset_entity(namespace, "dataset", dataset)
    caller.require(subject, Privilege.READ)
    kept = schema_store.versions(conn, subject, namespace_store.visible_since(conn, namespace))
    if not kept:
        _require_known(conn, namespace, dataset)
    return SchemaVersions(dataset=dataset, versions=[
        SchemaVersion(version=row.version, schema=SchemaBody.model_validate(row.schema),
                      time=epoch_seconds(row.created_at), updater=caller.shown_updater(row.created_by),
                      source=row.source,
                      eventTime=epoch_seconds(row.event_time),
                      changes=SchemaChanges.model_validate(row.changes) if row.changes is not None else None)
        for row in kept])


def _require_known(conn: psycopg.Connection, namespace: str, dataset: str) -> None:
    """404 unless the warehouse knows the dataset (it has a schema, or lineage recorded it), as
    every dataset route answers; asked only once the caller may READ it, so an unreadable dataset
    answers 403 whether it exists or not."""
    if not field_lineage_store.dataset_exists(conn, namespace, dataset):
        raise NotFoundError(f"dataset {dataset!r} not found in namespace {namespace!r}")

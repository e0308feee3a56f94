"""Metadata (the *Metadata Custom Entities and Authorization* and *Metadata and Data Discovery*
designs): tags and properties of any entity, per scope, and their history.

Entity paths are CDAP's v3 paths under a namespace (``datasets/{ds}``, ``streams/{s}``,
``apps/{app}`` with ``?version=``, ``apps/{app}/{type}/{program}``), optionally followed by
custom ``/{type}/{name}`` pairs (``datasets/{ds}/field/{f}``); external resources outside any
namespace use ``/v3/external/{type}/{name}/...`` (``database/myDatabase/table/myTable``).
API writes are USER metadata; SYSTEM metadata comes from programs and the system.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any

import psycopg
from fastapi import APIRouter, Body, Depends

from lineage.errors import InvalidEntityError
from lineage.model.metadata_entity import MetadataEntity, entity, from_path
from lineage.model.metadata_values import check_scope
from lineage_api.asset_events import AirflowApi, emit_metadata_changes
from lineage_api.deps import Airflow, Caller, Connection, HistoryWindow, Incarnation, Namespace
from lineage_api.http_errors import answers
from lineage_api.links import entity_links
from lineage_api.models.metadata import (
    ChangeAnswer,
    ChangeRecord,
    EntityMetadata,
    MetadataHistory,
    Properties,
    ScopeMetadata,
    Tags,
)
from lineage_api.path_names import segment
from warehouse.db import metadata_store, namespace_store
from warehouse.db.metadata_store import UPDATED_BY
from warehouse.service.authorization import Access, Privilege
from warehouse.service.timespec import epoch_seconds, visible_window

router = APIRouter(responses=answers(404))


@dataclass(frozen=True)
class Subject:
    """The entity a metadata path names, and its namespace (None: an external resource)."""

    entity: MetadataEntity
    namespace: str | None
    born: datetime | None = None  # the namespace's incarnation the request found


def namespaced(namespace: Namespace, born: Incarnation, target: str, version: str | None = None) -> Subject:
    return Subject(from_path(namespace, [segment(part) for part in target.split("/") if part], version), namespace,
                   born)


def external(target: str) -> Subject:
    segments = [segment(part) for part in target.split("/") if part]
    if len(segments) % 2:
        raise InvalidEntityError(f"an external entity is /type/name pairs; '{segments[-1]}' has no name")
    return Subject(entity(zip(segments[::2], segments[1::2], strict=True)), None)


def _change(subject: Subject, caller: Access, conn: psycopg.Connection, airflow: AirflowApi,
            **change: Any) -> ChangeAnswer:
    """Apply a USER change (WRITE needed); answer its change id (null when nothing changed) and
    whether the ``lineage_metadata_changes`` asset event was emitted."""
    caller.require(subject.entity, Privilege.WRITE)
    record = metadata_store.change(conn, subject.entity, "USER", caller.principal, born=subject.born, **change)
    if record is None:
        return ChangeAnswer(changeId=None, assetEvent=False)
    return ChangeAnswer(changeId=record.change_id,
                        assetEvent=emit_metadata_changes(airflow, [record.change_id], caller.principal))


def _change_record(row: metadata_store.ChangeRecordRow, caller: Access) -> ChangeRecord:
    """A change record as the history answers it; the updater hidden as ``Access.shown_updater`` says."""
    return ChangeRecord(changeId=row.change_id, scope=row.scope, previous=ScopeMetadata(**row.previous),
                        updated=ScopeMetadata(**row.updated), additions=ScopeMetadata(**row.additions),
                        deletions=ScopeMetadata(**row.deletions), time=epoch_seconds(row.changed_at),
                        updater=caller.shown_updater(row.updater))


def _read(subject: Subject, scope: str | None, caller: Access, conn: psycopg.Connection) -> dict[str, Any]:
    caller.require(subject.entity, Privilege.READ)
    since = namespace_store.visible_since(conn, subject.namespace) if subject.namespace else None
    found = metadata_store.read(conn, subject.entity, check_scope(scope), since)
    system = found["SYSTEM"]["properties"] if "SYSTEM" in found else {}
    if UPDATED_BY in system:  # the run that wrote the dataset, hidden as the lineage graph hides it
        system[UPDATED_BY] = caller.shown_updater(system[UPDATED_BY])
    return {"entity": subject.entity.to_dict(), "metadata": found, "links": entity_links(subject.entity)}


def _routes(prefix: str, kind: str, subject_of: Callable[..., Subject]) -> None:
    """The metadata routes under ``prefix``, naming their entity with ``subject_of``."""
    # The dependency differs per prefix, so it is a default (the module's annotations are
    # resolved in its globals); it comes first, as the path names the entity first.
    named: Subject = Depends(subject_of)

    def get_metadata(*, subject: Subject = named, caller: Caller, conn: Connection,
                     scope: str | None = None) -> dict[str, Any]:
        """Tags and properties of both scopes (or one, with ``?scope=``), and the entity's links."""
        return _read(subject, scope, caller, conn)

    def get_properties(*, subject: Subject = named, caller: Caller, conn: Connection,
                       scope: str | None = None) -> dict[str, dict[str, str]]:
        found = _read(subject, scope, caller, conn)["metadata"]
        return {name: value["properties"] for name, value in found.items()}

    def get_tags(*, subject: Subject = named, caller: Caller, conn: Connection,
                 scope: str | None = None) -> dict[str, list[str]]:
        found = _read(subject, scope, caller, conn)["metadata"]
        return {name: value["tags"] for name, value in found.items()}

    def add_properties(*, subject: Subject = named, caller: Caller, conn: Connection, airflow: Airflow,
                       properties: Annotated[Properties, Body()]) -> ChangeAnswer:
        """Add or replace USER properties: a JSON object of string values."""
        return _change(subject, caller, conn, airflow, add_properties=properties)

    def add_tags(*, subject: Subject = named, caller: Caller, conn: Connection, airflow: Airflow,
                 tags: Annotated[Tags, Body()]) -> ChangeAnswer:
        """Add USER tags: a JSON list of strings."""
        return _change(subject, caller, conn, airflow, add_tags=tags)

    def remove_property(*, subject: Subject = named, key: str, caller: Caller, conn: Connection,
                        airflow: Airflow) -> ChangeAnswer:
        return _change(subject, caller, conn, airflow, remove_properties=[key])

    def remove_tag(*, subject: Subject = named, tag: str, caller: Caller, conn: Connection,
                   airflow: Airflow) -> ChangeAnswer:
        return _change(subject, caller, conn, airflow, remove_tags=[tag])

    def remove_properties(*, subject: Subject = named, caller: Caller, conn: Connection,
                          airflow: Airflow) -> ChangeAnswer:
        return _change(subject, caller, conn, airflow, remove_properties=None)

    def remove_tags(*, subject: Subject = named, caller: Caller, conn: Connection,
                    airflow: Airflow) -> ChangeAnswer:
        return _change(subject, caller, conn, airflow, remove_tags=None)

    def remove_metadata(*, subject: Subject = named, caller: Caller, conn: Connection,
                        airflow: Airflow) -> ChangeAnswer:
        return _change(subject, caller, conn, airflow, remove_properties=None, remove_tags=None)

    def metadata_history(*, window: HistoryWindow, subject: Subject = named, caller: Caller,
                         conn: Connection) -> dict[str, Any]:
        """The entity's change records in [start, end): previous and updated state, the diff."""
        caller.require(subject.entity, Privilege.READ)
        if subject.namespace is not None:
            window = visible_window(window, namespace_store.visible_since(conn, subject.namespace))
        changes = [_change_record(row, caller) for row in metadata_store.history(conn, subject.entity, *window)]
        return {"entity": subject.entity.to_dict(), "changes": changes}

    for method, path, endpoint, model in (
            ("GET", "/metadata", get_metadata, EntityMetadata),
            ("GET", "/metadata/properties", get_properties, dict[str, dict[str, str]]),
            ("GET", "/metadata/tags", get_tags, dict[str, list[str]]),
            ("POST", "/metadata/properties", add_properties, ChangeAnswer),
            ("POST", "/metadata/tags", add_tags, ChangeAnswer),
            ("DELETE", "/metadata/properties/{key}", remove_property, ChangeAnswer),
            ("DELETE", "/metadata/tags/{tag}", remove_tag, ChangeAnswer),
            ("DELETE", "/metadata/properties", remove_properties, ChangeAnswer),
            ("DELETE", "/metadata/tags", remove_tags, ChangeAnswer),
            ("DELETE", "/metadata", remove_metadata, ChangeAnswer),
            ("GET", "/metadata/history", metadata_history, MetadataHistory)):
        router.add_api_route(prefix + path, endpoint, methods=[method], response_model=model,
                             name=f"{endpoint.__name__}_{kind}", operation_id=f"{endpoint.__name__}_{kind}")


_routes("/v3/namespaces/{namespace}/{target:path}", "namespaced", namespaced)
_routes("/v3/external/{target:path}", "external", external)

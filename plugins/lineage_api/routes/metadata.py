"""Metadata (seeds 000, 001): tags and properties of any entity, per scope, and their history.

Entity paths are CDAP's v3 paths under a namespace (``datasets/{ds}``, ``streams/{s}``,
``apps/{app}`` with ``?version=``, ``apps/{app}/{type}/{program}``), optionally followed by
custom ``/{type}/{name}`` pairs (``datasets/{ds}/field/{f}``); external resources outside any
namespace use ``/v3/external/{type}/{name}/...`` (``database/myDatabase/table/myTable``).
API writes are USER metadata; SYSTEM metadata comes from programs and the system.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Body, HTTPException

from lineage.authorization import Access, Privilege
from lineage.metadata_entity import MetadataEntity, entity, from_path
from lineage.metadata_values import check_properties, check_scope, check_tags
from lineage.timespec import parse_window, visible_window
from lineage_api.asset_events import emit_metadata_changes
from lineage_api.auth import Caller
from lineage_api.routes.lineage import End, Start, namespace_connection
from warehouse import metadata_store, namespace_store

router = APIRouter()
_PREFIXES = ("/v3/namespaces/{namespace}/{target:path}", "/v3/external/{target:path}")


def _entity(namespace: str | None, target: str, version: str | None) -> MetadataEntity:
    segments = [part for part in target.split("/") if part]
    if namespace is None:
        if len(segments) % 2:
            raise HTTPException(400, f"an external entity is /type/name pairs; '{segments[-1]}' has no name")
        return entity(zip(segments[::2], segments[1::2], strict=True))
    return from_path(namespace, segments, version)


def _change(namespace: str | None, target: str, version: str | None, caller: Access, **change: Any
            ) -> dict[str, Any]:
    """Apply a USER change (WRITE needed); answer its change id (null when nothing changed) and
    whether the ``lineage_metadata_changes`` asset event was emitted."""
    subject = _entity(namespace, target, version)
    with namespace_connection(namespace) as conn:
        caller.require(subject, Privilege.WRITE)
        record = metadata_store.change(conn, subject, "USER", caller.principal, **change)
    if record is None:
        return {"changeId": None, "assetEvent": False}
    return {"changeId": record["changeId"], "assetEvent": emit_metadata_changes([record["changeId"]], caller.principal)}


def _read(namespace: str | None, target: str, version: str | None, scope: str | None, caller: Access
          ) -> dict[str, Any]:
    subject = _entity(namespace, target, version)
    with namespace_connection(namespace) as conn:
        caller.require(subject, Privilege.READ)
        since = namespace_store.visible_since(conn, namespace) if namespace else None
        found = metadata_store.read(conn, subject, check_scope(scope), since)
    return {"entity": subject.to_dict(), "metadata": found}


for prefix in _PREFIXES:
    @router.get(prefix + "/metadata")
    def get_metadata(target: str, caller: Caller, namespace: str | None = None, version: str | None = None,
                     scope: str | None = None) -> dict[str, Any]:
        """Tags and properties of both scopes (or one, with ``?scope=``)."""
        return _read(namespace, target, version, scope, caller)

    @router.get(prefix + "/metadata/properties")
    def get_properties(target: str, caller: Caller, namespace: str | None = None, version: str | None = None,
                       scope: str | None = None) -> dict[str, Any]:
        found = _read(namespace, target, version, scope, caller)["metadata"]
        return {name: value["properties"] for name, value in found.items()}

    @router.get(prefix + "/metadata/tags")
    def get_tags(target: str, caller: Caller, namespace: str | None = None, version: str | None = None,
                 scope: str | None = None) -> dict[str, Any]:
        found = _read(namespace, target, version, scope, caller)["metadata"]
        return {name: value["tags"] for name, value in found.items()}

    @router.post(prefix + "/metadata/properties")
    def add_properties(target: str, caller: Caller, properties: Any = Body(...),  # noqa: B008
                       namespace: str | None = None, version: str | None = None) -> dict[str, Any]:
        """Add or replace USER properties: a JSON object of string values."""
        return _change(namespace, target, version, caller, add_properties=check_properties(properties))

    @router.post(prefix + "/metadata/tags")
    def add_tags(target: str, caller: Caller, tags: Any = Body(...),  # noqa: B008
                 namespace: str | None = None, version: str | None = None) -> dict[str, Any]:
        """Add USER tags: a JSON list of strings."""
        return _change(namespace, target, version, caller, add_tags=check_tags(tags))

    @router.delete(prefix + "/metadata/properties/{key}")
    def remove_property(target: str, key: str, caller: Caller, namespace: str | None = None,
                        version: str | None = None) -> dict[str, Any]:
        return _change(namespace, target, version, caller, remove_properties=[key])

    @router.delete(prefix + "/metadata/tags/{tag}")
    def remove_tag(target: str, tag: str, caller: Caller, namespace: str | None = None,
                   version: str | None = None) -> dict[str, Any]:
        return _change(namespace, target, version, caller, remove_tags=[tag])

    @router.delete(prefix + "/metadata/properties")
    def remove_properties(target: str, caller: Caller, namespace: str | None = None,
                          version: str | None = None) -> dict[str, Any]:
        return _change(namespace, target, version, caller, remove_properties=None)

    @router.delete(prefix + "/metadata/tags")
    def remove_tags(target: str, caller: Caller, namespace: str | None = None,
                    version: str | None = None) -> dict[str, Any]:
        return _change(namespace, target, version, caller, remove_tags=None)

    @router.delete(prefix + "/metadata")
    def remove_metadata(target: str, caller: Caller, namespace: str | None = None,
                        version: str | None = None) -> dict[str, Any]:
        return _change(namespace, target, version, caller, remove_properties=None, remove_tags=None)

    @router.get(prefix + "/metadata/history")
    def metadata_history(target: str, caller: Caller, namespace: str | None = None, version: str | None = None,
                         start: Start = "0", end: End = "now") -> dict[str, Any]:
        """The entity's change records in [start, end): previous and updated state, the diff."""
        window = parse_window(start, end)
        subject = _entity(namespace, target, version)
        with namespace_connection(namespace) as conn:
            caller.require(subject, Privilege.READ)
            if namespace is not None:
                window = visible_window(window, namespace_store.visible_since(conn, namespace))
            return {"entity": subject.to_dict(), "changes": metadata_store.history(conn, subject, *window)}

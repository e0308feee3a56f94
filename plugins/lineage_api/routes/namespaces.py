"""Namespaces (seed 003): list, read, create, delete (event-driven cleanup)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Body, HTTPException

from lineage.authorization import INSTANCE, Privilege, namespace_key
from lineage.errors import NotAuthorizedError
from lineage.namespaces import check_description, check_namespace
from lineage_api import warehouse_queries
from lineage_api.asset_events import emit_namespace_deletion
from lineage_api.auth import Caller
from warehouse import namespace_store

router = APIRouter(prefix="/v3/namespaces")


@router.get("")
def list_namespaces(caller: Caller) -> list[dict[str, Any]]:
    """The namespaces the caller holds a privilege in, with description and creation time."""
    with warehouse_queries.connection() as conn:
        return [n for n in namespace_store.list_namespaces(conn) if caller.sees_namespace(n["name"])]


@router.get("/{namespace}")
def get_namespace(namespace: str, caller: Caller) -> dict[str, Any]:
    with warehouse_queries.connection() as conn:
        found = namespace_store.get_namespace(conn, namespace)
    if found is None:
        raise HTTPException(404, f"namespace {namespace!r} not found")
    if not caller.sees_namespace(namespace):
        raise NotAuthorizedError(f"user {caller.principal!r} holds no privilege in namespace {namespace!r}")
    return found


@router.put("/{namespace}")
def create_namespace(namespace: str, caller: Caller, body: Any = Body(None)) -> dict[str, Any]:  # noqa: B008
    """Create the namespace (``{"description": "..."}`` optional; ADMIN on the instance), or
    update an existing one's description (ADMIN on it)."""
    if body is not None and not isinstance(body, dict):
        raise HTTPException(400, 'the body is optional: {"description": "..."}')
    description = check_description(body["description"]) if body and "description" in body else None
    with warehouse_queries.connection() as conn:
        exists = namespace_store.get_namespace(conn, check_namespace(namespace)) is not None
        caller.require_key(namespace_key(namespace) if exists else INSTANCE, Privilege.ADMIN)
        created = namespace_store.create_namespace(conn, namespace, description)
        found = namespace_store.get_namespace(conn, namespace)
    return {**(found or {}), "created": created}


@router.delete("/{namespace}")
def delete_namespace(namespace: str, caller: Caller) -> dict[str, Any]:
    """Delete the namespace (ADMIN on it): it is gone at once, and the
    ``lineage_namespace_cleanup`` DAG, scheduled on the deletion's asset event, removes its records."""
    with warehouse_queries.connection() as conn:
        if namespace_store.get_namespace(conn, namespace) is None:
            raise HTTPException(404, f"namespace {namespace!r} not found")
        caller.require_key(namespace_key(namespace), Privilege.ADMIN)
        deleted = namespace_store.delete_namespace(conn, namespace, caller.principal)
    if deleted is None:  # deleted meanwhile by someone else
        raise HTTPException(404, f"namespace {namespace!r} not found")
    return {**deleted, "assetEvent": emit_namespace_deletion(namespace, deleted["deletionId"], caller.principal)}


@router.get("/{namespace}/deletions")
def namespace_deletions(namespace: str, caller: Caller) -> list[dict[str, Any]]:
    """The namespace's past deletions and whether their cleanup finished (rows removed per
    table); ADMIN on the instance, since the namespace may not exist any more."""
    caller.require_key(INSTANCE, Privilege.ADMIN)
    with warehouse_queries.connection() as conn:
        return namespace_store.deletions(conn, namespace)

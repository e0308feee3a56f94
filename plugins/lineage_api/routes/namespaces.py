"""Namespaces (seed 003): list, read, create. Deletion (event-driven cleanup) is not there yet."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Body, HTTPException

from lineage.namespaces import check_description, check_namespace
from lineage_api import warehouse_queries
from warehouse import namespace_store

router = APIRouter(prefix="/v3/namespaces")


@router.get("")
def list_namespaces() -> list[dict[str, Any]]:
    """Every namespace, with its description and creation time."""
    with warehouse_queries.connection() as conn:
        return namespace_store.list_namespaces(conn)


@router.get("/{namespace}")
def get_namespace(namespace: str) -> dict[str, Any]:
    with warehouse_queries.connection() as conn:
        found = namespace_store.get_namespace(conn, namespace)
    if found is None:
        raise HTTPException(404, f"namespace {namespace!r} not found")
    return found


@router.put("/{namespace}")
def create_namespace(namespace: str, body: Any = Body(None)) -> dict[str, Any]:  # noqa: B008
    """Create the namespace (``{"description": "..."}`` optional); an existing one is kept."""
    if body is not None and not isinstance(body, dict):
        raise HTTPException(400, 'the body is optional: {"description": "..."}')
    description = check_description(body["description"]) if body and "description" in body else None
    with warehouse_queries.connection() as conn:
        created = namespace_store.create_namespace(conn, check_namespace(namespace), description)
        found = namespace_store.get_namespace(conn, namespace)
    return {**(found or {}), "created": created}

"""Namespaces (the *System Applications (CDAP 6.0)* design): list, read, create, delete (event-driven cleanup)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body

from lineage.errors import NotFoundError
from lineage.model.namespaces import check_namespace
from lineage_api.asset_events import emit_namespace_deletion
from lineage_api.deps import Airflow, Caller, Connection
from lineage_api.http_errors import answers
from lineage_api.models.namespaces import (
    NamespaceCreated,
    NamespaceDeleted,
    NamespaceDeletion,
    NamespaceInfo,
    NamespaceUpdate,
)
from warehouse.db import namespace_store
from warehouse.db.namespace_store import DeletionRow, NamespaceRow
from warehouse.service.authorization import INSTANCE, Privilege, namespace_key
from warehouse.service.timespec import epoch_seconds

router = APIRouter(prefix="/v3/namespaces")


def _info(row: NamespaceRow) -> NamespaceInfo:
    return NamespaceInfo(name=row.namespace, description=row.description, createdAt=epoch_seconds(row.created_at))


@router.get("", response_model=list[NamespaceInfo])
def list_namespaces(caller: Caller, conn: Connection) -> list[NamespaceInfo]:
    """The namespaces the caller holds a privilege in, with description and creation time."""
    return [_info(n) for n in namespace_store.list_namespaces(conn) if caller.sees_namespace(n.namespace)]


@router.get("/{namespace}", response_model=NamespaceInfo, responses=answers(404))
def get_namespace(namespace: str, caller: Caller, conn: Connection) -> NamespaceInfo:
    """One namespace: any privilege in it (403 whether or not it exists without one)."""
    caller.require_namespace(namespace)
    found = namespace_store.get_namespace(conn, namespace)
    if found is None:
        raise NotFoundError(f"namespace {namespace!r} not found")
    return _info(found)


@router.put("/{namespace}", response_model=NamespaceCreated)
def create_namespace(namespace: str, caller: Caller, conn: Connection,
                     body: Annotated[NamespaceUpdate | None, Body()] = None) -> NamespaceCreated:
    """Create the namespace (``{"description": "..."}`` optional; ADMIN on the instance), or
    update an existing one's description (ADMIN on it)."""
    if not caller.sees_namespace(check_namespace(namespace)):  # the same 403, existing or not
        caller.require_key(INSTANCE, Privilege.ADMIN)
    exists = namespace_store.get_namespace(conn, namespace) is not None
    caller.require_key(namespace_key(namespace) if exists else INSTANCE, Privilege.ADMIN)
    created = namespace_store.create_namespace(conn, namespace, body.description if body else None)
    found = namespace_store.get_namespace(conn, namespace)
    assert found is not None  # (a delete in between fails the answer, as it always did)
    return NamespaceCreated(name=found.namespace, description=found.description,
                            createdAt=epoch_seconds(found.created_at), created=created)


@router.delete("/{namespace}", response_model=NamespaceDeleted, responses=answers(404, 409))
def delete_namespace(namespace: str, caller: Caller, conn: Connection, airflow: Airflow) -> NamespaceDeleted:
    """Delete the namespace (ADMIN on it): it is gone at once, and the
    ``lineage_namespace_cleanup`` DAG, scheduled on the deletion's asset event, removes its records."""
    caller.require_namespace(namespace)
    if namespace_store.get_namespace(conn, namespace) is None:
        raise NotFoundError(f"namespace {namespace!r} not found")
    caller.require_key(namespace_key(namespace), Privilege.ADMIN)
    deleted = namespace_store.delete_namespace(conn, namespace, caller.principal)
    if deleted is None:  # deleted meanwhile by someone else
        raise NotFoundError(f"namespace {namespace!r} not found")
    emitted = emit_namespace_deletion(airflow, namespace, deleted.deletion_id, caller.principal)
    return NamespaceDeleted(namespace=deleted.namespace, deletionId=deleted.deletion_id,
                            deletedAt=epoch_seconds(deleted.deleted_at), assetEvent=emitted)


def _deletion(row: DeletionRow) -> NamespaceDeletion:
    return NamespaceDeletion(deletionId=row.deletion_id, namespace=row.namespace,
                             deletedAt=epoch_seconds(row.deleted_at), deletedBy=row.deleted_by,
                             cleanedAt=epoch_seconds(row.cleaned_at), removed=row.removed)


@router.get("/{namespace}/deletions", response_model=list[NamespaceDeletion])
def namespace_deletions(namespace: str, caller: Caller, conn: Connection) -> list[NamespaceDeletion]:
    """The namespace's past deletions and whether their cleanup finished (rows removed per
    table); ADMIN on the instance, since the namespace may not exist any more."""
    caller.require_key(INSTANCE, Privilege.ADMIN)
    return [_deletion(row) for row in namespace_store.deletions(conn, namespace)]

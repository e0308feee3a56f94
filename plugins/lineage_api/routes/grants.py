"""Grants (seed 000 "Authorization for Metadata"): admins give Airflow users READ, WRITE or
ADMIN on the instance, a namespace, a dataset or stream, or a program.

The entity is named by its API path: ``instance``, ``namespaces/sales``,
``namespaces/sales/datasets/orders``, ``namespaces/sales/apps/Shop/spark/Load``. Granting or
revoking needs ADMIN there (a namespace admin manages its namespace and everything in it);
on the instance, ADMIN on the instance (an Airflow admin).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Body, HTTPException

from lineage.authorization import INSTANCE, Access, Privilege, grant_target
from lineage.metadata_entity import InvalidEntityError, MetadataEntity, from_path
from lineage_api import warehouse_queries
from lineage_api.auth import Caller
from lineage_api.routes.lineage import namespace_connection
from warehouse import grant_store

router = APIRouter(prefix="/v3/grants")
MAX_PRINCIPAL_LENGTH = 256


def _principal(value: object) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_PRINCIPAL_LENGTH or "\x00" in value:
        raise InvalidEntityError(f"a principal is an Airflow user name of 1-{MAX_PRINCIPAL_LENGTH} characters")
    return value


def _target(path: object) -> tuple[MetadataEntity | None, str | None]:
    """(entity, namespace) of an entity path; (None, None) for the instance."""
    if path == INSTANCE:
        return None, None
    segments = [part for part in str(path).split("/") if part] if isinstance(path, str) else []
    if len(segments) < 2 or segments[0] != "namespaces":
        raise InvalidEntityError("the entity is 'instance' or a path such as 'namespaces/sales', "
                                 "'namespaces/sales/datasets/orders', 'namespaces/sales/apps/Shop/spark/Load'")
    return from_path(segments[1], segments[2:]), segments[1]


def _checked(caller: Access, entity_path: object) -> tuple[str, str | None]:
    """The grant key of ``entity_path`` after checking the caller may manage grants there."""
    subject, namespace = _target(entity_path)
    key = grant_target(subject)
    if subject is None:
        caller.require_key(INSTANCE, Privilege.ADMIN)
    else:
        with namespace_connection(namespace):  # 404 for an unknown namespace
            caller.require(subject, Privilege.ADMIN)
    return key, namespace


@router.get("")
def list_grants(caller: Caller, namespace: str | None = None, principal: str | None = None) -> list[dict[str, Any]]:
    """Grants, of one namespace (ADMIN on it) or all (ADMIN on the instance), optionally of one principal."""
    if namespace is None:
        caller.require_key(INSTANCE, Privilege.ADMIN)
    else:
        with namespace_connection(namespace):
            caller.require(from_path(namespace, []), Privilege.ADMIN)
    with warehouse_queries.connection() as conn:
        return grant_store.list_grants(conn, namespace, principal)


@router.get("/mine")
def my_grants(caller: Caller) -> dict[str, Any]:
    """The caller's own privileges (what the pages use to offer editing)."""
    return {"principal": caller.principal, "instanceAdmin": caller.instance_admin,
            "grants": {key: privilege.name for key, privilege in sorted(caller.grants.items())}}


@router.put("")
def put_grant(caller: Caller, body: Any = Body(...)) -> dict[str, Any]:  # noqa: B008
    """Give ``{"principal", "entity", "privilege"}``: the principal then holds exactly that
    privilege there (it includes the lesser ones)."""
    if not isinstance(body, dict) or set(body) != {"principal", "entity", "privilege"}:
        raise HTTPException(400, 'the body is {"principal": "...", "entity": "namespaces/...", "privilege": "READ"}')
    principal, privilege = _principal(body["principal"]), Privilege.parse(body["privilege"])
    key, namespace = _checked(caller, body["entity"])
    with warehouse_queries.connection() as conn:
        grant_store.put_grant(conn, principal, key, namespace, privilege, caller.principal)
    return {"principal": principal, "entity": key, "privilege": privilege.name}


@router.delete("")
def revoke_grant(caller: Caller, principal: str, entity: str) -> dict[str, Any]:
    """Take back what ``principal`` holds on ``entity`` (404 when nothing was granted there)."""
    key, _ = _checked(caller, entity)
    with warehouse_queries.connection() as conn:
        if not grant_store.revoke(conn, _principal(principal), key):
            raise HTTPException(404, f"{principal!r} holds no grant on {key}")
    return {"principal": principal, "entity": key, "revoked": True}

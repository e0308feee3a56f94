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
from lineage.errors import InvalidEntityError
from lineage.metadata_entity import MetadataEntity, from_path
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


def _manageable(caller: Access, subject: MetadataEntity | None) -> str:
    """The grant key of ``subject`` (None: the instance) once the caller may manage grants there."""
    key = grant_target(subject)
    if subject is None:
        caller.require_key(INSTANCE, Privilege.ADMIN)
    else:
        caller.require(subject, Privilege.ADMIN)
    return key


@router.get("")
def list_grants(caller: Caller, namespace: str | None = None, principal: str | None = None) -> list[dict[str, Any]]:
    """Grants, of one namespace (ADMIN on it) or all (ADMIN on the instance), optionally of one principal."""
    with namespace_connection(namespace) as conn:  # 404 for an unknown namespace
        _manageable(caller, from_path(namespace, []) if namespace else None)
        return grant_store.list_grants(conn, namespace, principal)


@router.get("/mine")
def my_grants(caller: Caller) -> dict[str, Any]:
    """The caller's own privileges."""
    return {"principal": caller.principal, "instanceAdmin": caller.instance_admin,
            "grants": {key: privilege.name for key, privilege in sorted(caller.grants.items())}}


@router.put("")
def put_grant(caller: Caller, body: Any = Body(...)) -> dict[str, Any]:  # noqa: B008
    """Give ``{"principal", "entity", "privilege"}``: the principal then holds exactly that
    privilege there (it includes the lesser ones)."""
    if not isinstance(body, dict) or set(body) != {"principal", "entity", "privilege"}:
        raise HTTPException(400, 'the body is {"principal": "...", "entity": "namespaces/...", "privilege": "READ"}')
    principal, privilege = _principal(body["principal"]), Privilege.parse(body["privilege"])
    subject, namespace = _target(body["entity"])
    with namespace_connection(namespace) as conn:
        key = _manageable(caller, subject)
        grant_store.put_grant(conn, principal, key, namespace, privilege, caller.principal)
    return {"principal": principal, "entity": key, "privilege": privilege.name}


@router.delete("")
def revoke_grant(caller: Caller, principal: str, entity: str) -> dict[str, Any]:
    """Take back what ``principal`` holds on ``entity`` (404 when nothing was granted there)."""
    subject, namespace = _target(entity)
    with namespace_connection(namespace) as conn:
        key = _manageable(caller, subject)
        if not grant_store.revoke(conn, _principal(principal), key):
            raise HTTPException(404, f"{principal!r} holds no grant on {key}")
    return {"principal": principal, "entity": key, "revoked": True}

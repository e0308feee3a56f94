"""Grants ("Authorization for Metadata" of the *Metadata Custom Entities and Authorization*
design): admins give Airflow users READ, WRITE or ADMIN on the instance, a namespace, a dataset
or stream, or a program.

The entity is named by its API path: ``instance``, ``namespaces/sales``,
``namespaces/sales/datasets/orders``, ``namespaces/sales/apps/Shop/spark/Load``, where a
dataset's or stream's name is the rest of the path, its ``/`` raw or ``%2F``
(``namespaces/sales/datasets/s3://lake/orders``); or by the key a grant is listed under
(``namespace=sales,dataset=s3://lake/orders``). Granting or revoking needs ADMIN there (a
namespace admin manages its namespace and everything in it); on the instance, ADMIN on the
instance (an Airflow admin).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import psycopg
from fastapi import APIRouter

from lineage.errors import NotFoundError
from lineage.model.metadata_entity import MetadataEntity, from_path
from lineage_api.deps import Caller, Connection, namespace_incarnation
from lineage_api.http_errors import answers
from lineage_api.models.grants import Grant, GrantGiven, GrantRequest, GrantRevoked, MyGrants
from warehouse.db import grant_store
from warehouse.service.authorization import INSTANCE, Access, Privilege, check_principal, grant_subject, grant_target

router = APIRouter(prefix="/v3/grants", responses=answers(404))


def _target(path: str, conn: psycopg.Connection, caller: Access
            ) -> tuple[MetadataEntity | None, str | None, datetime | None]:
    """(entity, namespace, the namespace's incarnation) of an entity path, its namespace checked
    (404); (None, None, None) for the instance."""
    subject = grant_subject(path)
    if subject is None or subject.namespace is None:
        return None, None, None
    return subject, subject.namespace, namespace_incarnation(subject.namespace, conn, caller)


def _manageable(caller: Access, subject: MetadataEntity | None) -> str:
    """The grant key of ``subject`` (None: the instance) once the caller may manage grants there."""
    key = grant_target(subject)
    if subject is None:
        caller.require_key(INSTANCE, Privilege.ADMIN)
    else:
        caller.require(subject, Privilege.ADMIN)
    return key


@router.get("", response_model=list[Grant])
def list_grants(caller: Caller, conn: Connection, namespace: str | None = None,
                principal: str | None = None) -> list[dict[str, Any]]:
    """Grants, of one namespace (ADMIN on it) or all (ADMIN on the instance), optionally of one principal."""
    if namespace is not None:
        namespace_incarnation(namespace, conn, caller)
    _manageable(caller, from_path(namespace, []) if namespace else None)
    return grant_store.list_grants(conn, namespace, principal)


@router.get("/mine", response_model=MyGrants)
def my_grants(caller: Caller) -> dict[str, Any]:
    """The caller's own privileges."""
    return {"principal": caller.principal, "instanceAdmin": caller.instance_admin,
            "grants": {key: privilege.name for key, privilege in sorted(caller.grants.items())}}


@router.put("", response_model=GrantGiven)
def put_grant(body: GrantRequest, caller: Caller, conn: Connection) -> dict[str, Any]:
    """Give ``{"principal", "entity", "privilege"}``: the principal then holds exactly that
    privilege there (it includes the lesser ones)."""
    principal, privilege = check_principal(body.principal), Privilege.parse(body.privilege)
    subject, namespace, born = _target(body.entity, conn, caller)
    key = _manageable(caller, subject)
    grant_store.put_grant(conn, principal, key, namespace, privilege, caller.principal, born)
    return {"principal": principal, "entity": key, "privilege": privilege.name}


@router.delete("", response_model=GrantRevoked)
def revoke_grant(principal: str, entity: str, caller: Caller, conn: Connection) -> dict[str, Any]:
    """Take back what ``principal`` holds on ``entity`` (404 when nothing was granted there)."""
    subject, _, _ = _target(entity, conn, caller)
    key = _manageable(caller, subject)
    if not grant_store.revoke(conn, check_principal(principal), key):
        raise NotFoundError(f"{principal!r} holds no grant on {key}")
    return {"principal": principal, "entity": key, "revoked": True}

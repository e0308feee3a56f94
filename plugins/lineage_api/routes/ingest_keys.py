"""Ingest keys (``/v3/ingest-keys``): static bearer keys for OpenLineage producers, each bound to
a principal whose grants decide which namespaces it may write. ADMIN on the instance creates,
lists and revokes them; a key is stored hashed and shown once, when it is created."""

from __future__ import annotations

from fastapi import APIRouter

from lineage.errors import NotFoundError
from lineage_api.deps import Caller, Connection
from lineage_api.http_errors import answers
from lineage_api.models.openlineage import IngestKey, IngestKeyCreated, IngestKeyRequest
from warehouse.db import ingest_key_store
from warehouse.db.ingest_key_store import IngestKeyRow
from warehouse.service.authorization import INSTANCE, Privilege, check_principal
from warehouse.service.timespec import epoch_seconds

router = APIRouter(prefix="/v3/ingest-keys", responses=answers(404))


def _listed(row: IngestKeyRow) -> IngestKey:
    return IngestKey(id=row.key_id, name=row.name, principal=row.principal, key=row.shown_part + "…",
                     createdBy=row.created_by, createdAt=epoch_seconds(row.created_at),
                     lastUsedAt=epoch_seconds(row.last_used_at), revokedAt=epoch_seconds(row.revoked_at),
                     revokedBy=row.revoked_by)


@router.get("", response_model=list[IngestKey])
def list_keys(caller: Caller, conn: Connection, principal: str | None = None) -> list[IngestKey]:
    """Every key (revoked ones too, with when and by whom), newest first; never the keys themselves."""
    caller.require_key(INSTANCE, Privilege.ADMIN)
    return [_listed(row) for row in ingest_key_store.list_keys(conn, principal)]


@router.post("", status_code=201, response_model=IngestKeyCreated)
def create_key(body: IngestKeyRequest, caller: Caller, conn: Connection) -> IngestKeyCreated:
    """A new key for ``principal``; the answer's ``secret`` is the only time the key is shown."""
    caller.require_key(INSTANCE, Privilege.ADMIN)
    listed, secret = ingest_key_store.create(conn, body.name, check_principal(body.principal), caller.principal)
    return IngestKeyCreated(**_listed(listed).model_dump(), secret=secret)


@router.delete("/{key_id}", response_model=IngestKey)
def revoke_key(key_id: int, caller: Caller, conn: Connection) -> IngestKey:
    """Revoke a key: producers sending it get 401 (within the API's key cache time, 10 s)."""
    caller.require_key(INSTANCE, Privilege.ADMIN)
    revoked = ingest_key_store.revoke(conn, key_id, caller.principal)
    if revoked is None:
        raise NotFoundError(f"no ingest key {key_id}")
    return _listed(revoked)

"""Who posts OpenLineage events: an ingest key (``Authorization: Bearer lwk_...``) stands for the
principal it is bound to; anything else is Airflow's login, as on every route.

A valid key and its principal's grants are remembered for ``TTL`` seconds per api-server
process, so a busy producer costs no warehouse query (and no worker thread) per request; a
revoked key, or a changed grant, therefore takes effect within that time.
"""

from __future__ import annotations

import threading
import time
from typing import Annotated

from airflow.api_fastapi.auth.managers.models.base_user import BaseUser
from airflow.api_fastapi.core_api.security import bearer_scheme, get_user
from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials
from starlette.concurrency import run_in_threadpool

from lineage_api.deps import is_instance_admin
from lineage_api.warehouse_pool import WarehousePool
from warehouse.db import grant_store, ingest_key_store
from warehouse.service.authorization import Access
from warehouse.service.ingest_keys import is_ingest_key, key_hash

TTL = 10.0


class KeyCache:
    """key hash -> (the key's Access, when it was read), for TTL seconds."""

    def __init__(self, ttl: float = TTL) -> None:
        self.ttl = ttl
        self._entries: dict[str, tuple[Access, float]] = {}
        self._lock = threading.Lock()

    def cached(self, key: str) -> Access | None:
        """The key's Access when read less than TTL seconds ago (no IO: the event loop may ask)."""
        with self._lock:
            cached = self._entries.get(key_hash(key))
        if cached is not None and time.monotonic() - cached[1] < self.ttl:
            return cached[0]
        return None

    def access(self, pool: WarehousePool, key: str) -> Access:
        """The key's Access, read from the warehouse unless cached; 401 for an unknown key."""
        cached = self.cached(key)
        if cached is not None:
            return cached
        digest = key_hash(key)
        now = time.monotonic()
        with pool.connection() as conn:
            principal = ingest_key_store.principal_of(conn, key)
            access = None if principal is None else grant_store.access_for(conn, principal, instance_admin=False)
        if access is None:
            with self._lock:
                self._entries.pop(digest, None)
            raise HTTPException(status_code=401, detail="unknown or revoked ingest key")
        with self._lock:
            if len(self._entries) > 10_000:
                self._entries.clear()
            self._entries[digest] = (access, now)
        return access


Bearer = Annotated[HTTPAuthorizationCredentials | None, Depends(bearer_scheme)]


async def ingest_caller(request: Request, bearer: Bearer) -> Access:
    """The poster's Access: an ingest key's principal, or the logged-in Airflow user (Airflow's
    ``get_user``: a bearer JWT or the UI's cookie). A cached key is answered on the event loop;
    reading grants or a key takes a pooled connection in a worker thread. One dependency, not a
    chain of them: FastAPI's resolution of each costs more than this check."""
    pool: WarehousePool = request.app.state.warehouse
    if bearer is not None and bearer.scheme.lower() == "bearer" and is_ingest_key(bearer.credentials):
        cache: KeyCache = request.app.state.ingest_keys
        cached = cache.cached(bearer.credentials)
        if cached is not None:
            return cached
        return await run_in_threadpool(cache.access, pool, bearer.credentials)
    user = await get_user(request, None, bearer)  # its OAuth2 argument is only for the OpenAPI login form
    return await run_in_threadpool(_user_access, pool, user)


def _user_access(pool: WarehousePool, user: BaseUser) -> Access:
    with pool.connection() as conn:
        return grant_store.access_for(conn, user.get_name(), is_instance_admin(user))


IngestCaller = Annotated[Access, Depends(ingest_caller)]

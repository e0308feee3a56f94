"""Health (public) and the warehouse's status: warehouse-wide counts and compaction batches, for
callers with READ on the instance (they span every namespace)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from lineage_api.deps import Caller, Connection
from lineage_api.models.status import Compactions, Health, Summary
from warehouse.db import status_queries as warehouse_queries
from warehouse.service.authorization import INSTANCE, Privilege

public_router = APIRouter()
router = APIRouter(prefix="/api/v1")


@public_router.get("/health", response_model=Health)
def health(request: Request) -> dict[str, str]:
    """Liveness of the plugin and reachability of the warehouse; no login needed."""
    return {"status": "ok", "warehouse": "ok" if request.app.state.warehouse.answers() else "unreachable"}


@router.get("/compactions", response_model=Compactions)
def compactions(caller: Caller, conn: Connection, limit: Annotated[int, Query(ge=1, le=500)] = 20
                ) -> dict[str, Any]:
    """The latest compaction batches, newest first; READ on the instance."""
    caller.require_key(INSTANCE, Privilege.READ)
    return {"compactions": warehouse_queries.recent_compactions(conn, limit)}


@router.get("/summary", response_model=Summary)
def summary(caller: Caller, conn: Connection) -> dict[str, int]:
    """Row counts of the warehouse's main tables; READ on the instance."""
    caller.require_key(INSTANCE, Privilege.READ)
    return warehouse_queries.warehouse_totals(conn)

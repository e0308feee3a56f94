"""Health (public) and compaction status (logged-in users)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from lineage_api import warehouse_queries
from lineage_api.deps import Connection
from lineage_api.models import Compactions, Health, Summary

public_router = APIRouter()
router = APIRouter(prefix="/api/v1")


@public_router.get("/health", response_model=Health)
def health(request: Request) -> dict[str, str]:
    """Liveness of the plugin and reachability of the warehouse; no login needed."""
    return {"status": "ok", "warehouse": "ok" if warehouse_queries.ping(request.app.state.warehouse) else "unreachable"}


@router.get("/compactions", response_model=Compactions)
def compactions(conn: Connection, limit: Annotated[int, Query(ge=1, le=500)] = 20) -> dict[str, Any]:
    """The latest compaction batches, newest first."""
    return {"compactions": warehouse_queries.recent_compactions(conn, limit)}


@router.get("/summary", response_model=Summary)
def summary(conn: Connection) -> dict[str, int]:
    """Row counts of the warehouse's main tables."""
    return warehouse_queries.warehouse_totals(conn)

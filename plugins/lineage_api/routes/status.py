"""Health (public) and compaction status (logged-in users)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from lineage_api import warehouse_queries

public_router = APIRouter()
router = APIRouter(prefix="/api/v1")


@public_router.get("/health")
def health() -> dict[str, str]:
    """Liveness of the plugin and reachability of the warehouse; no login needed."""
    return {"status": "ok", "warehouse": "ok" if warehouse_queries.ping() else "unreachable"}


@router.get("/compactions")
def compactions(limit: Annotated[int, Query(ge=1, le=500)] = 20) -> dict[str, Any]:
    """The latest compaction batches, newest first."""
    return {"compactions": warehouse_queries.recent_compactions(limit)}


@router.get("/summary")
def summary() -> dict[str, int]:
    """Row counts of the warehouse's main tables."""
    return warehouse_queries.warehouse_totals()

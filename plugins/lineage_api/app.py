"""The FastAPI app Airflow mounts at ``/lineage``: routers, JSON errors, the warehouse pool's
lifespan, and the OpenAPI document and its docs page (behind the login, like every route but
the health check)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from airflow.api_fastapi.core_api.security import get_user
from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.openapi.utils import get_openapi
from fastapi.responses import HTMLResponse
from starlette.concurrency import run_in_threadpool

from lineage.settings import Settings
from lineage_api import http_errors
from lineage_api.body_limit import BodyLimit
from lineage_api.deps import CurrentUser
from lineage_api.ingest_auth import KeyCache
from lineage_api.path_names import KeepEncodedSlashes
from lineage_api.routes import (
    blast_radius,
    dataset_schemas,
    field_lineage,
    field_summaries,
    field_tags,
    grants,
    ingest_keys,
    lineage,
    lineage_diff,
    links,
    marquez,
    metadata,
    namespaces,
    openlineage,
    openlineage_export,
    pages,
    run_lineage,
    search,
    status,
    tag_map,
)
from lineage_api.warehouse_pool import WarehousePool
from warehouse.ingest.sealed_log import SealedLog

URL_PREFIX = "/lineage"
OPENLINEAGE_ALIAS_PREFIX = "/api/v1"
TITLE = "Lineage warehouse"


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    """Open the process's warehouse pool and OpenLineage log at start-up (Airflow runs a
    mounted app's lifespan: the log then seals what a crashed process left and starts its
    timer), close both at shutdown (the log seals its open file)."""
    pool: WarehousePool = app.state.warehouse
    ingest_log: SealedLog = app.state.ingest_log
    await run_in_threadpool(pool.open)
    await run_in_threadpool(ingest_log.start)
    try:
        yield
    finally:
        await run_in_threadpool(ingest_log.close)
        await run_in_threadpool(pool.close)


class LineageApi(FastAPI):
    """The app, whose OpenAPI document lists every operation's bodies and error answers (400,
    not FastAPI's 422)."""

    def openapi(self) -> dict[str, Any]:
        if self.openapi_schema is None:
            self.openapi_schema = http_errors.without_422(get_openapi(
                title=self.title, version=self.version, description=self.description, routes=self.routes))
        return self.openapi_schema


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the app; Airflow mounts it at URL_PREFIX."""
    app = LineageApi(title=TITLE, version="0.1.0", description="Lineage and metadata API (CDAP v3 paths)",
                  lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None)
    app.state.settings = settings or Settings.from_env()
    app.state.warehouse = WarehousePool(app.state.settings)
    app.state.ingest_log = ingest_log(app.state.settings)
    app.state.ingest_keys = KeyCache()
    logged_in: dict[str, Any] = {"dependencies": [Depends(get_user)], "responses": http_errors.LOGGED_IN}
    # OpenLineage in first (routing tries the routes in order; producers post most often), with
    # an ingest key or Airflow's login
    app.include_router(openlineage.router, prefix="/api/v1")
    app.include_router(status.public_router)
    app.include_router(status.router, **logged_in)
    app.include_router(openlineage_export.router, prefix="/api/v1", **logged_in)
    app.include_router(marquez.router, prefix="/api/v1", **logged_in)  # Marquez's read API
    for module in (lineage, lineage_diff, run_lineage, blast_radius, field_lineage, field_tags, field_summaries,
                   namespaces, grants, dataset_schemas, search, tag_map, metadata, links, ingest_keys):
        app.include_router(module.router, **logged_in)  # search before metadata's {target:path}
    app.include_router(pages.public_router, include_in_schema=False)
    app.include_router(pages.router, dependencies=[Depends(get_user)], responses=http_errors.answers(401, 403),
                       include_in_schema=False)
    app.include_router(_documentation(app))
    http_errors.install(app)
    app.add_middleware(KeepEncodedSlashes)
    app.add_middleware(BodyLimit)
    return app


def create_openlineage_alias(app: FastAPI) -> FastAPI:
    """The OpenLineage endpoint alone, for Airflow to mount at ``OPENLINEAGE_ALIAS_PREFIX``
    (``/api/v1``, which Airflow 3 leaves free): the stock HTTP transport joins its endpoint
    ``api/v1/lineage`` to ``url=http://<airflow>/lineage`` as ``/api/v1/lineage`` (``urljoin``
    drops a last segment without a trailing slash). It shares ``app``'s state (settings, pool,
    log), which ``app``'s lifespan opens and closes."""
    alias = FastAPI(title=f"{TITLE}: OpenLineage", docs_url=None, redoc_url=None, openapi_url=None)
    alias.state = app.state
    alias.include_router(openlineage.router)
    http_errors.install(alias)
    return alias


def ingest_log(settings: Settings) -> SealedLog:
    """The process's OpenLineage log: open files in the spool, sealed into the log root."""
    return SealedLog(settings.log_root, settings.spool(), prefix="openlineage",
                     max_bytes=settings.ingest_seal_mb * 1024 * 1024, max_age=settings.ingest_seal_seconds)


def _documentation(app: FastAPI) -> APIRouter:
    router = APIRouter(include_in_schema=False)

    @router.get("/openapi.json")
    def openapi_document(_: CurrentUser, request: Request) -> dict[str, Any]:
        """``app.openapi()``, with the path Airflow mounted the app at (``/lineage``) as its server."""
        mounted_at = request.scope.get("root_path", "")
        return {**app.openapi(), "servers": [{"url": mounted_at}]} if mounted_at else app.openapi()

    @router.get("/docs", response_class=HTMLResponse)
    def docs(_: CurrentUser) -> HTMLResponse:
        return get_swagger_ui_html(openapi_url="openapi.json", title=f"{TITLE} API")

    return router

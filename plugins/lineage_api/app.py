"""The FastAPI app: JSON errors with a message, health, compaction status, the home page."""

from __future__ import annotations

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from lineage.errors import (
    DefaultNamespaceError,
    IncompatibleSchemaError,
    LineageError,
    MartNotBuiltError,
    NotAuthorizedError,
)
from lineage_api.auth import get_user
from lineage_api.routes import (
    dataset_schemas,
    field_lineage,
    grants,
    lineage,
    metadata,
    namespaces,
    pages,
    search,
    status,
)

URL_PREFIX = "/lineage"
# The product's errors (LineageError) and their HTTP status; anything else is a 500.
_STATUS: tuple[tuple[type[Exception], int], ...] = (
    (ValueError, 400), (NotAuthorizedError, 403), (DefaultNamespaceError, 409), (MartNotBuiltError, 503))


def create_app() -> FastAPI:
    """Build the app; Airflow mounts it at URL_PREFIX."""
    app = FastAPI(title="Lineage warehouse", version="0.1.0", description="Lineage and metadata API (CDAP v3 paths)")
    app.include_router(status.public_router)
    app.include_router(status.router, dependencies=[Depends(get_user)])
    app.include_router(lineage.router, dependencies=[Depends(get_user)])
    app.include_router(field_lineage.router, dependencies=[Depends(get_user)])
    app.include_router(namespaces.router, dependencies=[Depends(get_user)])
    app.include_router(grants.router, dependencies=[Depends(get_user)])
    app.include_router(dataset_schemas.router, dependencies=[Depends(get_user)])
    app.include_router(search.router, dependencies=[Depends(get_user)])  # before metadata's {target:path}
    app.include_router(metadata.router, dependencies=[Depends(get_user)])
    app.include_router(pages.public_router)
    app.include_router(pages.router, dependencies=[Depends(get_user)])

    @app.exception_handler(HTTPException)
    async def http_error(_: Request, exc: HTTPException) -> JSONResponse:
        return JSONResponse({"message": str(exc.detail), "status": exc.status_code}, status_code=exc.status_code,
                            headers=getattr(exc, "headers", None))

    @app.exception_handler(RequestValidationError)
    async def bad_request(_: Request, exc: RequestValidationError) -> JSONResponse:
        problems = "; ".join(f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors())
        return JSONResponse({"message": f"bad request: {problems}", "status": 400}, status_code=400)

    @app.exception_handler(LineageError)
    async def lineage_error(_: Request, exc: LineageError) -> JSONResponse:
        if isinstance(exc, IncompatibleSchemaError):
            return JSONResponse({"message": str(exc), "status": 409, "incompatibilities": exc.reasons},
                                status_code=409)
        code = next((status for kind, status in _STATUS if isinstance(exc, kind)), 500)
        return JSONResponse({"message": str(exc), "status": code}, status_code=code)

    return app

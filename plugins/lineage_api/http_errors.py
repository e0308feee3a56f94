"""Errors as HTTP answers: one table from the core's error classes (``lineage.errors``) to a
status, the handlers that answer ``{"message", "status"}``, and the error answers each
operation documents in the OpenAPI document (400 for bad input, never FastAPI's 422).

A warehouse that is down or slow raises psycopg's ``OperationalError`` (refused connection,
no free pooled connection in time (``PoolTimeout``), a statement timeout, a dropped
connection): it answers 503 as a ``WarehouseUnavailableError`` does.
"""

from __future__ import annotations

import logging
from typing import Any

import psycopg
import psycopg.errors
from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from lineage.errors import (
    ConflictError,
    IncompatibleSchemaError,
    LineageError,
    NotAuthorizedError,
    NotFoundError,
    RequestTimeoutError,
    RequestTooLargeError,
    UnavailableError,
)
from lineage.settings import WAREHOUSE_CONN_ID
from lineage_api.models.base import ErrorBody, SchemaConflictBody
from lineage_api.warehouse_pool import failure_kind

log = logging.getLogger(__name__)

# The one table: the first class an error is an instance of gives its status; any other
# LineageError is a bug of ours (500).
STATUS: tuple[tuple[type[Exception], int], ...] = (
    (RequestTooLargeError, 413),
    (RequestTimeoutError, 408),
    (psycopg.DataError, 400),  # a value PostgreSQL cannot take (a NUL in a parameter, an out-of-range number)
    (ValueError, 400),  # every Invalid...Error: bad input, the message names it
    (NotAuthorizedError, 403),
    (NotFoundError, 404),
    (ConflictError, 409),
    (UnavailableError, 503),  # the warehouse down, slow or not built yet
)

_DESCRIPTIONS = {400: "bad input: the message names it", 401: "not logged in to Airflow",
                 403: "an invalid token, or a privilege the caller lacks", 404: "not found",
                 408: "the request body was not received in the time the endpoint allows",
                 413: "the request body is over the size the endpoint takes",
                 409: "a conflict with what is stored; nothing changed",
                 503: "the warehouse is down, slow, not reachable through its connection, or not built yet"}


def status_of(error: Exception) -> int:
    return next((status for kind, status in STATUS if isinstance(error, kind)), 500)


def answers(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """The error answers of an operation, for the OpenAPI document."""
    return {status: {"model": SchemaConflictBody if status == 409 else ErrorBody, "description": _DESCRIPTIONS[status]}
            for status in statuses}


# What every route behind the login can answer: bad input, no login, a bad token or missing
# privilege, a warehouse that cannot answer.
LOGGED_IN = answers(400, 401, 403, 503)


def unavailable_message(error: psycopg.OperationalError) -> str:
    """A 503's message: a statement cut by the timeout says so; any other failure names the
    Airflow connection id and the kind of failure only (the details go to the server's log)."""
    if isinstance(error, psycopg.errors.QueryCanceled):
        return "the warehouse cannot answer now: a statement ran past its statement timeout " \
               "(LINEAGE_API_STATEMENT_TIMEOUT_MS)"
    detail = " ".join(line.strip() for line in str(error).splitlines()) or type(error).__name__
    log.warning("lineage API: the warehouse cannot answer: %s", detail)
    return f"the warehouse (Airflow connection {WAREHOUSE_CONN_ID!r}) cannot answer now ({type(error).__name__}): " \
           f"{failure_kind(detail)}"


def _answer(status: int, message: str, **extra: Any) -> JSONResponse:
    return JSONResponse({"message": message, "status": status, **extra}, status_code=status)


def install(app: FastAPI) -> None:
    """Answer every error as JSON with a message."""

    @app.exception_handler(LineageError)
    async def lineage_error(_: Request, error: LineageError) -> JSONResponse:
        extra = {"incompatibilities": error.reasons} if isinstance(error, IncompatibleSchemaError) else {}
        return _answer(status_of(error), str(error), **extra)

    @app.exception_handler(psycopg.OperationalError)
    async def warehouse_down(_: Request, error: psycopg.OperationalError) -> JSONResponse:
        return _answer(503, unavailable_message(error))

    @app.exception_handler(psycopg.DataError)
    async def bad_value(_: Request, error: psycopg.DataError) -> JSONResponse:
        # a value PostgreSQL cannot take: a NUL in a query or path parameter, a number out of range
        first = (str(error).splitlines() or [type(error).__name__])[0][:300]
        return _answer(400, f"bad request: {first}")

    @app.exception_handler(HTTPException)
    async def http_error(_: Request, error: HTTPException) -> JSONResponse:
        # Airflow's login (401, 403) and routing (404 for an unknown path, 405).
        response = _answer(error.status_code, str(error.detail))
        response.headers.update(getattr(error, "headers", None) or {})
        return response

    @app.exception_handler(RequestValidationError)
    async def bad_request(_: Request, error: RequestValidationError) -> JSONResponse:
        problems = "; ".join(f"{'.'.join(str(part) for part in problem['loc'])}: {problem['msg']}"
                             for problem in error.errors())
        return _answer(400, f"bad request: {problems}")


def without_422(document: dict[str, Any]) -> dict[str, Any]:
    """The OpenAPI document with FastAPI's 422 answers removed: validation answers 400, which
    each operation lists with ``ErrorBody``."""
    for operations in document.get("paths", {}).values():
        for operation in operations.values():
            responses = operation.get("responses", {})
            if responses.pop("422", None) is not None and "400" not in responses:
                responses["400"] = {"description": _DESCRIPTIONS[400],
                                    "content": {"application/json": {"schema": {
                                        "$ref": "#/components/schemas/ErrorBody"}}}}
    schemas = document.get("components", {}).get("schemas", {})
    for unused in ("HTTPValidationError", "ValidationError"):
        schemas.pop(unused, None)
    return document

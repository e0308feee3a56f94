"""What routes take from a request, as FastAPI dependencies: the warehouse connection, the
caller, a namespace that exists, a time window, Airflow's REST API. A route parses (these),
calls the core or a query, and answers.

FastAPI resolves each dependency once per request, so the caller's grants and the route read
through the same pooled connection: one connection per request. A dependency raises the
core's errors (``lineage.errors``); ``lineage_api.http_errors`` turns them into answers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from typing import Annotated, Any

import psycopg
from airflow.api_fastapi.auth.managers.models.base_user import BaseUser
from airflow.api_fastapi.core_api.security import get_user
from fastapi import Depends, Query, Request

from lineage.errors import InvalidTimeError, NotFoundError
from lineage.model.metadata_entity import program_entity
from lineage_api.asset_events import AirflowApi
from lineage_api.warehouse_pool import WarehousePool
from warehouse.db import grant_store, namespace_guard
from warehouse.service.authorization import Access, Privilege
from warehouse.service.timespec import parse_window, window_at

CurrentUser = Annotated[BaseUser, Depends(get_user)]


def warehouse_connection(request: Request) -> Iterator[psycopg.Connection]:
    """The request's one autocommit connection, from the app's pool."""
    pool: WarehousePool = request.app.state.warehouse
    with pool.connection() as conn:
        yield conn


Connection = Annotated[psycopg.Connection, Depends(warehouse_connection)]


def is_instance_admin(user: Any) -> bool:
    """An Airflow admin: the simple auth manager's ADMIN role, or FAB's Admin role."""
    role = getattr(user, "role", None)
    if isinstance(role, str):
        return role.upper() == "ADMIN"
    return any(getattr(r, "name", r) == "Admin" for r in getattr(user, "roles", None) or ())


def caller_access(user: CurrentUser, conn: Connection) -> Access:
    """The logged-in caller and their grants (the *Metadata Custom Entities and Authorization*
    design), read through the request's connection."""
    return grant_store.access_for(conn, user.get_name(), is_instance_admin(user))


Caller = Annotated[Access, Depends(caller_access)]


def namespace_incarnation(namespace: str, conn: Connection, caller: Caller) -> datetime:
    """The path's namespace's current incarnation (its creation time), once it exists (404
    otherwise). Writes pass it on to the race guard (``warehouse.db.namespace_guard``): a namespace
    deleted, or deleted and re-created, after this check refuses the write. A caller who holds
    nothing in the namespace is refused first, the same way whether or not it exists (no
    existence oracle: ``Access.require_namespace``)."""
    caller.require_namespace(namespace)
    born = namespace_guard.incarnation(conn, namespace)
    if born is None:
        raise NotFoundError(f"namespace {namespace!r} not found")
    return born


Incarnation = Annotated[datetime, Depends(namespace_incarnation)]


def existing_namespace(namespace: str, born: Incarnation) -> str:
    """The path's namespace, once it exists (404 otherwise)."""
    return namespace


Namespace = Annotated[str, Depends(existing_namespace)]

TIME = "epoch seconds, now, now-30m, now-6h, now-7d"
TimeWindow = tuple[datetime, datetime]


def time_window(start: Annotated[str, Query(description=TIME)] = "now-7d",
                end: Annotated[str, Query(description=TIME)] = "now") -> TimeWindow:
    """[start, end), by default the last seven days."""
    return parse_window(start, end)


def history_window(start: Annotated[str, Query(description=TIME)] = "0",
                   end: Annotated[str, Query(description=TIME)] = "now") -> TimeWindow:
    """[start, end), by default all time."""
    return parse_window(start, end)


def lineage_window(start: Annotated[str | None, Query(description=TIME + "; default now-7d")] = None,
                   end: Annotated[str | None, Query(description=TIME + "; default now")] = None,
                   at: Annotated[str | None, Query(description="lineage as it stood at this time (" + TIME + "): "
                                                               "the window of `lookback` ending then")] = None,
                   lookback: Annotated[str | None, Query(description="with at: the window's length, <n><s|m|h|d>; "
                                                                     "default 7d")] = None) -> TimeWindow:
    """[start, end), by default the last seven days; or, with ``at``, the ``lookback`` before it."""
    if at is None:
        if lookback is not None:
            raise InvalidTimeError("lookback is the length of the window before at: give at too")
        return parse_window(start or "now-7d", end or "now")
    if start is not None or end is not None:
        raise InvalidTimeError("give at (with lookback) or start and end, not both")
    return window_at(at, lookback)


Window = Annotated[TimeWindow, Depends(time_window)]
BaseStart = Annotated[str | None, Query(alias="baseStart", description="a diff's base window's start; default: the "
                                                                       "window's length before baseEnd")]
BaseEnd = Annotated[str | None, Query(alias="baseEnd", description="a diff's base window's end; default: the "
                                                                   "window's start (or baseStart plus its length)")]
Changed = Annotated[bool, Query(description="true: only what was added or removed (and what joins it)")]
LineageWindow = Annotated[TimeWindow, Depends(lineage_window)]
HistoryWindow = Annotated[TimeWindow, Depends(history_window)]


def seconds(window: TimeWindow) -> tuple[int, int]:
    """The window in epoch seconds, the API's time unit."""
    return int(window[0].timestamp()), int(window[1].timestamp())


def airflow_api(request: Request) -> AirflowApi:
    """Airflow's REST API as the caller: with their own token (header or the UI's cookie)."""
    return AirflowApi.for_request(request, request.app.state.settings.airflow_api_url)


Airflow = Annotated[AirflowApi, Depends(airflow_api)]


def readable_program(caller: Access) -> Callable[[Mapping[str, Any]], bool]:
    """Whether ``caller`` may read a program given as ``{namespace, application, type, program}``."""
    return lambda program: caller.allows(program_entity(program["namespace"], program["application"],
                                                        program["type"], program["program"]), Privilege.READ)


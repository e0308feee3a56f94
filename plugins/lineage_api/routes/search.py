"""Metadata search and suggest (seed 001 "Search", Interactions 1 and 2), in one namespace or
across all (``/v3/metadata/...``). The query language is ``lineage.search_query``'s."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query

from lineage.authorization import Access
from lineage.errors import InvalidSearchError
from lineage.metadata_values import check_scope
from lineage.search_query import parse_query
from lineage_api.auth import Caller
from lineage_api.routes.lineage import namespace_connection
from warehouse import metadata_search

router = APIRouter()
MAX_LIMIT = 1000
MAX_OFFSET = 100_000

Targets = Annotated[list[str], Query(description="entity types: dataset, stream, app, program, field, file, "
                                                 "partition, program_run, external (repeat or comma-separate)")]


def _targets(values: list[str]) -> list[str]:
    targets = [part.strip().lower() for value in values for part in value.split(",") if part.strip()]
    unknown = sorted(set(targets) - set(metadata_search.TARGETS))
    if unknown:
        raise InvalidSearchError(f"unknown target {', '.join(map(repr, unknown))}; "
                                 f"use {', '.join(sorted(metadata_search.TARGETS))}")
    return targets


def _search(namespace: str | None, query: str, target: list[str], scope: str | None, limit: int,
            offset: int, caller: Access) -> dict[str, Any]:
    terms = parse_query(query)
    if not 1 <= limit <= MAX_LIMIT or not 0 <= offset <= MAX_OFFSET:
        raise HTTPException(400, f"limit must be 1-{MAX_LIMIT} and offset 0-{MAX_OFFSET}")
    targets, checked_scope = _targets(target), check_scope(scope)
    with namespace_connection(namespace) as conn:
        found = metadata_search.search(conn, terms, namespace=namespace, targets=targets, scope=checked_scope,
                                       limit=limit, offset=offset, readable=caller.readable())
    return {"query": query, "terms": [term.render() for term in terms], **found}


def _suggest(namespace: str | None, prefix: str, limit: int, caller: Access) -> dict[str, Any]:
    if not 1 <= limit <= 100:
        raise HTTPException(400, "limit must be 1-100")
    if len(prefix) > 200:
        raise HTTPException(400, "a prefix has at most 200 characters")
    with namespace_connection(namespace) as conn:
        found = metadata_search.suggest(conn, prefix, namespace=namespace, limit=limit, readable=caller.readable())
    return {"prefix": prefix, "suggestions": found}


@router.get("/v3/namespaces/{namespace}/metadata/search")
def search(namespace: str, query: str, caller: Caller, target: Targets = [],  # noqa: B006
           scope: str | None = None, limit: int = 20, offset: int = 0) -> dict[str, Any]:
    """Entities of the namespace matching ``query``, best first, with what matched and the total
    (only what the caller may read)."""
    return _search(namespace, query, target, scope, limit, offset, caller)


@router.get("/v3/metadata/search")
def search_everywhere(query: str, caller: Caller, target: Targets = [],  # noqa: B006
                      scope: str | None = None, limit: int = 20, offset: int = 0) -> dict[str, Any]:
    """The same over every namespace and external entities."""
    return _search(None, query, target, scope, limit, offset, caller)


@router.get("/v3/namespaces/{namespace}/metadata/suggest")
def suggest(namespace: str, caller: Caller, prefix: str = "", limit: int = 10) -> dict[str, Any]:
    """Completions of ``prefix``: keys (``owner:``) then values; after ``key:``, that key's values
    (from what the caller may read)."""
    return _suggest(namespace, prefix, limit, caller)


@router.get("/v3/metadata/suggest")
def suggest_everywhere(caller: Caller, prefix: str = "", limit: int = 10) -> dict[str, Any]:
    return _suggest(None, prefix, limit, caller)

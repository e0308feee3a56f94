"""Metadata search and suggest ("Search", Interactions 1 and 2 of the *Metadata and Data
Discovery* design), in one namespace or across all (``/v3/metadata/...``). The query language
is ``warehouse.service.search_query``'s."""

from __future__ import annotations

from typing import Annotated, Any

import psycopg
from fastapi import APIRouter, Query

from lineage.errors import InvalidSearchError
from lineage.limits import limits, setting
from lineage.model.metadata_values import check_scope
from lineage_api.deps import Caller, Connection, Namespace
from lineage_api.http_errors import answers
from lineage_api.links import details_links
from lineage_api.models.search import SearchAnswer, SuggestAnswer
from warehouse.db import metadata_search
from warehouse.service.authorization import Access
from warehouse.service.search_query import parse_query

router = APIRouter()
MAX_OFFSET = 100_000
MAX_SUGGESTIONS = 100
MAX_PREFIX_LENGTH = 200

Targets = Annotated[list[str], Query(description="entity types: dataset, stream, app, program, field, file, "
                                                 "partition, program_run, external (repeat or comma-separate)")]


def _targets(values: list[str]) -> list[str]:
    targets = [part.strip().lower() for value in values for part in value.split(",") if part.strip()]
    unknown = sorted(set(targets) - set(metadata_search.TARGETS))
    if unknown:
        raise InvalidSearchError(f"unknown target {', '.join(map(repr, unknown))}; "
                                 f"use {', '.join(sorted(metadata_search.TARGETS))}")
    return targets


def _search(conn: psycopg.Connection, namespace: str | None, query: str, target: list[str], scope: str | None,
            limit: int, offset: int, caller: Access) -> dict[str, Any]:
    terms = parse_query(query)
    page = limits().page_size
    if not 1 <= limit <= page or not 0 <= offset <= MAX_OFFSET:
        raise InvalidSearchError(f"limit must be 1-{page} ({setting('page_size')}) and offset 0-{MAX_OFFSET}")
    found = metadata_search.search(conn, terms, namespace=namespace, targets=_targets(target),
                                   scope=check_scope(scope), limit=limit, offset=offset, readable=caller.readable())
    for result in found["results"]:
        result["links"] = details_links(result["entity"]["type"], result["entity"]["details"])
    return {"query": query, "terms": [term.render() for term in terms], **found}


def _suggest(conn: psycopg.Connection, namespace: str | None, prefix: str, limit: int,
             caller: Access) -> dict[str, Any]:
    if not 1 <= limit <= MAX_SUGGESTIONS:
        raise InvalidSearchError(f"limit must be 1-{MAX_SUGGESTIONS}")
    if len(prefix) > MAX_PREFIX_LENGTH:
        raise InvalidSearchError(f"a prefix has at most {MAX_PREFIX_LENGTH} characters")
    found = metadata_search.suggest(conn, prefix, namespace=namespace, limit=limit, readable=caller.readable())
    return {"prefix": prefix, "suggestions": found}


@router.get("/v3/namespaces/{namespace}/metadata/search", response_model=SearchAnswer, responses=answers(404))
def search(namespace: Namespace, query: str, caller: Caller, conn: Connection, target: Targets = [],  # noqa: B006
           scope: str | None = None, limit: int = 20, offset: int = 0) -> dict[str, Any]:
    """Entities of the namespace matching ``query``, best first, with what matched, the total
    and each entity's links (only what the caller may read)."""
    return _search(conn, namespace, query, target, scope, limit, offset, caller)


@router.get("/v3/metadata/search", response_model=SearchAnswer)
def search_everywhere(query: str, caller: Caller, conn: Connection, target: Targets = [],  # noqa: B006
                      scope: str | None = None, limit: int = 20, offset: int = 0) -> dict[str, Any]:
    """The same over every namespace and external entities."""
    return _search(conn, None, query, target, scope, limit, offset, caller)


@router.get("/v3/namespaces/{namespace}/metadata/suggest", response_model=SuggestAnswer, responses=answers(404))
def suggest(namespace: Namespace, caller: Caller, conn: Connection, prefix: str = "",
            limit: int = 10) -> dict[str, Any]:
    """Completions of ``prefix``: keys (``owner:``) then values; after ``key:``, that key's values
    (from what the caller may read)."""
    return _suggest(conn, namespace, prefix, limit, caller)


@router.get("/v3/metadata/suggest", response_model=SuggestAnswer)
def suggest_everywhere(caller: Caller, conn: Connection, prefix: str = "", limit: int = 10) -> dict[str, Any]:
    """The same over every namespace and external entities."""
    return _suggest(conn, None, prefix, limit, caller)

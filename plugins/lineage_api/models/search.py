"""Search and suggest answers."""

from __future__ import annotations

from typing import Literal

from lineage_api.models.base import Body, Links
from lineage_api.models.metadata import EntityRef, Scope


class SearchMatch(Body):
    scope: Scope
    kind: str
    key: str | None
    value: str


class SearchScore(Body):
    matchedTerms: int
    nameMatches: int  # terms equal to one of the entity's names (its name, an OpenLineage name or its last segments)
    exactMatches: int


class SearchResult(Body):
    entity: EntityRef
    matches: list[SearchMatch]
    score: SearchScore
    links: Links


class SearchAnswer(Body):
    query: str
    terms: list[str]
    total: int
    limit: int
    offset: int
    results: list[SearchResult]


class Suggestion(Body):
    type: Literal["key", "value"]
    key: str | None
    text: str


class SuggestAnswer(Body):
    prefix: str
    suggestions: list[Suggestion]

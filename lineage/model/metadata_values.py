"""Tags and properties: what a value may be, and the diff between two states (the *Metadata and
Data Discovery* design)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal, TypedDict

from lineage.errors import InvalidMetadataError
from lineage.limits import check_count, limits, setting

MAX_PROPERTY_KEY_LENGTH = 256
Scope = Literal["USER", "SYSTEM"]  # USER: written through the API; SYSTEM: by programs and the system
SCOPES: tuple[Scope, ...] = ("USER", "SYSTEM")


class MetadataState(TypedDict):
    """An entity's tags and properties in one scope (or what a change added or deleted of them),
    as stored in change records and answered: tags sorted, properties by key."""

    tags: list[str]
    properties: dict[str, str]


def _check_text(what: str, text: Any, limit: int, named: str = "") -> str:
    if not isinstance(text, str):
        raise InvalidMetadataError(f"{what} must be a string, got {type(text).__name__}")
    if not text.strip():
        raise InvalidMetadataError(f"{what} must not be empty")
    if len(text) > limit:
        raise InvalidMetadataError(f"{what} {text[:40]!r}... is {len(text)} characters, over the limit of {limit}"
                                   + (f" ({named})" if named else ""))
    if "\x00" in text:
        raise InvalidMetadataError(f"{what} {text[:40]!r} contains a NUL character")
    return text


def check_tags(tags: Any) -> list[str]:
    """Tags of one request: a list of at most ``tags_per_request`` short strings."""
    if not isinstance(tags, list):
        raise InvalidMetadataError("tags must be a JSON list of strings")
    check_count("tags_per_request", "tags in one request", len(tags))
    length = limits().tag_length
    return [_check_text("tag", tag, length, setting("tag_length")) for tag in tags]


def check_properties(properties: Any) -> dict[str, str]:
    if not isinstance(properties, dict):
        raise InvalidMetadataError("properties must be a JSON object of string values")
    check_count("properties_per_request", "properties in one request", len(properties))
    length = limits().property_value_length
    checked = {}
    for key, value in properties.items():
        _check_text("property key", key, MAX_PROPERTY_KEY_LENGTH)
        if not isinstance(value, str):
            raise InvalidMetadataError(f"property {key!r} must have a string value, got {type(value).__name__}")
        if len(value) > length:
            raise InvalidMetadataError(f"property {key!r}: the value is {len(value)} characters, "
                                       f"over the limit of {length} ({setting('property_value_length')})")
        if "\x00" in value:
            raise InvalidMetadataError(f"property {key!r}: the value contains a NUL character")
        checked[key] = value
    return checked


def check_scope(scope: str | None) -> str | None:
    if scope is None:
        return None
    if scope.upper() not in SCOPES:
        raise InvalidMetadataError(f"scope {scope!r} is not one of {', '.join(SCOPES)}")
    return scope.upper()


def check_entity_state(updated: Mapping[str, Any]) -> None:
    """What one entity may hold in one scope, after a change."""
    check_count("tags_per_entity", "tags of the entity in this scope", len(updated["tags"]))
    check_count("properties_per_entity", "properties of the entity in this scope", len(updated["properties"]))


def state(tags: Iterable[str], properties: Mapping[str, str]) -> MetadataState:
    return {"tags": sorted(set(tags)), "properties": dict(sorted(properties.items()))}


def diff(previous: MetadataState, updated: MetadataState) -> tuple[MetadataState, MetadataState]:
    """(additions, deletions): tags added/removed; properties added or changed (new value) and
    removed or changed (old value)."""
    before_tags, after_tags = set(previous["tags"]), set(updated["tags"])
    before, after = previous["properties"], updated["properties"]
    additions: MetadataState = {"tags": sorted(after_tags - before_tags),
                                "properties": {k: v for k, v in sorted(after.items()) if before.get(k) != v}}
    deletions: MetadataState = {"tags": sorted(before_tags - after_tags),
                                "properties": {k: v for k, v in sorted(before.items()) if after.get(k) != v}}
    return additions, deletions

"""Namespace names (the *System Applications (CDAP 6.0)* design): the first part of every key.
The rule is the raw event schema's (``definitions.namespace``), so the API and the event format
accept the same names."""

from __future__ import annotations

import re
from functools import cache

from lineage.errors import InvalidEntityError
from lineage.schemas import schema

MAX_DESCRIPTION_LENGTH = 1024
DEFAULT_NAMESPACE = "default"  # exists from the start (migration 0001) and cannot be deleted


@cache
def _pattern() -> re.Pattern[str]:
    return re.compile(schema()["definitions"]["namespace"]["pattern"])


def check_namespace(name: str) -> str:
    """``name`` when it is a valid namespace name; InvalidEntityError (a 400) otherwise."""
    if not _pattern().match(name):
        raise InvalidEntityError(f"namespace {name[:80]!r} must be 1-64 letters, digits or '_'")
    return name


def check_description(description: object) -> str:
    if not isinstance(description, str) or len(description) > MAX_DESCRIPTION_LENGTH or "\x00" in description:
        raise InvalidEntityError(f"a namespace description is text of at most {MAX_DESCRIPTION_LENGTH} characters")
    return description

"""What one request, one entity or one walk may hold: each limit a setting (``LINEAGE_LIMIT_*``)
with a documented default, and every refusal names the setting, so an operator knows what to
raise and a caller what it broke.

Read from the environment once per process (``limits()``); ``reset()`` reads it again.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields
from datetime import datetime, timedelta

from lineage.errors import InvalidLineageRequestError, InvalidMetadataError, SettingsError

PREFIX = "LINEAGE_LIMIT_"


@dataclass(frozen=True)
class Limits:
    tags_per_request: int = 100
    properties_per_request: int = 100
    tags_per_entity: int = 1_000  # in one scope
    properties_per_entity: int = 1_000  # in one scope
    tag_length: int = 256
    property_value_length: int = 10_000
    request_mb: int = 8  # any API request body but OpenLineage ingest (LINEAGE_INGEST_MAX_REQUEST_MB)
    levels: int = 100  # lineage walks: levels away from the start
    window_days: int = 36_600  # lineage walks: the longest [start, end) window (start=0 passes)
    page_size: int = 1_000  # search results per page
    run_lineage_runs: int = 1_000  # run-level lineage: runs in one answer (more: truncated)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Limits:
        env = os.environ if environ is None else environ
        values = {}
        for item in fields(cls):
            name = setting(item.name)
            raw = env.get(name)
            if raw is None or raw == "":
                continue
            try:
                value = int(raw)
            except ValueError:
                raise SettingsError(f"{name} must be a whole number, got {raw!r}") from None
            if value < 1:
                raise SettingsError(f"{name} must be at least 1, got {value}")
            values[item.name] = value
        return cls(**values)


def setting(name: str) -> str:
    """``tags_per_request`` -> ``LINEAGE_LIMIT_TAGS_PER_REQUEST``."""
    return PREFIX + name.upper()


_current: Limits | None = None


def limits() -> Limits:
    global _current
    if _current is None:
        _current = Limits.from_env()
    return _current


def reset() -> None:
    global _current
    _current = None


def over(name: str, what: str, value: int) -> str:
    """The refusal: what broke which limit, naming its setting."""
    return f"{what}: {value} is over the limit of {getattr(limits(), name)} ({setting(name)})"


def check_count(name: str, what: str, count: int) -> None:
    if count > getattr(limits(), name):
        raise InvalidMetadataError(over(name, what, count))


def check_levels(levels: int) -> int:
    if not 1 <= levels <= limits().levels:
        raise InvalidLineageRequestError(
            f"levels must be between 1 and {limits().levels} ({setting('levels')}), got {levels}")
    return levels


def check_window(start: datetime, end: datetime) -> None:
    """A walk's window: at most ``window_days`` long."""
    if end - start > timedelta(days=limits().window_days):
        raise InvalidLineageRequestError(
            f"the window from {start.isoformat()} to {end.isoformat()} is {(end - start).days} days, over the limit "
            f"of {limits().window_days} ({setting('window_days')})")

"""Times in API queries: epoch seconds, ``now``, or ``now-<n><unit>`` with s, m, h, d."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import overload

from lineage.errors import InvalidTimeError

_RELATIVE = re.compile(r"^now(?:-(\d{1,9})([smhd]))?$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}


def parse_timespec(text: str, *, now: datetime | None = None, name: str = "time") -> datetime:
    """The UTC datetime ``text`` names."""
    value = text.strip()
    moment = now or datetime.now(UTC)
    match = _RELATIVE.match(value)
    try:
        if match:
            amount, unit = match.groups()
            return moment - timedelta(**{_UNITS[unit]: int(amount)}) if amount else moment
        if re.fullmatch(r"\d{1,12}", value):
            return datetime.fromtimestamp(int(value), tz=UTC)
    except (OverflowError, ValueError, OSError) as exc:  # beyond the years 1-9999 a datetime holds
        raise InvalidTimeError(f"{name} {text!r} is out of range: times run from year 1 to year 9999") from exc
    raise InvalidTimeError(f"{name} {text!r} is not epoch seconds, 'now' or 'now-<n><s|m|h|d>' (e.g. now-7d)")


def parse_window(start: str, end: str, *, now: datetime | None = None) -> tuple[datetime, datetime]:
    """A [start, end) window; start after end is an error."""
    moment = now or datetime.now(UTC)
    window = (parse_timespec(start, now=moment, name="start"), parse_timespec(end, now=moment, name="end"))
    if window[0] > window[1]:
        raise InvalidTimeError(f"start {start!r} is after end {end!r}")
    return window


def visible_window(window: tuple[datetime, datetime], since: datetime | None) -> tuple[datetime, datetime]:
    """``window`` without what lies before ``since`` (a re-created namespace's creation time
    while its old records await cleanup; the race guard of the *System Applications (CDAP 6.0)* design)."""
    if since is None or since <= window[0]:
        return window
    start = min(since, window[1])
    return start, window[1]


@overload
def epoch_seconds(moment: datetime) -> int: ...
@overload
def epoch_seconds(moment: datetime | None) -> int | None: ...
def epoch_seconds(moment: datetime | None) -> int | None:
    """A time as the API answers it: whole epoch seconds (None stays None)."""
    return None if moment is None else int(moment.timestamp())

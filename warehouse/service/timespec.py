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


def parse_window(start: str, end: str, *, now: datetime | None = None,
                 names: tuple[str, str] = ("start", "end")) -> tuple[datetime, datetime]:
    """A [start, end) window; start after end is an error (``names``: the parameters, for it)."""
    moment = now or datetime.now(UTC)
    window = (parse_timespec(start, now=moment, name=names[0]), parse_timespec(end, now=moment, name=names[1]))
    if window[0] > window[1]:
        raise InvalidTimeError(f"{names[0]} {start!r} is after {names[1]} {end!r}")
    return window


_DURATION = re.compile(r"^(\d{1,9})([smhd])$")


def parse_duration(text: str, *, name: str = "lookback") -> timedelta:
    """A length of time: ``<n><s|m|h|d>`` (``7d``, ``6h``, ``30m``)."""
    match = _DURATION.match(text.strip())
    if not match:
        raise InvalidTimeError(f"{name} {text!r} is not a duration <n><s|m|h|d> (e.g. 7d)")
    amount, unit = match.groups()
    return timedelta(**{_UNITS[unit]: int(amount)})  # nine digits of days fit a timedelta


def window_at(at: str, lookback: str | None, *, now: datetime | None = None) -> tuple[datetime, datetime]:
    """The window ending at ``at``, ``lookback`` long (default 7 days): lineage as it stood at that
    moment, from the runs that had run in the lookback before it."""
    moment = parse_timespec(at, now=now, name="at")
    length = parse_duration(lookback) if lookback is not None else timedelta(days=7)
    try:
        return moment - length, moment
    except OverflowError as exc:
        raise InvalidTimeError(f"lookback {lookback!r} before at {at!r} is before year 1") from exc


def base_window(window: tuple[datetime, datetime], base_start: str | None, base_end: str | None, *,
                now: datetime | None = None) -> tuple[datetime, datetime]:
    """The window a diff compares ``window`` with: as given, or of the same length just before
    ``window`` (one bound given: the other is the window's length away from it)."""
    moment = now or datetime.now(UTC)
    length = window[1] - window[0]
    if base_start is not None and base_end is not None:
        return parse_window(base_start, base_end, now=moment, names=("baseStart", "baseEnd"))
    if base_start is not None:
        start = parse_timespec(base_start, now=moment, name="baseStart")
        return start, start + length
    end = window[0] if base_end is None else parse_timespec(base_end, now=moment, name="baseEnd")
    return end - length, end


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

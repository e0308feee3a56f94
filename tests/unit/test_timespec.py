from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from warehouse.service.timespec import InvalidTimeError, parse_timespec, parse_window

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("now", NOW),
        ("now-30s", NOW - timedelta(seconds=30)),
        ("now-5m", NOW - timedelta(minutes=5)),
        ("now-6h", NOW - timedelta(hours=6)),
        ("now-7d", NOW - timedelta(days=7)),
        ("1441310434", datetime(2015, 9, 3, 20, 0, 34, tzinfo=UTC)),
        ("0", datetime(1970, 1, 1, tzinfo=UTC)),
    ],
)
def test_timespec_forms(text: str, expected: datetime) -> None:
    assert parse_timespec(text, now=NOW) == expected


@pytest.mark.parametrize("text", ["yesterday", "now+5m", "now-5w", "now-", "-5", "1.5", "", "now-5m'; drop"])
def test_bad_timespecs_name_the_value(text: str) -> None:
    expected = f"{text!r} is not epoch seconds, 'now' or 'now-<n><s|m|h|d>'"
    with pytest.raises(InvalidTimeError, match=re.escape(expected)):
        parse_timespec(text, now=NOW)


def test_window_rejects_start_after_end() -> None:
    assert parse_window("now-1h", "now", now=NOW) == (NOW - timedelta(hours=1), NOW)
    with pytest.raises(InvalidTimeError, match="start 'now' is after end 'now-1h'"):
        parse_window("now", "now-1h", now=NOW)


@pytest.mark.parametrize("text", ["now-999999999d", "999999999999"])
def test_times_out_of_a_datetimes_range_are_bad_input_naming_the_range(text: str) -> None:
    with pytest.raises(InvalidTimeError, match="out of range: times run from year 1 to year 9999"):
        parse_window(text, "now")


def test_lineage_at_a_moment_is_the_lookback_window_ending_then() -> None:
    from warehouse.service.timespec import parse_duration, window_at

    now = datetime(2026, 11, 27, 12, tzinfo=UTC)
    assert window_at("now-1d", None, now=now) == (now - timedelta(days=8), now - timedelta(days=1))
    assert window_at("1795000000", "6h", now=now) == (
        datetime.fromtimestamp(1795000000 - 6 * 3600, UTC), datetime.fromtimestamp(1795000000, UTC))
    assert parse_duration(" 30m ") == timedelta(minutes=30)
    for bad, message in (("7 days", "lookback '7 days' is not a duration"), ("-1d", "is not a duration")):
        with pytest.raises(InvalidTimeError, match=message):
            parse_duration(bad)
    with pytest.raises(InvalidTimeError, match="before year 1"):
        window_at("0", "999999d", now=now)

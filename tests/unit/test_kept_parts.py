"""Kept OpenLineage events in parts and back (``lineage.openlineage.kept_parts``), pure."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from lineage.openlineage import kept_parts

FIXTURES = Path(__file__).parents[1] / "fixtures" / "openlineage"
EVENTS = [event for path in sorted(FIXTURES.glob("*.json"))
          for event in (lambda loaded: loaded if isinstance(loaded, list) else [loaded])(
              json.loads(path.read_text("utf-8")))]


class Reads(dict):  # type: ignore[type-arg]
    """Parts by id, remembering which ids were read."""

    def __init__(self, parts: dict) -> None:  # type: ignore[type-arg]
        super().__init__(parts)
        self.keys_read: set[str] = set()

    def __getitem__(self, key: str) -> object:
        self.keys_read.add(key)
        return super().__getitem__(key)


@pytest.mark.parametrize("event", EVENTS, ids=lambda event: str(event.get("eventType")))
def test_every_recorded_event_comes_back_exactly_from_its_parts(event: dict) -> None:  # type: ignore[type-arg]
    skeleton, parts = kept_parts.split("default", event)
    read = Reads(parts)
    assert kept_parts.assembled(skeleton, read) == event
    assert read.keys_read == set(parts)  # every part stored is one the event needs back
    assert set(kept_parts.skeleton_part_ids(skeleton)) <= read.keys_read


def test_what_events_repeat_is_one_part_per_namespace() -> None:
    event = next(e for e in EVENTS if e.get("inputs") and e.get("run", {}).get("facets"))
    later = copy.deepcopy(event)
    later["eventTime"], later["eventType"] = "2030-01-01T00:00:00Z", "COMPLETE"
    first, first_parts = kept_parts.split("default", event)
    second, second_parts = kept_parts.split("default", later)
    assert first[kept_parts.BODY] == second[kept_parts.BODY] and first_parts == second_parts
    _, elsewhere_parts = kept_parts.split("finance", event)
    assert not set(elsewhere_parts) & set(first_parts)  # scoped by the run's namespace
    assert set(first) <= {"eventType", "eventTime", "run", kept_parts.BODY}


def test_an_event_kept_whole_comes_back_as_it_is_and_names_no_part() -> None:
    event = next(e for e in EVENTS if e.get("run", {}).get("facets"))
    assert kept_parts.assembled(event, {}) == event
    assert list(kept_parts.skeleton_part_ids(event)) == []


def test_an_integer_past_64_bits_has_an_id_too() -> None:
    """PostgreSQL gives a large number back as an integer orjson cannot write (the backfill of
    events kept whole reads them so)."""
    big = {"stats": {"bytes": 10**25}}
    assert kept_parts.part_id("default", big) == kept_parts.part_id("default", {"stats": {"bytes": 10**25}})
    assert kept_parts.part_id("default", big) != kept_parts.part_id("default", {"stats": {"bytes": 10**24}})


AT = datetime(2026, 12, 5, 2, 0, tzinfo=UTC)


@pytest.mark.parametrize("event", [e for e in EVENTS if "run" in e], ids=lambda event: str(event.get("eventType")))
def test_what_the_row_holds_leaves_the_skeleton_and_comes_back(event: dict) -> None:  # type: ignore[type-arg]
    """The row's run id and time, when the event says them as the row would, are not kept twice;
    given back, the event is the same."""
    event = {**copy.deepcopy(event), "eventTime": kept_parts.rendered_time(AT)}
    run_id = event["run"]["runId"]
    skeleton, parts = kept_parts.split("default", event, run_id=run_id, event_time=AT)
    assert "eventTime" not in skeleton and "runId" not in skeleton["run"]
    assert kept_parts.assembled(skeleton, parts, run_id=run_id, event_time=AT) == event


@pytest.mark.parametrize("sent, row_time", [
    ("2026-12-05T02:00:00Z", AT),  # the same moment, another text (Java's Instant): kept as it came
    ("2026-12-05T02:00:00.000+00:00", AT),
    ("2026-12-05T03:00:00+01:00", AT),
    ("2026-12-05T02:00:00.123456+00:00", AT.replace(microsecond=123456) + timedelta(microseconds=1)),
    ("not a time at all", AT),
])
def test_any_other_time_text_stays_as_it_came(sent: str, row_time: datetime) -> None:
    event = {**copy.deepcopy(EVENTS[0]), "eventTime": sent}
    skeleton, parts = kept_parts.split("default", event, run_id="another run", event_time=row_time)
    assert skeleton["eventTime"] == sent
    assert skeleton["run"]["runId"] == event["run"]["runId"]  # not the row's run id: kept
    assert kept_parts.assembled(skeleton, parts, run_id="another run", event_time=row_time) == event


def test_the_rendered_time_is_pythons_isoformat_in_utc() -> None:
    assert kept_parts.rendered_time(AT) == "2026-12-05T02:00:00+00:00"
    assert kept_parts.rendered_time(AT.replace(microsecond=5)) == "2026-12-05T02:00:00.000005+00:00"
    assert kept_parts.rendered_time(AT.astimezone(timezone(timedelta(hours=-5)))) == "2026-12-05T02:00:00+00:00"


def test_an_event_kept_whole_is_not_slimmed() -> None:
    event = {**copy.deepcopy(EVENTS[0]), "eventTime": kept_parts.rendered_time(AT)}
    assert kept_parts.slimmed(event, run_id=event["run"]["runId"], event_time=AT) == event

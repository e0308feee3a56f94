"""Two windows' dataset lineage compared (pure core), over hand-written relations."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from lineage.errors import InvalidTimeError
from warehouse.service.lineage_diff import compare, diff_response
from warehouse.service.lineage_graph import DataRef, ProgramRef, Relation, RunSpan
from warehouse.service.timespec import base_window

ORDERS, TOTALS, REPORT = (DataRef("default", "dataset", name) for name in ("orders", "totals", "report"))
LOAD, SUM, AUDIT = (ProgramRef("default", "shop", "spark", name) for name in ("load", "sum", "audit"))
WINDOWS = {"start": 200, "end": 300, "baseStart": 100, "baseEnd": 200, "levels": 3}


def span(count: int, first: int, last: int) -> RunSpan:
    return RunSpan(count, first, last, f"run-{last}")


# The base: load reads orders and writes totals, sum reads totals and writes report.
# The window: load still does; sum stopped writing report; audit started reading totals.
BASE = [Relation(ORDERS, LOAD, "read", (), (), span(3, 110, 190)),
        Relation(TOTALS, LOAD, "write", (), (), span(3, 110, 190)),
        Relation(TOTALS, SUM, "read", (), (), span(1, 150, 150)),
        Relation(REPORT, SUM, "write", (), (), span(1, 150, 150))]
CURRENT = [Relation(ORDERS, LOAD, "read", (), (), span(2, 210, 290)),
           Relation(TOTALS, LOAD, "write", (), (), span(2, 210, 290)),
           Relation(TOTALS, SUM, "read", (), (), span(1, 250, 250)),
           Relation(TOTALS, AUDIT, "read", (), (), span(4, 220, 280))]


def changes_by_edge(answer: dict) -> dict[tuple[str, str, str], str]:
    return {(r["data"], r["program"], r["access"]): r["change"] for r in answer["relations"]}


def test_each_relation_and_node_is_added_removed_or_unchanged_with_runs_on_each_side() -> None:
    answer = diff_response(WINDOWS, compare(CURRENT, BASE))
    assert changes_by_edge(answer) == {
        ("dataset.default.orders", "spark.default.shop.load", "read"): "unchanged",
        ("dataset.default.report", "spark.default.shop.sum", "write"): "removed",
        ("dataset.default.totals", "spark.default.shop.audit", "read"): "added",
        ("dataset.default.totals", "spark.default.shop.load", "write"): "unchanged",
        ("dataset.default.totals", "spark.default.shop.sum", "read"): "unchanged",
    }
    audit = next(r for r in answer["relations"] if r["program"] == "spark.default.shop.audit")
    assert audit["current"] == {"runCount": 4, "firstRun": 220, "lastRun": 280, "latestRun": "run-280"}
    assert audit["base"] is None
    load = next(r for r in answer["relations"] if r["access"] == "read" and r["program"].endswith("load"))
    assert (load["current"]["runCount"], load["base"]["runCount"]) == (2, 3)
    assert {k: v["change"] for k, v in answer["programs"].items()} == {
        "spark.default.shop.audit": "added", "spark.default.shop.load": "unchanged",
        "spark.default.shop.sum": "unchanged"}
    assert {k: v["change"] for k, v in answer["data"].items()} == {
        "dataset.default.orders": "unchanged", "dataset.default.report": "removed",
        "dataset.default.totals": "unchanged"}
    assert answer["summary"] == {
        "relations": {"added": 1, "removed": 1, "unchanged": 3},
        "programs": {"added": 1, "removed": 0, "unchanged": 2},
        "data": {"added": 0, "removed": 1, "unchanged": 2}, "schemas": 0}
    assert (answer["start"], answer["baseEnd"], answer["levels"]) == (200, 200, 3)


def test_changed_only_keeps_added_and_removed_and_the_nodes_they_join() -> None:
    answer = diff_response(WINDOWS, compare(CURRENT, BASE), changed_only=True)
    assert set(changes_by_edge(answer).values()) == {"added", "removed"}
    # totals and sum are unchanged but joined by a changed relation; orders and load are not shown
    assert set(answer["data"]) == {"dataset.default.totals", "dataset.default.report"}
    assert set(answer["programs"]) == {"spark.default.shop.audit", "spark.default.shop.sum"}
    assert answer["summary"]["relations"] == {"added": 1, "removed": 1, "unchanged": 3}  # counts all


def test_identical_windows_change_nothing_and_empty_ones_compare_to_nothing() -> None:
    same = diff_response(WINDOWS, compare(CURRENT, CURRENT), changed_only=True)
    assert same["relations"] == [] and same["programs"] == {} and same["data"] == {}
    assert same["summary"]["relations"] == {"added": 0, "removed": 0, "unchanged": 4}
    gone = diff_response(WINDOWS, compare([], BASE))
    assert set(changes_by_edge(gone).values()) == {"removed"}
    assert all(r["current"] is None for r in gone["relations"])


def test_a_hidden_programs_runs_are_not_counted_on_either_side() -> None:
    hidden = ProgramRef("", "", "hidden", "1")
    answer = diff_response(WINDOWS, compare([Relation(TOTALS, hidden, "read", ())], []))
    [relation] = answer["relations"]
    assert relation["current"] == {"runCount": None, "firstRun": None, "lastRun": None, "latestRun": None}


NOW = datetime(2026, 11, 27, 12, tzinfo=UTC)
DAY = (NOW - timedelta(days=1), NOW)


@pytest.mark.parametrize(("base_start", "base_end", "expected"), [
    (None, None, (NOW - timedelta(days=2), NOW - timedelta(days=1))),
    ("now-8d", None, (NOW - timedelta(days=8), NOW - timedelta(days=7))),
    (None, "now-7d", (NOW - timedelta(days=8), NOW - timedelta(days=7))),
    ("now-30d", "now-2d", (NOW - timedelta(days=30), NOW - timedelta(days=2))),
])
def test_the_base_window_defaults_to_the_same_length_just_before(
        base_start: str | None, base_end: str | None, expected: tuple[datetime, datetime]) -> None:
    assert base_window(DAY, base_start, base_end, now=NOW) == expected


def test_a_bad_base_window_names_its_parameter() -> None:
    with pytest.raises(InvalidTimeError, match="baseStart 'now-1d' is after baseEnd 'now-2d'"):
        base_window(DAY, "now-1d", "now-2d", now=NOW)
    with pytest.raises(InvalidTimeError, match="baseEnd 'yesterday' is not epoch seconds"):
        base_window(DAY, None, "yesterday", now=NOW)


def test_a_schema_change_between_the_windows_names_its_fields() -> None:
    from lineage.model.dataset_schema import schema
    from warehouse.service.lineage_diff import schema_change

    v1 = schema([{"name": "id", "type": "long"}, {"name": "email", "type": "string"}])
    v2 = schema([{"name": "id", "type": "string"}, {"name": "country", "type": "string"}])
    change = schema_change((1, v1), (2, v2))
    assert change is not None
    assert (change["baseVersion"], change["currentVersion"]) == (1, 2)
    assert [f["name"] for f in change["added"]] == ["country"] and [f["name"] for f in change["removed"]] == ["email"]
    assert change["retyped"] == [{"name": "id", "before": "long", "after": "string"}]
    assert schema_change((2, v2), (2, v2)) is None and schema_change(None, None) is None
    first = schema_change(None, (1, v1))
    assert first is not None and [f["name"] for f in first["added"]] == ["id", "email"]
    answer = diff_response(WINDOWS, compare(CURRENT, BASE), changed_only=True,
                           schemas={"dataset.default.report": change, "dataset.default.orders": first})
    assert set(answer["schemas"]) == {"dataset.default.report"}  # orders is not shown with changed=true
    assert answer["summary"]["schemas"] == 2

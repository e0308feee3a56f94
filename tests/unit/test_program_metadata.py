"""Program-recorded metadata: what a change means, and the later-event-wins rule."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from lineage.model.dataset_schema import InvalidSchemaError, schema
from lineage.model.metadata_values import state
from lineage.model.program_metadata import ALL_KEYS, InvalidMetadataChangeError, MetadataChange, parse_change, resolve

T = datetime(2026, 11, 21, 5, tzinfo=UTC)
DATASET = [["namespace", "default"], ["dataset", "purchases"]]


def at(minutes: int) -> datetime:
    return T + timedelta(minutes=minutes)


def test_each_operation_parses_into_its_change() -> None:
    assert parse_change({"entity": DATASET, "operation": "add_properties", "properties": {"a": "1"}}).set_properties \
        == {"a": "1"}
    assert parse_change({"entity": DATASET, "operation": "add_tags", "tags": ["x"]}).add_tags == ("x",)
    assert parse_change({"entity": DATASET, "operation": "remove_properties", "keys": ["a"]}).remove_properties \
        == ("a",)
    assert parse_change({"entity": DATASET, "operation": "remove_tags"}).remove_tags is None  # all of them
    everything = parse_change({"entity": DATASET, "operation": "remove_all"})
    assert (everything.remove_properties, everything.remove_tags) == (None, None)
    described = parse_change({"entity": DATASET, "operation": "set_schema",
                              "schema": {"fields": [{"name": "id", "type": "long", "nullable": False}]}})
    assert described.set_properties == {"schema": '{"fields":[{"name":"id","type":"long","nullable":false}]}'}
    assert described.schema_source == "declared"
    observed = parse_change({"entity": DATASET, "operation": "observe_schema",
                             "schema": {"fields": [{"name": "id", "type": "long", "nullable": False}]}})
    assert (observed.set_properties, observed.schema_source) == (described.set_properties, "observed")


@pytest.mark.parametrize(("payload", "message"), [
    ({"entity": [["dataset", "x"], ["namespace", "default"]], "operation": "add_tags", "tags": ["a"]},
     "'namespace' must be the first key"),
    ({"entity": DATASET, "operation": "add_tags", "tags": [" "]}, "tag must not be empty"),
    ({"entity": DATASET, "operation": "add_properties", "properties": {"k": "v" * 10_001}}, "over the limit"),
    ({"entity": DATASET, "operation": "add_properties", "properties": {"schema": "{}"}}, "set_schema"),
    ({"entity": DATASET, "operation": "set_schema", "schema": {"fields": []}}, "at least one field"),
    ({"entity": DATASET, "operation": "set_schema",
      "schema": {"fields": [{"name": "a", "type": "int"}, {"name": "a", "type": "long"}]}}, "appears twice"),
    ({"entity": [["namespace", "default"]], "operation": "set_schema",
      "schema": {"fields": [{"name": "a", "type": "int"}]}}, "dataset or stream"),
    ({"entity": DATASET, "operation": "observe_schema", "schema": {"fields": []}}, "observe_schema: .*at least one"),
    ({"entity": [["namespace", "default"]], "operation": "observe_schema",
      "schema": {"fields": [{"name": "a", "type": "int"}]}}, "observe_schema applies to a dataset or stream"),
])
def test_malformed_changes_are_refused_with_the_reason(payload: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidMetadataChangeError, match=message):
        parse_change(payload)


def test_schema_fields_accept_pairs_mappings_and_refuse_bad_types() -> None:
    built = schema([("empName", "string"), {"name": "empId", "type": "long", "nullable": False}])
    assert [(f.name, f.type, f.nullable) for f in built.fields] == [("empName", "string", True),
                                                                    ("empId", "long", False)]
    with pytest.raises(InvalidSchemaError, match="needs a type"):
        schema([("x", "")])
    with pytest.raises(InvalidSchemaError, match="unknown keys"):
        schema([{"name": "x", "type": "int", "default": 1}])


def apply(events: list[tuple[datetime, MetadataChange]]) -> dict[str, Any]:
    """Apply events in the order given, as the store does: resolve, apply, move watermarks."""
    tags: set[str] = set()
    properties: dict[str, str] = {}
    marks: dict[tuple[str, str], datetime] = {}
    for moment, change in events:
        resolved = resolve(change, moment, state(tags, properties), marks)
        for key in resolved.remove_properties:
            properties.pop(key, None)
        tags -= set(resolved.remove_tags)
        properties.update(resolved.set_properties)
        tags |= set(resolved.add_tags)
        for key, value in resolved.watermarks.items():
            marks[key] = max(value, marks.get(key, value))
    return state(tags, properties)


def change(**parts: Any) -> MetadataChange:
    return MetadataChange(parse_change({"entity": DATASET, "operation": "add_tags", "tags": []}).entity, **parts)


EVENTS = [
    (at(1), change(set_properties={"owner": "a", "tier": "bronze"}, add_tags=("raw",))),
    (at(2), change(set_properties={"owner": "b"})),
    (at(3), change(remove_tags=None)),  # remove every tag
    (at(4), change(add_tags=("clean",), remove_properties=("tier",))),
    (at(5), change(set_properties={"tier": "gold"})),
]


def test_the_later_event_wins_by_event_time_in_every_arrival_order() -> None:
    expected = {"tags": ["clean"], "properties": {"owner": "b", "tier": "gold"}}
    assert apply(EVENTS) == expected
    for order in itertools.permutations(EVENTS):
        assert apply(list(order)) == expected, [moment.minute for moment, _ in order]


def test_an_older_removal_does_not_undo_a_newer_set() -> None:
    newer_set = (at(10), change(set_properties={"owner": "new"}, add_tags=("t",)))
    older_removal = (at(5), change(remove_properties=None, remove_tags=("t",)))
    assert apply([newer_set, older_removal]) == {"tags": ["t"], "properties": {"owner": "new"}}


def test_a_remove_all_leaves_watermarks_per_kind() -> None:
    resolved = resolve(change(remove_properties=None, remove_tags=None), at(3),
                       {"tags": ["a"], "properties": {"k": "v"}}, {("tag", "a"): at(4)})
    assert resolved.remove_tags == [] and resolved.remove_properties == ["k"]
    assert resolved.watermarks == {("property", ALL_KEYS): at(3), ("tag", ALL_KEYS): at(3)}


def test_two_values_set_at_one_moment_give_the_greater_in_every_arrival_order() -> None:
    """Before: of two events of the same time setting a property (two observed schemas of one
    moment), the last to arrive won. Ties are broken by content now."""
    tied = [(at(2), change(set_properties={"schema": '{"fields":[{"name":"a"}]}', "owner": "x"})),
            (at(2), change(set_properties={"schema": '{"fields":[{"name":"b"}]}'})),
            (at(2), change(set_properties={"owner": "w"})),
            (at(1), change(set_properties={"schema": '{"fields":[{"name":"z"}]}', "owner": "z"}))]
    expected = {"tags": [], "properties": {"schema": '{"fields":[{"name":"b"}]}', "owner": "x"}}
    for order in itertools.permutations(tied):
        assert apply(list(order)) == expected, order


def test_a_set_and_a_removal_of_one_moment_leave_the_set_in_every_arrival_order() -> None:
    """Before (a review finding): of a set and a removal of the same key at the same moment, the
    last to arrive won. The set wins now, as the greater value (a removal is the least)."""
    tied = [(at(2), change(set_properties={"owner": "x"}, add_tags=("t",))),
            (at(2), change(remove_properties=("owner",), remove_tags=("t",))),
            (at(2), change(remove_properties=None, remove_tags=None)),
            (at(1), change(set_properties={"owner": "old", "tier": "gold"}))]
    expected = {"tags": ["t"], "properties": {"owner": "x"}}
    for order in itertools.permutations(tied):
        assert apply(list(order)) == expected, order

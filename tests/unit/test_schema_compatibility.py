"""Seed 002's schema update rule: each rule both ways, and properties over generated schemas."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lineage.model.dataset_schema import (
    DatasetSchema,
    SchemaChanges,
    SchemaField,
    incompatibilities,
    parse_schema,
    schema,
    schema_changes,
    unstated_nullability,
    with_nullability_of,
)

BASE = schema([SchemaField("id", "int", False), SchemaField("amount", "float"), SchemaField("name", "string")])


def changed(*fields: SchemaField) -> DatasetSchema:
    return schema(fields)


@pytest.mark.parametrize(("proposed", "expected"), [
    # compatible: add an optional field, widen, relax required -> optional, reorder, same
    (changed(*BASE.fields, SchemaField("email", "string", True)), []),
    (changed(SchemaField("id", "long", False), SchemaField("amount", "double"), SchemaField("name", "string")), []),
    (changed(SchemaField("id", "bigint", False), SchemaField("amount", "float64"), SchemaField("name", "STRING")), []),
    (changed(SchemaField("id", "int", True), SchemaField("amount", "float"), SchemaField("name", "string")), []),
    (changed(*reversed(BASE.fields)), []),
    (BASE, []),
    # incompatible: the other way of each rule
    (changed(*BASE.fields, SchemaField("email", "string", False)),
     ["new field 'email' is required (a new field must be optional)"]),
    (changed(SchemaField("id", "int", False), SchemaField("amount", "float")), ["field 'name' is removed"]),
    (changed(SchemaField("id", "short", False), SchemaField("amount", "float"), SchemaField("name", "string")),
     ["field 'id' changes its type from int to short"]),
    (changed(SchemaField("id", "int", False), SchemaField("amount", "float"), SchemaField("name", "long")),
     ["field 'name' changes its type from string to long"]),
    (changed(SchemaField("id", "int", False), SchemaField("amount", "float", False), SchemaField("name", "string")),
     ["field 'amount' becomes required (it was optional)"]),
])
def test_each_rule_both_ways(proposed: DatasetSchema, expected: list[str]) -> None:
    assert incompatibilities(BASE, proposed) == expected


def test_narrowing_is_named_as_such_and_every_problem_is_listed() -> None:
    wide = changed(SchemaField("id", "long", False), SchemaField("amount", "double"), SchemaField("name", "string"))
    assert incompatibilities(wide, BASE) == ["field 'id' narrows its type from long to int",
                                             "field 'amount' narrows its type from double to float"]
    worst = changed(SchemaField("id", "string", True), SchemaField("amount", "float", False),
                    SchemaField("extra", "int", False))
    assert incompatibilities(BASE, worst) == [
        "field 'id' changes its type from int to string", "field 'amount' becomes required (it was optional)",
        "field 'name' is removed", "new field 'extra' is required (a new field must be optional)"]


names = st.text(alphabet="abcdefghij", min_size=1, max_size=4)
types = st.sampled_from(["int", "long", "float", "double", "string", "boolean"])
schemas = st.lists(st.tuples(names, types, st.booleans()), min_size=1, max_size=6,
                   unique_by=lambda f: f[0]).map(lambda fs: schema([SchemaField(*f) for f in fs]))


@given(schemas)
def test_a_schema_is_compatible_with_itself(current: DatasetSchema) -> None:
    assert incompatibilities(current, current) == []


@given(schemas, st.lists(st.tuples(names, types), max_size=3))
def test_adding_optional_fields_is_compatible_and_removing_them_again_is_not(
        current: DatasetSchema, added: list[tuple[str, str]]) -> None:
    known = {f.name for f in current.fields}
    new = {name: t for name, t in added if name not in known}
    grown = schema([*current.fields, *(SchemaField(name, t, True) for name, t in new.items())])
    assert incompatibilities(current, grown) == []
    assert incompatibilities(grown, current) == [f"field {name!r} is removed" for name in new]


def test_changes_name_each_field_added_removed_retyped_and_made_optional_or_required() -> None:
    recreated = changed(SchemaField("key", "string", False), SchemaField("amount", "double", False),
                        SchemaField("id", "long", False))
    assert schema_changes(BASE, recreated).to_dict() == {
        "added": [{"name": "key", "type": "string", "nullable": False}],
        "removed": [{"name": "name", "type": "string", "nullable": True}],
        "retyped": [{"name": "amount", "before": "float", "after": "double"},
                    {"name": "id", "before": "int", "after": "long"}],
        "nullability": [{"name": "amount", "before": True, "after": False}],
        "reordered": True}  # amount before id now
    assert schema_changes(BASE, changed(*reversed(BASE.fields))) == SchemaChanges(reordered=True)
    assert schema_changes(BASE, BASE) == SchemaChanges()
    spelled = changed(SchemaField("id", "integer", False), *BASE.fields[1:])
    assert schema_changes(BASE, spelled).retyped == (("id", "int", "integer"),)  # as written, though compatible


@given(schemas, schemas)
def test_changes_account_for_every_field_of_both_schemas(before: DatasetSchema, after: DatasetSchema) -> None:
    found = schema_changes(before, after)
    kept = {f.name for f in before.fields} & {f.name for f in after.fields}
    assert {f.name for f in found.added} == {f.name for f in after.fields} - kept
    assert {f.name for f in found.removed} == {f.name for f in before.fields} - kept
    assert {name for name, _, _ in found.retyped} | {name for name, _, _ in found.nullability} <= kept
    unchanged = found == SchemaChanges()
    assert unchanged == (before == after)


def test_an_observation_that_does_not_say_keeps_each_fields_nullability() -> None:
    """An observed schema's fields given without ``nullable`` (OpenLineage's facet has none) take
    the current field's; a field that says, or a new one, keeps what it says (optional unsaid)."""
    facet = {"fields": [{"name": "id", "type": "long"}, {"name": "amount", "type": "float", "nullable": False},
                        {"name": "name", "type": "string"}, {"name": "email", "type": "string"}]}
    assert unstated_nullability(facet) == {"id", "name", "email"}
    assert unstated_nullability({"fields": [{"name": 1, "type": "x"}, "junk"]}) == frozenset()
    assert unstated_nullability(None) == frozenset()
    observed = with_nullability_of(BASE, parse_schema(facet), unstated_nullability(facet))
    assert [(f.name, f.type, f.nullable) for f in observed.fields] == [
        ("id", "long", False), ("amount", "float", False), ("name", "string", True), ("email", "string", True)]
    assert with_nullability_of(None, parse_schema(facet), unstated_nullability(facet)) == parse_schema(facet)
    assert with_nullability_of(BASE, BASE, frozenset()) == BASE


@given(schemas, schemas)
def test_an_observation_saying_nothing_of_nullability_never_changes_it(current: DatasetSchema,
                                                                       seen: DatasetSchema) -> None:
    unsaid = {"fields": [{"name": f.name, "type": f.type} for f in seen.fields]}
    observed = with_nullability_of(current, parse_schema(unsaid), unstated_nullability(unsaid))
    assert schema_changes(current, observed).nullability == ()
    assert [(f.name, f.type) for f in observed.fields] == [(f.name, f.type) for f in seen.fields]

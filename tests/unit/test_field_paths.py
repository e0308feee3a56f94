"""Field-level lineage core: seed 004's pipeline, typed operations, origins and the refusals."""

from __future__ import annotations

from typing import Any

import pytest

from lineage.model.field_paths import InvalidFieldOperationsError, field_paths, normalize
from spark_jobs.examples.user_profiles import DESTINATION_FIELDS, field_operations
from warehouse.service.field_views import detailed_view, simple_view


def seed_004_payload(**changes: Any) -> dict[str, Any]:
    payload = {"destination": {"name": "mytableds"},
               "operations": [operation.to_dict() for operation in field_operations()],
               "destination_fields": list(DESTINATION_FIELDS)}
    return {**payload, **changes}


def paths_by_field(payload: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {path.field: path.to_dict() for path in field_paths(normalize(payload, "myns"))}


def test_seed_004_id_is_made_by_read_parse_concat_create() -> None:
    paths = paths_by_field(seed_004_payload())
    assert [op["name"] for op in paths["id"]["operations"]] == ["read", "parse", "concat", "create"]
    assert paths["id"]["sources"] == [{"namespace": "myns", "type": "dataset", "name": "user_data", "field": "body"}]
    assert [op["name"] for op in paths["name"]["operations"]] == ["read", "parse", "concat"]
    assert [op["name"] for op in paths["age"]["operations"]] == ["read", "parse"]


def test_seed_004_simple_view_is_body_to_id_through_parse_concat_create() -> None:
    view = simple_view(paths_by_field(seed_004_payload())["id"], "mytableds")
    assert view["edges"] == [{"from": "operation.read.body", "to": "field.mytableds.id",
                              "operations": ["parse", "concat", "create"],
                              "names": ["parse", "concat", "create"]}]
    assert {node["id"] for node in view["nodes"]} == {"operation.read.body", "field.mytableds.id"}


def test_seed_004_detailed_view_draws_every_intermediate_field() -> None:
    view = detailed_view(paths_by_field(seed_004_payload())["id"], "mytableds")
    assert {(edge["from"], edge["to"], edge["name"]) for edge in view["edges"]} == {
        ("operation.read.body", "operation.parse.first_name", "parse"),
        ("operation.read.body", "operation.parse.last_name", "parse"),
        ("operation.parse.first_name", "operation.concat.name", "concat"),
        ("operation.parse.last_name", "operation.concat.name", "concat"),
        ("operation.concat.name", "field.mytableds.id", "create")}


def test_drawing_ids_never_collide_whatever_the_names_hold() -> None:
    """A dataset named like an operation, and names holding the separators, still give one node
    per field: before, ``read:body`` was both the dataset ``read``'s field and the read's output."""
    payload = {"destination": {"name": "read"}, "operations": [
        {"name": "read", "inputs": [{"source": {"name": "raw"}}], "outputs": ["body", "a.b"]},
        {"name": "copy", "id": "a", "inputs": [{"field": "a.b"}], "outputs": ["b:c"]},
        {"type": "write", "name": "write", "inputs": [{"field": "body"}, {"field": "b:c"}]}]}
    paths = paths_by_field(payload)
    body = detailed_view(paths["body"], "read")
    assert {node["id"]: node["kind"] for node in body["nodes"]} == {
        "field.read.body": "field", "operation.read.body": "source"}
    assert [(edge["from"], edge["to"]) for edge in body["edges"]] == [("operation.read.body", "field.read.body")]
    copied = detailed_view(paths["b:c"], "read")
    assert sorted(node["id"] for node in copied["nodes"]) == ["field.read.b:c", "operation.a.b:c", "operation.read.a.b"]
    dotted = detailed_view(paths["b:c"], "x.y")  # a dataset holding the separator is escaped
    assert "field.x\\.y.b:c" in {node["id"] for node in dotted["nodes"]}


def test_descriptions_are_not_part_of_identity_but_operations_are() -> None:
    first = normalize(seed_004_payload(), "myns")
    operations = [dict(op, description="reworded") for op in seed_004_payload()["operations"]]
    assert normalize(seed_004_payload(operations=operations), "myns").fingerprint == first.fingerprint
    changed = [*seed_004_payload()["operations"][:-1],
               {"name": "create", "inputs": [{"field": "name"}, {"field": "age"}], "outputs": ["id"]}]
    second = normalize(seed_004_payload(operations=changed), "myns")
    assert second.fingerprint != first.fingerprint
    ids = {p.field: p.fingerprint for p in field_paths(first)}
    assert {p.field: p.fingerprint for p in field_paths(second)}["id"] != ids["id"]
    assert {p.field: p.fingerprint for p in field_paths(second)}["city"] == ids["city"]


def test_origins_tell_apart_two_reads_of_the_same_field_after_a_join() -> None:
    payload = {"destination": {"name": "joined"}, "operations": [
        {"id": "r1", "name": "read", "inputs": [{"source": {"name": "customers"}}], "outputs": ["id", "name"]},
        {"id": "r2", "name": "read", "inputs": [{"source": {"name": "orders"}}], "outputs": ["id", "total"]},
        {"name": "join", "inputs": [{"field": "id", "origin": "r1"}, {"field": "id", "origin": "r2"}],
         "outputs": ["customer_id"]},
        {"type": "write", "name": "write", "inputs": [{"field": "customer_id"}, {"field": "name", "origin": "r1"}]},
    ]}
    paths = paths_by_field(payload)
    assert sorted(paths) == ["customer_id", "name"]
    assert [s["name"] for s in paths["customer_id"]["sources"]] == ["customers", "orders"]
    assert [s["name"] for s in paths["name"]["sources"]] == ["customers"]


def test_a_transform_without_outputs_drops_and_nested_fields_are_paths() -> None:
    payload = {"destination": {"name": "people"}, "destination_fields": ["employees/name"], "operations": [
        {"name": "read", "inputs": [{"source": {"name": "hr"}}], "outputs": ["employees/first", "employees/last"]},
        {"name": "concat", "inputs": [{"field": "employees/first"}, {"field": "employees/last"}],
         "outputs": ["employees/name"]},
        {"name": "drop", "inputs": [{"field": "employees/first"}]},
        {"name": "drop", "inputs": [{"field": "employees/last"}]},
    ]}
    record = normalize(payload, "hr")
    assert [op.id for op in record.operations] == ["read", "concat", "drop#1", "drop#2"]
    (path,) = field_paths(record)
    assert [op.id for op in path.operations] == ["read", "concat"]


@pytest.mark.parametrize(("change", "reason"), [
    ({"operations": []}, "the operation list is empty"),
    ({"operations": [{"name": "t", "inputs": [], "outputs": ["x"]}], "destination_fields": ["x"]},
     "there is no read operation"),
    ({"destination_fields": []}, "no field reaches the destination"),
    ({"destination_fields": ["nope"]}, "destination field 'nope' is output by no operation"),
    ({"operations": [{"name": "read", "inputs": [{"source": {"name": "s"}}], "outputs": ["a"]},
                     {"name": "t", "inputs": [{"field": "a", "origin": "ghost"}], "outputs": ["b"]}]},
     "origin 'ghost' names no operation"),
    ({"operations": [{"id": "x", "name": "read", "inputs": [{"source": {"name": "s"}}], "outputs": ["a"]},
                     {"id": "x", "name": "t", "inputs": [{"field": "a"}], "outputs": ["b"]}]},
     "operation id 'x' is used more than once"),
    ({"operations": [{"name": "read", "inputs": [{"source": {"name": "s"}}], "outputs": ["a"]},
                     {"id": "p", "name": "p", "inputs": [{"field": "c", "origin": "q"}], "outputs": ["b"]},
                     {"id": "q", "name": "q", "inputs": [{"field": "b", "origin": "p"}], "outputs": ["c"]}],
      "destination_fields": ["c"]},
     "the operations form a cycle through 'p', 'q'"),
    ({"operations": [{"name": "t", "inputs": [{"field": "a"}], "outputs": ["b"]}]},
     "input field 'a' is output by no earlier operation"),
])
def test_records_that_cannot_give_lineage_are_refused_with_the_reason(change: dict[str, Any], reason: str) -> None:
    with pytest.raises(InvalidFieldOperationsError, match=reason):
        normalize(seed_004_payload(**change), "myns")

"""Nothing recorded is lost (issue 18): records written out by hand, each with what its fields'
incoming lineage (the source fields of each destination field's path) and outgoing lineage
(where each source field goes: destination fields, drops, operations) must be."""

from __future__ import annotations

import hashlib
from typing import Any

import orjson
import pytest

from lineage.errors import InvalidFieldOperationsError
from lineage.model.field_paths import field_paths, normalize, path_fingerprint, path_operations
from warehouse.service.field_flows import source_field_flows
from warehouse.service.field_views import detailed_view, simple_view


def read(name: str, source: str, *outputs: str) -> dict[str, Any]:
    return {"name": name, "inputs": [{"source": {"name": source}}], "outputs": list(outputs)}


def op(name: str, inputs: list[str | tuple[str, str]], *outputs: str) -> dict[str, Any]:
    """A transform; an input is a field name, or (field, origin)."""
    return {"name": name, "outputs": list(outputs),
            "inputs": [{"field": i} if isinstance(i, str) else {"field": i[0], "origin": i[1]} for i in inputs]}


def write(name: str, inputs: list[str | tuple[str, str]], *outputs: str) -> dict[str, Any]:
    return {**op(name, inputs, *outputs), "type": "write"}


def record(*operations: dict[str, Any]) -> dict[str, Any]:
    return {"destination": {"name": "out"}, "operations": list(operations)}


# name, record, incoming: destination field -> (write ids, sorted "dataset.field" sources, operation ids),
# outgoing: "dataset.field" -> (destination fields, drops, operation ids)
CASES: list[tuple[str, dict[str, Any], dict[str, Any], dict[str, Any]]] = [
    ("disjoint branches, both kept",
     record(read("read1", "a", "x"), write("write1", [("x", "read1")]),
            read("read2", "b", "y"), op("upper", [("y", "read2")], "y2"), write("write2", [("y2", "upper")])),
     {"x": (["write1"], ["a.x"], ["read1", "write1"]),
      "y2": (["write2"], ["b.y"], ["read2", "upper", "write2"])},
     {"a.x": (["x"], [], ["read1", "write1"]), "b.y": (["y2"], [], ["read2", "upper", "write2"])}),
    ("two writes into one destination field union their sources",
     record(read("readA", "a", "id"), read("readB", "b", "id"),
            write("writeA", [("id", "readA")]), write("writeB", [("id", "readB")])),
     {"id": (["writeA", "writeB"], ["a.id", "b.id"], ["readA", "readB", "writeA", "writeB"])},
     {"a.id": (["id"], [], ["readA", "writeA"]), "b.id": (["id"], [], ["readB", "writeB"])}),
    ("multi-source merge of several reads",
     record(read("people", "p", "first", "last"), read("places", "c", "city"),
            op("label", ["first", "last", "city"], "label"), write("write", ["label"])),
     {"label": (["write"], ["c.city", "p.first", "p.last"], ["people", "places", "label", "write"])},
     {"c.city": (["label"], [], ["places", "label", "write"]),
      "p.first": (["label"], [], ["people", "label", "write"]),
      "p.last": (["label"], [], ["people", "label", "write"])}),
    ("renames then drops: the dropped field ends at its drop",
     record(read("read", "users", "name", "ssn"), op("rename", ["name"], "full_name"),
            op("renameSsn", ["ssn"], "social"), op("dropSocial", ["social"]), write("write", ["full_name"])),
     {"full_name": (["write"], ["users.name"], ["read", "rename", "write"])},
     {"users.name": (["full_name"], [], ["read", "rename", "write"]),
      "users.ssn": ([], ["dropSocial"], ["read", "renameSsn", "dropSocial"])}),
    ("a field read and never used reaches nothing",
     record(read("read", "users", "name", "unused"), write("write", ["name"])),
     {"name": (["write"], ["users.name"], ["read", "write"])},
     {"users.name": (["name"], [], ["read", "write"]), "users.unused": ([], [], ["read"])}),
    ("a transform with no inputs: a field without sources",
     record(read("read", "users", "name"), op("uuid", [], "id"), write("write", ["name", "id"])),
     {"id": (["write"], [], ["uuid", "write"]), "name": (["write"], ["users.name"], ["read", "write"])},
     {"users.name": (["name"], [], ["read", "write"])}),
    ("written and dropped: one field copied, then the original dropped",
     record(read("read", "s", "email"), op("hash", ["email"], "email_hash"), op("dropEmail", [("email", "read")]),
            write("write", ["email_hash"])),
     {"email_hash": (["write"], ["s.email"], ["read", "hash", "write"])},
     {"s.email": (["email_hash"], ["dropEmail"], ["read", "hash", "dropEmail", "write"])}),
    ("CDAP's leniency: an input its origin does not list is taken as read by it",
     record(read("read", "s", "a"), op("t", [("b", "read")], "c"), write("write", ["a", "c"])),
     {"a": (["write"], ["s.a"], ["read", "write"]), "c": (["write"], ["s.b"], ["read", "t", "write"])},
     {"s.a": (["a"], [], ["read", "write"]), "s.b": (["c"], [], ["read", "t", "write"])}),
]


def _incoming(payload: dict[str, Any]) -> dict[str, Any]:
    return {path.field: (list(path.origins), sorted(f"{s.name}.{f}" for s, f in path.source_fields),
                         [o.id for o in path.operations])
            for path in field_paths(normalize(payload, "ns"))}


def _outgoing(payload: dict[str, Any]) -> dict[str, Any]:
    return {f"{flow.source.name}.{flow.field}": (list(flow.destination_fields), list(flow.drops),
                                                 [o.id for o in flow.operations])
            for flow in source_field_flows(normalize(payload, "ns"))}


@pytest.mark.parametrize(("name", "payload", "incoming", "outgoing"), CASES, ids=[case[0] for case in CASES])
def test_field_lineage_of_hand_written_records(name: str, payload: dict[str, Any], incoming: dict[str, Any],
                                               outgoing: dict[str, Any]) -> None:
    assert _incoming(payload) == incoming
    assert _outgoing(payload) == outgoing


@pytest.mark.parametrize("payload", [case[1] for case in CASES], ids=[case[0] for case in CASES])
def test_every_operation_upstream_of_a_write_is_in_some_fields_path(payload: dict[str, Any]) -> None:
    normalized = normalize(payload, "ns")
    by_id = {o.id: o for o in normalized.operations}
    upstream, stack = set(), [o.id for o in normalized.operations if o.type == "write"]
    while stack:
        op_id = stack.pop()
        if op_id not in upstream:
            upstream.add(op_id)
            stack.extend(ref.origin for ref in by_id[op_id].inputs)
    assert upstream <= {o.id for path in field_paths(normalized) for o in path.operations}


def test_two_writes_of_one_field_both_appear_in_its_views() -> None:
    (path,) = field_paths(normalize(CASES[1][1], "ns"))
    stored = path.to_dict()
    assert stored["origin"] == "writeA" and stored["origins"] == ["writeA", "writeB"]
    detailed = detailed_view(stored, "out")
    assert sorted((e["from"], e["to"], e["name"]) for e in detailed["edges"]) == [
        ("operation.readA.id", "field.out.id", "writeA"), ("operation.readB.id", "field.out.id", "writeB")]
    simple = simple_view(stored, "out")
    assert [(e["from"], e["to"], e["names"]) for e in simple["edges"]] == [
        ("operation.readA.id", "field.out.id", ["writeA"]), ("operation.readB.id", "field.out.id", ["writeB"])]


def test_a_path_written_once_keeps_its_fingerprint_and_has_no_origins_key() -> None:
    (path, _) = field_paths(normalize(CASES[0][1], "ns"))
    stored = path.to_dict()
    assert "origins" not in stored
    before = {"field": "x", "origin": "write1", "operations": stored["operations"]}  # the identity before issue 18
    assert path.fingerprint == hashlib.sha256(orjson.dumps(before, option=orjson.OPT_SORT_KEYS)).hexdigest()


def test_a_lenient_record_is_accepted_with_its_warning_shown_in_the_detailed_view() -> None:
    normalized = normalize(CASES[7][1], "ns")
    assert [w.to_dict() for w in normalized.warnings] == [
        {"operation": "t", "message": "input field 'b' is not an output of its origin 'read'; taken as read by 'read'"}]
    paths = {path.field: path.to_dict() for path in field_paths(normalized)}
    assert "warnings" not in paths["a"]  # the warning is about an operation not on a's path
    assert detailed_view(paths["c"], "out")["warnings"] == [w.to_dict() for w in normalized.warnings]


@pytest.mark.parametrize(("payload", "reason"), [
    (record(op("t", [], "x"), write("write", ["x"])), "there is no read operation among 't', 'write'"),
    (record(read("read", "s", "a"), op("t", [("a", "ghost")], "b"), write("write", ["b"])),
     "operation 't': origin 'ghost' names no operation"),
    (record({**read("read", "s", "a"), "id": "x"}, {**write("write", ["a"]), "id": "x"}),
     "operation id 'x' is used more than once"),
    (record(read("read", "s", "a"), {**op("p", [("c", "q")], "b"), "id": "p"}, {**op("q", [("b", "p")], "c"),
                                                                                "id": "q"}, write("write", ["c"])),
     "the operations form a cycle through 'p', 'q'"),
])
def test_what_cdap_refuses_stays_refused_naming_the_operations(payload: dict[str, Any], reason: str) -> None:
    with pytest.raises(InvalidFieldOperationsError, match=reason):
        normalize(payload, "ns")


def chain(length: int, fields: int) -> dict[str, Any]:
    """A wide ETL record: one read of ``fields`` fields, then ``length`` operations renaming a field
    or merging two, then a write of every field's latest name."""
    operations = [read("read", "wide", *(f"f{i}" for i in range(fields)))]
    latest = {i: f"f{i}" for i in range(fields)}
    for step in range(length):
        i = step % fields
        if step % 5 == 4:
            j = (i + 1) % fields
            operations.append(op(f"merge{step}", [latest[i], latest[j]], f"m{step}"))
        else:
            operations.append(op(f"rename{step}", [latest[i]], f"r{step}"))
        latest[i] = operations[-1]["outputs"][0]
    operations.append(write("write", [latest[i] for i in range(fields)], *(f"out{i}" for i in range(fields))))
    return record(*operations)


def test_a_500_operation_chain_keeps_every_field_and_every_operation() -> None:
    normalized = normalize(chain(498, 100), "ns")
    paths = field_paths(normalized)
    assert len(normalized.operations) == 500 and len(paths) == 100
    assert {o.id for path in paths for o in path.operations} == {o.id for o in normalized.operations}
    # Step s works on field s % 100; fields i with i % 5 == 4 are merged with field i + 1, the others
    # renamed: out0 comes from f0 alone, out4 from f4 and f5, out99 from f99 and f0.
    sources = {path.field: sorted(f for _, f in path.source_fields) for path in paths}
    assert (sources["out0"], sources["out4"], sources["out99"]) == (["f0"], ["f4", "f5"], ["f0", "f99"])
    flows = {flow.field: flow for flow in source_field_flows(normalized)}
    assert (flows["f0"].destination_fields, flows["f5"].destination_fields) == (("out0", "out99"), ("out4", "out5"))
    assert all(flow.drops == () for flow in flows.values())


@pytest.mark.parametrize("payload", [CASES[1][1], chain(498, 100)], ids=["two writes", "500 operations"])
def test_a_paths_operations_rebuild_from_its_sets_operations_and_ids(payload: dict[str, Any]) -> None:
    normalized = normalize(payload, "ns")
    by_id = {operation.id: operation.identity() for operation in normalized.operations}
    for path in field_paths(normalized):
        stored = path.to_dict()
        rebuilt = path_operations(by_id, [operation["id"] for operation in stored["operations"]], path.field)
        assert rebuilt == stored["operations"]
        assert path_fingerprint(path.field, path.origins, rebuilt) == stored["fingerprint"]

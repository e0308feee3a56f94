"""Transformations on field lineage: the direct rule, narrowing a path to its direct chains,
and the views showing each edge's transformation."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lineage.model.field_paths import field_paths, normalize, path_fingerprint
from warehouse.service.field_transformations import direct_path, is_direct
from warehouse.service.field_views import detailed_view, simple_view

SUM = {"type": "DIRECT", "subtype": "AGGREGATION", "description": "sum(amount)", "masking": False}
GROUP = {"type": "INDIRECT", "subtype": "GROUP_BY", "masking": False}
PAID = {"type": "INDIRECT", "subtype": "FILTER", "description": "status = 'paid'", "masking": False}
HASH = {"type": "DIRECT", "subtype": "TRANSFORMATION", "description": "sha256(email)", "masking": True}
CASE = {"type": "INDIRECT", "subtype": "CONDITIONAL", "masking": False}


def record(total_inputs: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """orders -> totals: total = sum(amount) group by customer where paid; customer as is (no
    transformation recorded, as our own client writes); email_hash masks email; is_paid from status."""
    return {"destination": {"name": "totals"}, "operations": [
        {"id": "read", "type": "read", "name": "read", "inputs": [{"source": {"name": "orders"}}],
         "outputs": ["customer", "amount", "status", "email"]},
        {"id": "sum", "type": "transform", "name": "aggregation", "outputs": ["total"], "inputs": total_inputs or [
            {"field": "amount", "transformation": SUM}, {"field": "customer", "transformation": GROUP},
            {"field": "status", "transformation": PAID}]},
        {"id": "hash", "type": "transform", "name": "transformation", "outputs": ["email_hash"],
         "inputs": [{"field": "email", "transformation": HASH}]},
        {"id": "paid", "type": "transform", "name": "transformation", "outputs": ["is_paid"],
         "inputs": [{"field": "status", "transformation": CASE}]},
        {"id": "write", "type": "write", "name": "write", "inputs": [
            {"field": "customer", "origin": "read"}, {"field": "total"}, {"field": "email_hash"},
            {"field": "is_paid"}]}]}


def stored(payload: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The stored paths of a record, by field, as the field lineage job writes them."""
    return {path.field: path.to_dict() for path in field_paths(normalize(payload, "shop"))}


def orders(field: str) -> dict[str, str]:
    return {"namespace": "shop", "type": "dataset", "name": "orders", "field": field}


@pytest.mark.parametrize(("transformation", "direct"), [
    (None, True),  # none recorded: our own client's operations, untyped OpenLineage inputs
    (SUM, True), (HASH, True), ({"type": "DIRECT"}, True),
    (GROUP, False), (PAID, False), ({"type": "INDIRECT"}, False),
    ({"type": "LATERAL", "subtype": "SOMETHING"}, False),  # a type this code does not know is not direct
])
def test_an_edge_is_direct_when_its_transformation_is_direct_or_none_was_recorded(
        transformation: dict[str, Any] | None, direct: bool) -> None:
    assert is_direct(transformation) is direct


def test_direct_path_keeps_the_direct_inputs_and_the_sources_they_reach() -> None:
    total = stored(record())["total"]
    narrowed = direct_path(total)
    assert narrowed is not None
    assert narrowed["sources"] == [orders("amount")]
    assert [(op["id"], [item["field"] for item in op["inputs"]]) for op in narrowed["operations"]] == [
        ("read", []), ("sum", ["amount"]), ("write", ["total"])]
    assert narrowed["operations"][1]["inputs"][0]["transformation"] == SUM
    # What is left is the path a producer recording only amount would have stored.
    only_amount = stored(record([{"field": "amount", "transformation": SUM}]))["total"]
    assert narrowed["fingerprint"] == only_amount["fingerprint"] != total["fingerprint"]
    assert narrowed["operations"] == only_amount["operations"]


def test_direct_path_leaves_an_all_direct_path_as_it_is_and_drops_an_all_indirect_one() -> None:
    paths = stored(record())
    assert direct_path(paths["customer"]) is paths["customer"]  # no transformation recorded
    assert direct_path(paths["email_hash"]) is paths["email_hash"]  # DIRECT, masked
    assert direct_path(paths["is_paid"]) is None  # status only decides the value


def test_path_fingerprint_is_the_stored_paths() -> None:
    for path in stored(record()).values():
        assert path_fingerprint(path["field"], path["origin"], path["operations"]) == path["fingerprint"]


def test_detailed_view_shows_each_inputs_transformation() -> None:
    view = detailed_view(stored(record())["total"], "totals")
    assert view["edges"] == [
        {"from": "operation.read.amount", "to": "operation.sum.total", "operation": "sum", "name": "aggregation",
         "transformation": SUM},
        {"from": "operation.read.customer", "to": "operation.sum.total", "operation": "sum", "name": "aggregation",
         "transformation": GROUP},
        {"from": "operation.read.status", "to": "operation.sum.total", "operation": "sum", "name": "aggregation",
         "transformation": PAID},
        # none recorded: no key
        {"from": "operation.sum.total", "to": "field.totals.total", "operation": "write", "name": "write"},
    ]


def test_an_input_reaching_the_output_two_ways_is_two_detailed_edges_and_one_simple_edge() -> None:
    twice = stored(record([{"field": "amount", "transformation": SUM},
                           {"field": "amount", "transformation": {**PAID, "description": "amount > 0"}}]))["total"]
    detailed = detailed_view(twice, "totals")
    assert [edge.get("transformation") for edge in detailed["edges"]] == [
        SUM, {**PAID, "description": "amount > 0"}, None]
    simple = simple_view(twice, "totals")
    assert simple["edges"] == [{"from": "operation.read.amount", "to": "field.totals.total",
                                "operations": ["sum", "write"],
                                "names": ["aggregation", "write"],
                                "transformations": [SUM, {**PAID, "description": "amount > 0"}]}]


def test_simple_view_lists_the_transformations_between_each_source_field_and_the_field() -> None:
    paths = stored(record())
    assert [(edge["from"], edge.get("transformations")) for edge in simple_view(paths["total"], "totals")["edges"]] \
        == [("operation.read.amount", [SUM]), ("operation.read.customer", [GROUP]), ("operation.read.status", [PAID])]
    (customer,) = simple_view(paths["customer"], "totals")["edges"]
    assert "transformations" not in customer  # none recorded: no key, never null or empty


def test_a_transformation_of_an_unknown_type_is_shown_as_recorded() -> None:
    future = {"type": "LATERAL", "subtype": "EXPLODE"}
    path = stored(record())["total"]
    path["operations"][1]["inputs"][0]["transformation"] = future  # a producer this code does not know yet
    assert detailed_view(path, "totals")["edges"][0]["transformation"] == future
    assert simple_view(path, "totals")["edges"][0]["transformations"] == [future]
    assert direct_path(path) is None  # amount's only edge is not known to be direct


# Property: narrowing a path to its direct chains gives the path the record would have had
# with its non-direct inputs left out (field_paths computes the expected side).
KINDS = st.sampled_from([None, {"type": "DIRECT", "subtype": "IDENTITY"}, {"type": "INDIRECT", "subtype": "JOIN"},
                         {"type": "DIRECT", "subtype": "AGGREGATION", "masking": True}, {"type": "OTHER"}])


@st.composite
def records(draw: st.DrawFn) -> dict[str, Any]:
    fields = ["a", "b", "c"]
    operations: list[dict[str, Any]] = [
        {"id": "read", "type": "read", "name": "read", "inputs": [{"source": {"name": "src"}}], "outputs": fields[:]}]
    available = fields[:]
    for index in range(draw(st.integers(1, 5))):
        chosen = draw(st.lists(st.sampled_from(available), min_size=1, max_size=3, unique=True))
        inputs = []
        for field in chosen:
            kind = draw(KINDS)
            inputs.append({"field": field} if kind is None else {"field": field, "transformation": kind})
        operations.append({"id": f"t{index}", "type": "transform", "name": "t", "inputs": inputs,
                           "outputs": [f"x{index}"]})
        available.append(f"x{index}")
    written = draw(st.lists(st.sampled_from(available), min_size=1, max_size=3, unique=True))
    operations.append({"id": "write", "type": "write", "name": "write", "inputs": [{"field": f} for f in written]})
    return {"destination": {"name": "out"}, "operations": operations}


def without_indirect(payload: dict[str, Any]) -> dict[str, Any]:
    return {**payload, "operations": [
        {**op, "inputs": [item for item in op["inputs"] if is_direct(item.get("transformation"))]}
        for op in payload["operations"]]}


@given(records())
def test_direct_path_is_the_path_without_the_non_direct_inputs(payload: dict[str, Any]) -> None:
    expected = stored(without_indirect(payload))
    for field, path in stored(payload).items():
        narrowed = direct_path(path)
        if path["sources"] and not expected[field]["sources"]:
            assert narrowed is None
            continue
        assert narrowed is not None
        assert (narrowed["fingerprint"], narrowed["sources"]) == (expected[field]["fingerprint"],
                                                                  expected[field]["sources"])
        assert direct_path(narrowed) is narrowed  # narrowing twice changes nothing


def test_detailed_drawings_sharing_a_memo_draw_what_each_draws_alone() -> None:
    """An answer draws its paths with one memo (``DetailedMemo``): paths rebuilt from one set
    share operation objects, so an intermediate field is drawn once. Each drawing must still be
    what the path alone gives, also where a field written twice feeds its own second write and
    another field."""
    from warehouse.service.field_views import DetailedMemo

    stacked = {"destination": {"name": "out"}, "operations": [  # x written as t1 made it, and again via z
        {"id": "read", "type": "read", "name": "read", "inputs": [{"source": {"name": "src"}}], "outputs": ["a", "b"]},
        {"id": "t1", "type": "transform", "name": "upper", "inputs": [{"field": "a"}], "outputs": ["x"]},
        {"id": "t3", "type": "transform", "name": "trim", "outputs": ["z"],
         "inputs": [{"field": "x", "origin": "t1", "transformation": CASE}, {"field": "b"}]},
        {"id": "t2", "type": "transform", "name": "lower", "inputs": [{"field": "z"}], "outputs": ["x"]},
        {"id": "t4", "type": "transform", "name": "md5", "inputs": [{"field": "z"}], "outputs": ["y"]},
        {"id": "w1", "type": "write", "name": "write", "inputs": [{"field": "x", "origin": "t1"}], "outputs": ["x"]},
        {"id": "w2", "type": "write", "name": "write", "outputs": ["x", "y"],
         "inputs": [{"field": "x", "origin": "t2"}, {"field": "y", "origin": "t4"}]},
    ]}
    rewritten = {"destination": {"name": "out"}, "operations": [  # a write's output read again, then written
        {"id": "r", "type": "read", "name": "read", "inputs": [{"source": {"name": "src"}}], "outputs": ["a"]},
        {"id": "t1", "type": "transform", "name": "upper", "inputs": [{"field": "a"}], "outputs": ["x"]},
        {"id": "t4", "type": "transform", "name": "lower", "inputs": [{"field": "a"}], "outputs": ["y"]},
        {"id": "w1", "type": "write", "name": "write", "outputs": ["x", "y"],
         "inputs": [{"field": "x", "origin": "t1"}, {"field": "y", "origin": "t4"}]},
        {"id": "t2", "type": "transform", "name": "trim", "inputs": [{"field": "x", "origin": "w1"}], "outputs": ["z"]},
        {"id": "w2", "type": "write", "name": "write", "outputs": ["x", "y"],
         "inputs": [{"field": "z", "origin": "t2"}, {"field": "z", "origin": "t2"}]},
    ]}
    for payload in (record(), stacked, rewritten):
        paths = list(stored(payload).values())
        shared: dict[str, dict[str, Any]] = {}  # one object per operation, as the store rebuilds a set's paths
        for path in paths:
            path["operations"] = [shared.setdefault(orjson_key(op), op) for op in path["operations"]]
        alone = [detailed_view(path, "out") for path in paths]
        memo = DetailedMemo()
        assert [detailed_view(path, "out", memo) for path in paths] == alone
        assert [detailed_view(path, "out", memo) for path in reversed(paths)] == alone[::-1]
        assert memo.drawn  # the memo was used


def orjson_key(operation: dict[str, Any]) -> str:
    import orjson

    return orjson.dumps(operation, option=orjson.OPT_SORT_KEYS).decode()

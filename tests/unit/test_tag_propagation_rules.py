"""Tag propagation's rules (pure): which edges carry a tag, how far, and what a stop says."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from warehouse.service.tag_propagation import (
    Edge,
    FieldNode,
    Policy,
    ProgramName,
    parse_policy,
    policies_from,
    propagate,
)

pytestmark = pytest.mark.unit
PROGRAM = ProgramName("default", "Crm", "spark", "Etl")


def node(dataset: str, field: str) -> FieldNode:
    return FieldNode("default", "dataset", dataset, field)


def edge(source: FieldNode, target: FieldNode, subtype: str = "IDENTITY", *, kind: str = "DIRECT",
         masking: bool = False, operations: tuple[str, ...] = ()) -> Edge:
    return Edge(source, target, kind, subtype, masking, operations, PROGRAM, ("r-1",), 0, 0)


A, B, C, D = node("a", "x"), node("b", "x"), node("c", "x"), node("d", "x")


def walk(edges: list[Edge], policy: Policy, *origins: FieldNode):  # type: ignore[no-untyped-def]
    def out_of(frontier: Sequence[FieldNode]) -> list[Edge]:
        return [item for item in edges if item.source in frontier]
    return propagate("PII", origins or (A,), policy, out_of)


def test_a_chain_of_copies_and_transformations_carries_the_tag_to_its_end() -> None:
    found = walk([edge(A, B), edge(B, C, "TRANSFORMATION", operations=("upper",)), edge(C, D)], Policy())
    assert [(item.field, len(item.path)) for item in found.reached] == [(B, 1), (C, 2), (D, 3)]
    assert found.stops == []


@pytest.mark.parametrize(("blocking", "reason"), [
    (edge(A, B, "TRANSFORMATION", masking=True, operations=("sha2",)), "masked by sha2 in spark Crm.Etl"),
    (edge(A, B, "AGGREGATION", operations=("count",)), "aggregated by count in spark Crm.Etl"),
    (edge(A, B, "JOIN", kind="INDIRECT"), "used as JOIN (INDIRECT) in spark Crm.Etl: no value flows"),
])
def test_masking_aggregation_and_indirect_edges_stop_it_and_say_why(blocking: Edge, reason: str) -> None:
    found = walk([blocking, edge(B, C)], Policy())
    assert found.reached == []
    assert [(stop.edge, stop.reason) for stop in found.stops] == [(blocking, reason)]


def test_a_policy_may_carry_aggregations_and_masked_values_never_indirect_ones() -> None:
    policy = parse_policy("carries=IDENTITY,TRANSFORMATION,AGGREGATION; masked=carry")
    found = walk([edge(A, B, "AGGREGATION"), edge(B, C, masking=True), edge(C, D, "FILTER", kind="INDIRECT")],
                 policy)
    assert [item.field for item in found.reached] == [B, C]
    assert [stop.edge.target for stop in found.stops] == [D]


def test_levels_bound_the_walk_and_say_it_was_cut() -> None:
    found = walk([edge(A, B), edge(B, C), edge(C, D)], parse_policy("levels=2"))
    assert [item.field for item in found.reached] == [B, C] and found.truncated
    assert [(stop.edge.target, stop.reason) for stop in found.stops] == [(D, "beyond levels=2 of its policy")]


def test_each_field_is_reached_once_per_origin_by_its_shortest_path_and_cycles_end() -> None:
    found = walk([edge(A, B), edge(B, C), edge(A, C), edge(C, A)], Policy())
    assert sorted((item.field.dataset, len(item.path)) for item in found.reached) == [("b", 1), ("c", 1)]
    both = walk([edge(A, C), edge(B, C)], Policy(), A, B)
    assert sorted((item.origin.dataset, item.field.dataset) for item in both.reached) == [("a", "c"), ("b", "c")]


def test_the_default_policy_reads_back_as_it_is_written() -> None:
    assert parse_policy("default") == parse_policy("") == Policy()
    assert parse_policy("levels=3; carries=identity").render() == "carries=IDENTITY; masked=stop; levels=3"


def test_a_policy_that_does_not_parse_leaves_its_tag_out_and_says_why() -> None:
    errors: list[str] = []
    assert list(policies_from({"PII": "default", "typo": "carries=FILTER"}, errors)) == ["PII"]
    assert errors == ["LINEAGE_TAG_POLICIES, tag 'typo': tag policy carries FILTER: only DIRECT subtypes "
                      "(IDENTITY, TRANSFORMATION, AGGREGATION) carry a tag; INDIRECT never does"]

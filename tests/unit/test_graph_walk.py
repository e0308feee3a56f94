from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from hypothesis import given
from hypothesis import strategies as st

from warehouse.service.graph_walk import walk

Graph = Mapping[int, Sequence[int]]


class Recorder:
    """An in-memory, set-at-a-time neighbour function that records each frontier it is asked about."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.calls: list[tuple[int, ...]] = []

    def __call__(self, frontier: tuple[int, ...]) -> Iterator[int]:
        self.calls.append(frontier)
        return (node for source in frontier for node in self.graph.get(source, ()))


CHAIN = {1: [2], 2: [3], 3: [4], 4: [5]}
DIAMOND = {1: [2, 3], 2: [4], 3: [4], 4: [1]}


def test_walk_stops_at_the_level_bound() -> None:
    neighbours = Recorder(CHAIN)
    assert walk([1], neighbours, 2) == [(2,), (3,)]
    assert neighbours.calls == [(1,), (2,)]


def test_walk_of_zero_levels_finds_nothing_and_asks_nothing() -> None:
    neighbours = Recorder(CHAIN)
    assert walk([1], neighbours, 0) == []
    assert neighbours.calls == []


def test_walk_ends_at_the_first_level_without_new_nodes() -> None:
    neighbours = Recorder(CHAIN)
    assert walk([3], neighbours, 10) == [(4,), (5,)]
    assert neighbours.calls == [(3,), (4,), (5,)]


def test_a_cycle_does_not_loop() -> None:
    neighbours = Recorder({1: [2], 2: [3], 3: [1]})
    assert walk([1], neighbours, 100) == [(2,), (3,)]
    assert neighbours.calls == [(1,), (2,), (3,)]


def test_visited_nodes_are_not_revisited_and_each_level_is_one_call_over_the_whole_frontier() -> None:
    neighbours = Recorder(DIAMOND)
    assert walk([1], neighbours, 10) == [(2, 3), (4,)]
    # 4 is reached from both 2 and 3 but walked from once; its neighbour 1 is the origin.
    assert neighbours.calls == [(1,), (2, 3), (4,)]


def test_levels_keep_the_order_the_neighbour_function_gave_without_duplicates() -> None:
    neighbours = Recorder({1: [9, 5, 9, 7], 5: [8], 7: [6, 8]})
    assert walk([1], neighbours, 10) == [(9, 5, 7), (8, 6)]


def test_several_origins_are_one_frontier() -> None:
    neighbours = Recorder({1: [3], 2: [3, 1], 3: [4]})
    assert walk([1, 2, 1], neighbours, 10) == [(3,), (4,)]
    assert neighbours.calls == [(1, 2), (3,), (4,)]


def test_keep_drops_nodes_that_stay_visited_and_are_not_walked_from() -> None:
    neighbours = Recorder({1: [2, 3], 2: [5], 3: [2, 4]})
    asked = []

    def keep(frontier: tuple[int, ...], found: tuple[int, ...]) -> list[int]:
        asked.append((frontier, found))
        return [node for node in found if node != 2]

    assert walk([1], neighbours, 10, keep) == [(3,), (4,)]
    # 2 is dropped at level 1: not walked from (5 is never reached), not found again from 3.
    assert neighbours.calls == [(1,), (3,), (4,)]
    assert asked == [((1,), (2, 3)), ((3,), (4,))]


def test_a_level_whose_nodes_are_all_dropped_ends_the_walk() -> None:
    neighbours = Recorder(CHAIN)
    assert walk([1], neighbours, 10, lambda _, found: [n for n in found if n != 3]) == [(2,)]
    assert neighbours.calls == [(1,), (2,)]


graphs = st.dictionaries(st.integers(0, 12), st.lists(st.integers(0, 12), max_size=4), max_size=13)


def _next(graph: Graph, nodes: Sequence[int]) -> set[int]:
    return {node for source in nodes for node in graph.get(source, ())}


@given(graphs, st.lists(st.integers(0, 12), min_size=1, max_size=3), st.integers(0, 6))
def test_walk_properties(graph: Graph, origins: list[int], levels: int) -> None:
    neighbours = Recorder(graph)
    found = walk(origins, neighbours, levels)
    # No level beyond the bound, none empty, every node returned once and never an origin.
    assert len(found) <= levels
    assert all(found)
    returned = [node for level in found for node in level]
    assert len(returned) == len(set(returned))
    assert not set(returned) & set(origins)
    # Every node is a neighbour of the level before (so reachable in exactly its level's steps),
    # and every neighbour of a level is returned at that level + 1 or earlier (breadth first).
    previous: Sequence[int] = list(dict.fromkeys(origins))
    seen = set(origins)
    for level in found:
        assert set(level) <= _next(graph, previous)
        seen |= set(level)
        assert _next(graph, previous) <= seen
        previous = level
    if len(found) < levels:  # stopped early: nothing new beyond the last level
        assert _next(graph, previous) <= seen
    # One neighbour call per level walked, each with the whole frontier.
    assert neighbours.calls == [tuple(dict.fromkeys(origins)), *found][:min(levels, len(found) + 1)]

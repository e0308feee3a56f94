"""The one breadth-first walk of the product, set at a time.

Dataset lineage (data -> programs -> data) and field lineage (a field's source fields upstream,
the fields it feeds downstream) are both this walk over a different neighbour function. The
neighbour function takes the whole frontier and answers for all of it at once, so a walk whose
neighbours come from a warehouse costs one query per level, never one per node (CDAP's BFS
scans once per node).

Frontiers and levels are tuples: sets of distinct nodes that keep the order their neighbour
function gave them, so an answer built from them is stable.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import Generic, NamedTuple, TypeVar

N = TypeVar("N", bound=Hashable)

Neighbours = Callable[[tuple[N, ...]], Iterable[N]]
"""The frontier (distinct nodes) -> the nodes one step away from any of them, in one call."""

Keep = Callable[[tuple[N, ...], tuple[N, ...]], Iterable[N]]
"""(frontier, nodes found from it) -> the found nodes that join the walk, in one call."""


def walk(origins: Iterable[N], neighbours: Neighbours[N], levels: int, keep: Keep[N] | None = None
         ) -> list[tuple[N, ...]]:
    """The nodes first reached at each level 1..``levels`` from ``origins``: one tuple per level,
    up to the first level that finds nothing new (so no tuple is empty).

    Each level calls ``neighbours`` once with the whole frontier; the nodes already visited (the
    origins included) are dropped, so a cycle ends the walk instead of looping. ``keep``, when
    given, is called once per level with the frontier and the new nodes: the nodes it does not
    return are visited (never reached again) but neither returned nor walked from; field lineage
    uses it to end the walk at a source field without lineage of its own.
    """
    visited = set(origins)
    frontier = tuple(dict.fromkeys(origins))
    found: list[tuple[N, ...]] = []
    for _ in range(levels):
        reached = tuple(dict.fromkeys(node for node in neighbours(frontier) if node not in visited))
        visited.update(reached)
        if reached and keep is not None:
            kept = set(keep(frontier, reached))
            reached = tuple(node for node in reached if node in kept)
        if not reached:
            break
        found.append(reached)
        frontier = reached
    return found


class Bounded(NamedTuple, Generic[N]):
    """A walk's levels, and whether it stopped at its bound while the next level had more."""

    levels: list[tuple[N, ...]]
    truncated: bool


def walk_bounded(origins: Iterable[N], neighbours: Neighbours[N], levels: int, keep: Keep[N] | None = None
                 ) -> Bounded[N]:
    """``walk`` up to ``levels``, saying whether it was cut there: when it reaches ``levels``, the
    level after is walked too (one more call of ``neighbours`` and ``keep``) and, found not empty,
    left out of the answer with ``truncated`` true. An answer never stops silently at its bound."""
    found = walk(origins, neighbours, levels + 1, keep)
    return Bounded(found[:levels], len(found) > levels)

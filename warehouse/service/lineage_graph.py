"""Dataset lineage as the *Metadata and Data Discovery* design shapes it: the walk, relations
grouped with their runs, id maps.

The walk is CDAP's, set at a time (``graph_walk``): each level goes from the frontier's data to
the programs that accessed them in the window, then to every data those programs accessed; the
answer is every in-window relation of the programs visited. The warehouse answers each
half-step with one query over the whole frontier (``LineageQueries``, on the ``lineage_walk``
mart, which already dropped each ``unknown`` access shadowed by a known one of the same run);
this module walks, shapes the relations found into the response and applies ``collapse``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from lineage.errors import InvalidLineageRequestError
from lineage.ids import DataRef as DataRef  # re-exported: the walk's nodes, their ids rendered there
from lineage.ids import ProgramRef as ProgramRef
from warehouse.service.authorization import HIDDEN as HIDDEN  # re-exported: the lineage answer names it
from warehouse.service.graph_walk import walk

COLLAPSE_TYPES = ("access", "run", "component")


@dataclass(frozen=True)
class Relation:
    """Runs of ``program`` made ``access`` to ``data`` in the window (a relation of the *Metadata
    and Data Discovery* design)."""

    data: DataRef
    program: ProgramRef
    access: str
    runs: tuple[str, ...]
    components: tuple[str, ...] = ()


class LineageQueries(Protocol):
    """What the walk asks the warehouse, for one time window; keys are the warehouse's ids of
    data and programs (two separate key spaces). Each call answers for a whole frontier."""

    def dataset_key(self, data: DataRef) -> int | None:
        """The key of ``data``, or None when it was never seen."""

    def programs_of(self, data_keys: Sequence[int]) -> Iterable[int]:
        """The programs that accessed any of the data in the window."""

    def data_of(self, program_keys: Sequence[int]) -> Iterable[int]:
        """The data any of the programs accessed in the window."""

    def relations(self, program_keys: Sequence[int]) -> list[Relation]:
        """Every relation of the programs in the window."""


_Node = tuple[Literal["data", "program"], int]


def programs_reached(origin: int, programs_of: Callable[[Sequence[int]], Iterable[int]],
                     data_of: Callable[[Sequence[int]], Iterable[int]], levels: int) -> list[int]:
    """The programs on CDAP's walk from the data ``origin``, up to ``levels`` levels of
    data -> programs -> data: a walk of two half-steps per level over data and programs, one
    call of ``programs_of`` or ``data_of`` per half-step, in the order they were reached."""

    def half_step(frontier: tuple[_Node, ...]) -> Iterator[_Node]:
        # The graph is bipartite and the walk starts at data, so a frontier is all data (then
        # all programs, and so on): one of the two calls below runs, once for the whole frontier.
        data = [key for kind, key in frontier if kind == "data"]
        programs = [key for kind, key in frontier if kind == "program"]
        if data:
            yield from (("program", key) for key in programs_of(data))
        if programs:
            yield from (("data", key) for key in data_of(programs))

    origins: list[_Node] = [("data", origin)]
    reached = walk(origins, half_step, 2 * levels)
    return [key for nodes in reached for kind, key in nodes if kind == "program"]


def walk_lineage(queries: LineageQueries, origin: DataRef, levels: int) -> list[Relation]:
    """The relations on CDAP's walk from ``origin``, up to ``levels`` levels (empty for data
    never seen): every relation, in the window, of the programs the walk visited."""
    origin_key = queries.dataset_key(origin)
    if origin_key is None:
        return []
    programs = programs_reached(origin_key, queries.programs_of, queries.data_of, levels)
    return queries.relations(programs) if programs else []


def parse_collapse(values: Iterable[str]) -> frozenset[str]:
    chosen = frozenset(value.strip().lower() for value in values if value.strip())
    unknown = sorted(chosen - set(COLLAPSE_TYPES))
    if unknown:
        raise InvalidLineageRequestError(f"collapse {unknown[0]!r} is not one of {', '.join(COLLAPSE_TYPES)}")
    return chosen


def build_relations(relations: Iterable[Relation], collapse: frozenset[str] = frozenset()) -> list[dict[str, Any]]:
    """Relations as the *Metadata and Data Discovery* design's JSON, in a stable order (data id, program id, access).

    Without ``collapse``: one relation per (data, program, access) with its runs and components.
    ``collapse=access`` merges the access types of a (data, program) into one relation;
    ``run`` / ``component`` are already merged by default and are accepted for compatibility.
    """
    groups: dict[tuple[str, ...], dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for relation in relations:
        key = (relation.data.id, relation.program.id) + (() if "access" in collapse else (relation.access,))
        group = groups[key]
        group["access"].add(relation.access)
        group["runs"].update(relation.runs)
        group["components"].update(relation.components)
    return [
        {
            "data": key[0],
            "program": key[1],
            "access": ",".join(sorted(groups[key]["access"])) if "access" in collapse else key[2],
            "runs": sorted(groups[key]["runs"]),
            "components": sorted(groups[key]["components"]),
        }
        for key in sorted(groups)
    ]


def lineage_response(
    start: int, end: int, relations: Iterable[Relation], collapse: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """The lineage output JSON of the *Metadata and Data Discovery* design: ``start``, ``end``,
    ``relations``, ``programs``, ``data``."""
    rows = list(relations)
    programs: Mapping[str, ProgramRef] = {a.program.id: a.program for a in rows}
    data: Mapping[str, DataRef] = {a.data.id: a.data for a in rows}
    return {
        "start": start,
        "end": end,
        "relations": build_relations(rows, collapse),
        "programs": {
            key: {"id": {"namespace": p.namespace, "application": p.application, "type": p.type, "id": p.name}}
            for key, p in sorted(programs.items())
        },
        "data": {
            key: {"id": {"namespace": d.namespace, "type": d.type, "id": d.name}} for key, d in sorted(data.items())
        },
    }




def hide_unreadable(relations: Iterable[Relation], readable_data: Callable[[DataRef], bool],
                    readable_program: Callable[[ProgramRef], bool]) -> list[Relation]:
    """The relations with each node the caller cannot read replaced by an anonymous ``hidden``
    node (``hidden.1``, ``hidden.2``, ... in a stable order), its runs and components dropped:
    the graph keeps its shape and names nothing the caller may not see."""
    rows = list(relations)
    hidden_data = sorted({r.data.id: r.data for r in rows if not readable_data(r.data)}.items())
    hidden_programs = sorted({r.program.id: r.program for r in rows if not readable_program(r.program)}.items())
    data_alias = {key: DataRef("", HIDDEN, str(n)) for n, (key, _) in enumerate(hidden_data, start=1)}
    program_alias = {key: ProgramRef("", "", HIDDEN, str(n)) for n, (key, _) in enumerate(hidden_programs, start=1)}
    shown = []
    for relation in rows:
        program = program_alias.get(relation.program.id)
        shown.append(Relation(
            data_alias.get(relation.data.id, relation.data), program or relation.program, relation.access,
            () if program else relation.runs, () if program or relation.data.id in data_alias else relation.components))
    return shown

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

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, NamedTuple, Protocol

from lineage.errors import InvalidLineageRequestError
from lineage.ids import DataRef as DataRef  # re-exported: the walk's nodes, their ids rendered there
from lineage.ids import ProgramRef as ProgramRef
from warehouse.service.authorization import HIDDEN as HIDDEN  # re-exported: the lineage answer names it
from warehouse.service.graph_walk import walk_bounded

COLLAPSE_TYPES = ("access", "run", "component")
RUNS_SHAPES = ("ids", "count", "latest")
"""How an answer gives each relation's runs: every run id (the design's shape), none (the count
and first and last run times only), or the newest run's id."""


@dataclass(frozen=True)
class RunSpan:
    """A relation's runs in the window, counted: how many, the first and last run's time (epoch
    seconds of its start, or else its earliest event) and the newest run's id."""

    count: int
    first: int | None
    last: int | None
    latest: str | None

    def merged(self, other: RunSpan, count: int) -> RunSpan:
        """Both spans as one of ``count`` runs (the caller knows how many distinct runs the two hold)."""
        # the newest run; a tie (to the second) broken by run id, so the rows' order does not matter
        newest = max((self, other), key=lambda span: (span.last or 0, span.latest or ""))
        firsts = [t for t in (self.first, other.first) if t is not None]
        return RunSpan(count, min(firsts) if firsts else None, newest.last, newest.latest)


@dataclass(frozen=True)
class Relation:
    """Runs of ``program`` made ``access`` to ``data`` in the window (a relation of the *Metadata
    and Data Discovery* design). ``runs`` may be empty when the query asked for ``span`` only;
    ``span`` is None where the runs are not shown (a hidden program's). ``declared``: the program
    declares the access (declared lineage, e.g. an OpenLineage JobEvent); a relation only
    declared has no runs."""

    data: DataRef
    program: ProgramRef
    access: str
    runs: tuple[str, ...]
    components: tuple[str, ...] = ()
    span: RunSpan | None = None
    declared: bool = False


def parse_runs_shape(value: str) -> str:
    shape = value.strip().lower()
    if shape not in RUNS_SHAPES:
        raise InvalidLineageRequestError(f"runs {value!r} is not one of {', '.join(RUNS_SHAPES)}")
    return shape


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
                     data_of: Callable[[Sequence[int]], Iterable[int]], levels: int) -> tuple[list[int], bool]:
    """The programs on CDAP's walk from the data ``origin``, up to ``levels`` levels of
    data -> programs -> data: a walk of two half-steps per level over data and programs, one
    call of ``programs_of`` or ``data_of`` per half-step, in the order they were reached; and
    whether programs lie beyond ``levels`` (one more ``programs_of`` call, made only when the
    walk reached its last level)."""

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
    reached = walk_bounded(origins, half_step, 2 * levels)
    return [key for nodes in reached.levels for kind, key in nodes if kind == "program"], reached.truncated


class Walked(NamedTuple):
    """A walk's relations, and whether ``levels`` cut it (programs lay beyond)."""

    relations: list[Relation]
    truncated: bool = False


def walk_lineage(queries: LineageQueries, origin: DataRef, levels: int) -> Walked:
    """The relations on CDAP's walk from ``origin``, up to ``levels`` levels (empty for data
    never seen): every relation, in the window, of the programs the walk visited."""
    origin_key = queries.dataset_key(origin)
    if origin_key is None:
        return Walked([])
    programs, truncated = programs_reached(origin_key, queries.programs_of, queries.data_of, levels)
    return Walked(queries.relations(programs) if programs else [], truncated)


def parse_collapse(values: Iterable[str]) -> frozenset[str]:
    chosen = frozenset(value.strip().lower() for value in values if value.strip())
    unknown = sorted(chosen - set(COLLAPSE_TYPES))
    if unknown:
        raise InvalidLineageRequestError(f"collapse {unknown[0]!r} is not one of {', '.join(COLLAPSE_TYPES)}")
    return chosen


def span_fields(span: RunSpan | None) -> dict[str, Any]:
    """A relation's counted runs as the answer names them (all None where its runs are hidden)."""
    return {"runCount": span.count if span else None, "firstRun": span.first if span else None,
            "lastRun": span.last if span else None, "latestRun": span.latest if span else None}


def _shown_runs(runs: set[str], span: RunSpan | None, shape: str) -> list[str]:
    if shape == "ids":
        return sorted(runs)
    if shape == "latest" and span is not None and span.latest is not None:
        return [span.latest]
    return []


def build_relations(relations: Iterable[Relation], collapse: frozenset[str] = frozenset(),
                    runs: str = "ids") -> list[dict[str, Any]]:
    """Relations as the *Metadata and Data Discovery* design's JSON, in a stable order (data id, program id, access).

    Without ``collapse``: one relation per (data, program, access) with its runs and components.
    ``collapse=access`` merges the access types of a (data, program) into one relation (its
    relations must carry their run ids, so that a run of both is counted once);
    ``run`` / ``component`` are already merged by default and are accepted for compatibility.
    ``runs`` shapes each relation's ``runs`` (``RUNS_SHAPES``); every shape gives the count,
    first, last and latest run beside them.
    """
    groups: dict[tuple[str, ...], tuple[set[str], set[str], set[str], list[RunSpan | None], list[bool]]] = {}
    for relation in relations:
        key = (relation.data.id, relation.program.id) + (() if "access" in collapse else (relation.access,))
        accesses, run_ids, components, spans, declared = groups.setdefault(key, (set(), set(), set(), [], []))
        accesses.add(relation.access)
        run_ids.update(relation.runs)
        components.update(relation.components)
        if relation.span is None or relation.span.count or not relation.declared:  # a declaration counts no run
            spans.append(relation.span)
        declared.append(relation.declared)
    answer = []
    for key in sorted(groups):
        accesses, run_ids, components, spans, declared = groups[key]
        span = _merged(spans, len(run_ids)) if spans else RunSpan(0, None, None, None)
        answer.append({
            "data": key[0],
            "program": key[1],
            "access": ",".join(sorted(accesses)) if "access" in collapse else key[2],
            "runs": _shown_runs(run_ids, span, runs),
            "components": sorted(components),
            **span_fields(span),
            "declared": any(declared),
        })
    return answer


def _merged(spans: list[RunSpan | None], count: int) -> RunSpan | None:
    known = [span for span in spans if span is not None]
    if len(known) < len(spans) or not known:
        return None
    if len(known) == 1:
        return known[0]
    merged = known[0]
    for span in known[1:]:
        merged = merged.merged(span, count)
    return merged


def node_entries(relations: Iterable[Relation]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The programs and data of ``relations`` by id, as the design's answer names them."""
    rows = list(relations)
    programs: Mapping[str, ProgramRef] = {a.program.id: a.program for a in rows}
    data: Mapping[str, DataRef] = {a.data.id: a.data for a in rows}
    return (
        {key: {"id": {"namespace": p.namespace, "application": p.application, "type": p.type, "id": p.name},
               "jobType": None}  # an OpenLineage job's, from its jobType facet (lineage_store.with_job_types)
         for key, p in sorted(programs.items())},
        {key: {"id": {"namespace": d.namespace, "type": d.type, "id": d.name}} for key, d in sorted(data.items())},
    )


def lineage_response(
    start: int, end: int, relations: Iterable[Relation], collapse: frozenset[str] = frozenset(), runs: str = "ids"
) -> dict[str, Any]:
    """The lineage output JSON of the *Metadata and Data Discovery* design: ``start``, ``end``,
    ``relations``, ``programs``, ``data``."""
    rows = list(relations)
    programs, data = node_entries(rows)
    return {"start": start, "end": end, "relations": build_relations(rows, collapse, runs),
            "programs": programs, "data": data}



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
        shown.append(replace(
            relation, data=data_alias.get(relation.data.id, relation.data), program=program or relation.program,
            runs=() if program else relation.runs,
            components=() if program or relation.data.id in data_alias else relation.components,
            span=None if program else relation.span))
    return shown

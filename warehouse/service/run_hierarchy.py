"""Runs in a hierarchy, and dataset lineage rolled up to it (CDAP's ``rollup=workflow`` idea).

A run may have a parent run and a root run (OpenLineage's ``parent`` facet): an Airflow DAG run
is the parent of its task runs, a Spark application of its queries, a dbt command of its
models; the root is the top of the hierarchy. Lineage ``rollup=parent`` (or ``root``) shows,
in place of each run that has a parent (root), that run, under its own program: the relations
of a DAG's tasks become relations of the DAG, their runs merged into the DAG's runs. Runs
without a parent stay as they are. Roll-up changes how the walk's relations are shown, not
which relations the walk finds (the walk still steps from data to the programs that accessed
it); the warehouse answers the links of all the relations' runs in one query.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from lineage.errors import InvalidLineageRequestError
from warehouse.service.lineage_graph import ProgramRef, Relation, RunSpan

ROLLUPS = ("parent", "root")


@dataclass(frozen=True)
class RunRef:
    """A run, as the warehouse names runs: its program and its run id."""

    program: ProgramRef
    run_id: str


@dataclass(frozen=True)
class RunLinks:
    """A run's parent run and the root run of its hierarchy, as recorded (either may be None)."""

    parent: RunRef | None = None
    root: RunRef | None = None

    def rolled_up(self, rollup: str) -> RunRef | None:
        """The run that stands for this one under ``rollup``: its parent, or its root (the parent
        when no root was recorded: a parent naming no root is the top)."""
        return self.parent if rollup == "parent" else self.root or self.parent


RunLinksOf = Callable[[Sequence[RunRef]], Mapping[RunRef, RunLinks]]
"""The recorded links of the given runs (runs without any are left out), in one call."""


def parse_rollup(value: str | None) -> str | None:
    """``parent``, ``root`` or None (no roll-up); InvalidLineageRequestError for anything else."""
    if value is None or not value.strip():
        return None
    chosen = value.strip().lower()
    if chosen not in ROLLUPS:
        raise InvalidLineageRequestError(f"rollup {value[:40]!r} is not one of {', '.join(ROLLUPS)}")
    return chosen


def roll_up(relations: Iterable[Relation], links_of: RunLinksOf, rollup: str) -> list[Relation]:
    """The relations with each run replaced by the run that stands for it under ``rollup``, and
    relations of the same (data, program, access) merged (their runs and components united; their
    run spans merged: the count of the runs standing for them, the first and last time, the
    stand-in of the newest run)."""
    rows = list(relations)
    runs = sorted({RunRef(r.program, run_id) for r in rows for run_id in r.runs},
                  key=lambda run: (run.program.id, run.run_id))
    links = links_of(runs) if runs else {}

    def stand_in(program: ProgramRef, run_id: str) -> RunRef:
        found = links.get(RunRef(program, run_id))
        return (found.rolled_up(rollup) if found else None) or RunRef(program, run_id)

    merged: dict[tuple[str, str, str], tuple[Relation, set[str], set[str], list[RunSpan]]] = {}
    declared = {(r.data.id, r.program.id, r.access) for r in rows if r.declared}
    for relation in rows:
        if not relation.runs or relation.declared:  # nothing to stand in for, or the program's declaration:
            kept = relation if not relation.runs else replace(  # kept as it is, by its own program
                relation, runs=(), components=(), span=RunSpan(0, None, None, None))
            merged.setdefault((relation.data.id, relation.program.id, relation.access),
                              (kept, set(), set(kept.components), []))
        for run_id in relation.runs:
            shown = stand_in(relation.program, run_id)
            key = (relation.data.id, shown.program.id, relation.access)
            _, run_ids, components, spans = merged.setdefault(
                key, (Relation(relation.data, shown.program, relation.access, ()), set(), set(), []))
            run_ids.add(shown.run_id)
            components.update(relation.components)
            if relation.span is not None and relation.span.latest == run_id:
                spans.append(replace(relation.span, latest=shown.run_id))
    return [Relation(base.data, base.program, base.access, tuple(sorted(run_ids)), tuple(sorted(components)),
                     _span(spans, len(run_ids)) if run_ids else base.span,
                     declared=(base.data.id, base.program.id, base.access) in declared)
            for base, run_ids, components, spans in merged.values()]


def _span(spans: list[RunSpan], count: int) -> RunSpan | None:
    """The merged span of a rolled-up relation from its members' spans (each newest run's stand-in)."""
    if not spans:
        return None
    merged = spans[0]
    for span in spans[1:]:
        merged = merged.merged(span, count)
    return replace(merged, count=count)

"""Run-level lineage: which runs produced what a run read (upstream), which runs consumed what it
wrote (downstream), level by level.

A step goes from a frontier of runs through the datasets they read (upstream) or wrote
(downstream) to the run that wrote the version read, or to the runs that read the version
written (``warehouse.db.run_lineage_store`` says when a write and a read happened). A step
that finds no run is an *end*: a dataset read that no run wrote before (upstream), or written and
read by no run before the next write (downstream). The walk is the product's one walk
(``graph_walk``), one query per level; it stops at ``levels`` or at ``max_runs`` runs and says
which (``truncated``), never a silently partial answer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Protocol

from lineage.errors import InvalidLineageRequestError
from lineage.ids import DataRef, render
from warehouse.service.authorization import HIDDEN
from warehouse.service.graph_walk import walk
from warehouse.service.run_hierarchy import RunRef
from warehouse.service.timespec import epoch_seconds

Direction = Literal["upstream", "downstream"]
DIRECTIONS: tuple[Direction, ...] = ("upstream", "downstream")


@dataclass(frozen=True, slots=True)
class RunNode:
    """A run with its status and times (``run_at``: its start, or else its earliest event)."""

    key: int
    run: RunRef
    status: str
    started_at: datetime | None
    stopped_at: datetime | None
    run_at: datetime | None

    @property
    def id(self) -> str:
        program = self.run.program
        return render((program.namespace, program.application, program.type, program.name, self.run.run_id))


@dataclass(frozen=True, slots=True)
class RunStep:
    """One step from ``from_run`` through ``dataset`` to ``to_run`` (None: no run there, an end)."""

    from_run: int
    dataset: DataRef
    to_run: int | None


class RunLineageQueries(Protocol):
    def upstream(self, runs: Sequence[int]) -> list[RunStep]:
        """For each dataset the runs read, the run that wrote the version read (or None)."""

    def downstream(self, runs: Sequence[int]) -> list[RunStep]:
        """For each dataset the runs wrote, each run that read that version (or one None step)."""

    def runs(self, keys: Sequence[int]) -> dict[int, RunNode]:
        """The runs by key."""


@dataclass(frozen=True)
class RunLineage:
    """What the walk found: each run reached with its level, the steps between the runs of the
    answer (and the ends), and why it stopped early (``levels``, ``runs``) if it did."""

    origin: int
    direction: Direction
    levels: dict[int, int]
    steps: list[RunStep]
    truncated: str | None


def parse_direction(value: str) -> Direction:
    for direction in DIRECTIONS:
        if value.strip().lower() == direction:
            return direction
    raise InvalidLineageRequestError(f"direction {value[:40]!r} is not one of {', '.join(DIRECTIONS)}")


def walk_runs(queries: RunLineageQueries, origin: int, direction: Direction, levels: int, max_runs: int
              ) -> RunLineage:
    """The runs ``levels`` steps from ``origin`` at most, and at most ``max_runs`` of them."""
    step = queries.upstream if direction == "upstream" else queries.downstream
    steps: list[RunStep] = []
    cut: list[str] = []

    def neighbours(frontier: tuple[int, ...]) -> Iterable[int]:
        found = step(frontier)
        steps.extend(found)
        return [s.to_run for s in found if s.to_run is not None]

    def keep(_frontier: tuple[int, ...], reached: tuple[int, ...]) -> Iterable[int]:
        room = max_runs - sum(len(level) for level in found_levels)
        if len(reached) > room:
            cut.append("runs")
        kept = reached[:max(room, 0)]
        found_levels.append(kept)
        return kept

    found_levels: list[tuple[int, ...]] = []
    reached = walk([origin], neighbours, levels, keep)
    level_of = {origin: 0} | {key: n for n, nodes in enumerate(reached, start=1) for key in nodes}
    if not cut and len(reached) == levels:  # at the last level: would one more step find anything new?
        if any(s.to_run is not None and s.to_run not in level_of for s in step(reached[-1])):
            cut.append("levels")
    shown = [s for s in steps if s.from_run in level_of and (s.to_run is None or s.to_run in level_of)]
    return RunLineage(origin, direction, level_of, shown, cut[0] if cut else None)


def run_lineage_response(found: RunLineage, nodes: dict[int, RunNode],
                         readable_program: Callable[[RunRef], bool], readable_data: Callable[[DataRef], bool],
                         links_of: Callable[[RunRef], dict[str, str]]) -> dict[str, Any]:
    """The answer: the run, the runs reached (level, program, status, times), the steps as
    ``writer`` -> ``dataset`` -> ``reader`` edges, the ends, and ``truncated``. Runs of programs
    the caller cannot read are ``hidden.N``, datasets it cannot read ``hidden`` (one alias each)."""
    ordered = sorted(found.levels, key=lambda key: (found.levels[key], _time(nodes.get(key)), key))
    hidden_runs = [key for key in ordered if key in nodes and not readable_program(nodes[key].run)]
    alias = {key: f"{HIDDEN}.{n}" for n, key in enumerate(hidden_runs, start=1)}

    def run_id(key: int) -> str:
        return alias.get(key) or nodes[key].id

    def run_json(key: int) -> dict[str, Any]:
        node = nodes[key]
        if key in alias:
            return {"id": alias[key], "level": found.levels[key], "namespace": "", "application": "",
                    "type": HIDDEN, "program": "", "run_id": "", "status": None, "started_at": None,
                    "stopped_at": None, "links": {}}
        program = node.run.program
        return {"id": node.id, "level": found.levels[key], "namespace": program.namespace,
                "application": program.application, "type": program.type, "program": program.name,
                "run_id": node.run.run_id, "status": node.status, "started_at": epoch_seconds(node.started_at),
                "stopped_at": epoch_seconds(node.stopped_at), "links": links_of(node.run)}

    hidden_data: dict[str, int] = {}

    def data_json(data: DataRef) -> dict[str, str]:
        if readable_data(data):
            return {"id": data.id, "namespace": data.namespace, "type": data.type, "name": data.name}
        number = hidden_data.setdefault(data.id, len(hidden_data) + 1)
        return {"id": f"{HIDDEN}.{number}", "namespace": "", "type": HIDDEN, "name": ""}

    upstream = found.direction == "upstream"
    edges, ends = [], []
    for s in found.steps:
        if s.to_run is None:
            ends.append({"run": run_id(s.from_run), "dataset": data_json(s.dataset),
                         "reason": "no run wrote it before this run" if upstream
                         else "no run read it before the next write"})
            continue
        writer, reader = (s.to_run, s.from_run) if upstream else (s.from_run, s.to_run)
        edges.append({"writer": run_id(writer), "dataset": data_json(s.dataset), "reader": run_id(reader)})
    return {
        "direction": found.direction,
        "run": run_json(found.origin),
        "runs": [run_json(key) for key in ordered if key != found.origin and key in nodes],
        "edges": edges,
        "ends": ends,
        "truncated": found.truncated is not None,
        "truncatedBy": found.truncated,
    }


def _time(node: RunNode | None) -> float:
    moment = node.run_at if node else None
    return moment.timestamp() if moment else 0.0

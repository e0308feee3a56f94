"""The blast radius of a bad dataset (issue 33, pure): from the writes an incident covers, the
runs downstream that read what they produced (run-level lineage: each reader of that version,
before the next write replaced it), level by level, the datasets those runs wrote, and which of
them have since been rewritten by a run outside the blast (good data again) and which still
hold what came from the bad writes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from lineage.ids import DataRef
from warehouse.service.run_lineage import RunNode, RunStep
from warehouse.service.timespec import epoch_seconds


@dataclass
class Blast:
    """The runs reached (run key -> level; the bad writes at 0), each affected dataset with the
    level of the run that wrote it, and whether ``levels`` or ``max_runs`` cut the walk."""

    levels: dict[int, int] = field(default_factory=dict)
    datasets: dict[DataRef, int] = field(default_factory=dict)
    truncated: bool = False
    read: dict[int, set[DataRef]] = field(default_factory=dict)  # each reached run: the bad versions it read


def spread(origins: Sequence[int], downstream: Callable[[Sequence[int]], list[RunStep]], levels: int,
           max_runs: int) -> Blast:
    """Walk downstream from the bad writes: level n's runs read a version level n-1's runs wrote."""
    blast = Blast(levels=dict.fromkeys(origins, 0))
    frontier = sorted(set(origins))
    for level in range(1, levels + 2):
        if not frontier:
            break
        steps = downstream(frontier)
        for step in steps:  # what the frontier wrote is affected, at its writer's level
            blast.datasets.setdefault(step.dataset, blast.levels[step.from_run])
        reached = sorted({step.to_run for step in steps if step.to_run is not None} - blast.levels.keys())
        if level > levels:  # one step past the last level: only to say whether it was cut
            blast.truncated = bool(reached)
            break
        room = max_runs - len(blast.levels)
        if len(reached) > room:
            reached, blast.truncated = reached[:max(room, 0)], True
        blast.levels.update(dict.fromkeys(reached, level))
        for step in steps:
            if step.to_run is not None and blast.levels.get(step.to_run) == level:
                blast.read.setdefault(step.to_run, set()).add(step.dataset)
        frontier = reached
    return blast


@dataclass(frozen=True, slots=True)
class FieldStep:
    """A field lineage edge one run recorded: values of ``source``'s ``source_field`` reached
    ``target``'s ``field``, as a value (DIRECT) or by deciding which rows or values (INDIRECT)."""

    run_key: int
    source: DataRef
    source_field: str
    target: DataRef
    field: str
    kind: str


def affected_fields(origin: DataRef, blast: Blast, steps: Sequence[FieldStep]) -> dict[DataRef, dict[str, set[str]]]:
    """The fields of the affected datasets that hold what came from the bad writes, each with the
    kinds it came by: a blast run's edge carries it when its source is a bad version the run read
    (``Blast.read``) and is the bad dataset itself (every field of it is bad) or a field an
    earlier level made bad. INDIRECT counts: rows chosen by bad values are bad rows. A dataset
    whose writers recorded no field lineage is absent (its fields are not known)."""
    bad: dict[DataRef, dict[str, set[str]]] = {}
    by_level: dict[int, list[FieldStep]] = {}
    for step in steps:
        if blast.levels.get(step.run_key, 0) > 0:
            by_level.setdefault(blast.levels[step.run_key], []).append(step)
    for level in sorted(by_level):
        before = {data: set(fields) for data, fields in bad.items()}
        for step in by_level[level]:
            if step.source not in blast.read.get(step.run_key, ()):
                continue
            if step.source == origin or step.source_field in before.get(step.source, ()):
                bad.setdefault(step.target, {}).setdefault(step.field, set()).add(step.kind)
    return bad


@dataclass(frozen=True, slots=True)
class LatestWrite:
    run_key: int
    written: datetime


def blast_answer(dataset: DataRef, incidents: Sequence[dict[str, Any]], blast: Blast, nodes: Mapping[int, RunNode],
                 latest: Mapping[DataRef, LatestWrite], fields: Mapping[DataRef, Mapping[str, set[str]]],
                 readable_data: Callable[[DataRef], bool], readable_run: Callable[[RunNode], bool]) -> dict[str, Any]:
    """The answer: the bad writes, each level's runs and the datasets they wrote (with the fields
    holding what came from the bad writes, ``affected_fields``; null where field lineage was not
    recorded), and each affected dataset as rewritten since (by a run outside the blast:
    ``recovered``) or still affected. What the caller may not read is left out and counted
    (``hidden``)."""
    hidden = 0

    def run_json(key: int) -> dict[str, Any] | None:
        nonlocal hidden
        node = nodes.get(key)
        if node is None or not readable_run(node):
            hidden += 1
            return None
        program = node.run.program
        return {"id": node.id, "namespace": program.namespace, "application": program.application,
                "type": program.type, "program": program.name, "run_id": node.run.run_id, "status": node.status,
                "started_at": epoch_seconds(node.started_at), "stopped_at": epoch_seconds(node.stopped_at)}

    def data_json(data: DataRef) -> dict[str, str]:
        return {"namespace": data.namespace, "type": data.type, "name": data.name}

    by_level: dict[int, dict[str, list[Any]]] = {}
    for key, level in sorted(blast.levels.items(), key=lambda item: (item[1], _time(nodes.get(item[0])), item[0])):
        shown = run_json(key)
        if shown is not None:
            by_level.setdefault(level, {"runs": [], "datasets": []})["runs"].append(shown)
    recovered, still = [], []
    for data, level in sorted(blast.datasets.items(), key=lambda item: (item[1], item[0].id)):
        if not readable_data(data):
            hidden += 1
            continue
        if level > 0:
            held = fields.get(data)
            by_level.setdefault(level, {"runs": [], "datasets": []})["datasets"].append({
                **data_json(data), "fields": None if held is None else [
                    {"name": name, "kinds": sorted(kinds)} for name, kinds in sorted(held.items())]})
        last = latest.get(data)
        if last is not None and last.run_key not in blast.levels:
            rewriter = run_json(last.run_key)
            recovered.append({**data_json(data), "rewrittenAt": epoch_seconds(last.written), "by": rewriter})
        else:
            still.append(data_json(data))
    bad = by_level.pop(0, {"runs": []})["runs"]
    return {"dataset": data_json(dataset), "incidents": list(incidents), "badWrites": bad,
            "levels": [{"level": level, **entry} for level, entry in sorted(by_level.items())],
            "recovered": recovered, "stillAffected": still, "truncated": blast.truncated, "hidden": hidden}


def _time(node: RunNode | None) -> float:
    moment = node.run_at if node else None
    return moment.timestamp() if moment else 0.0

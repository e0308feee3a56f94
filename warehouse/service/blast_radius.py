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
    # each reached run: the bad versions it read (dataset -> the runs in the blast that wrote them)
    read: dict[int, dict[DataRef, set[int]]] = field(default_factory=dict)


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
        for step in steps:  # every bad version a run in the blast read, however it was reached first
            if step.to_run is not None and step.to_run in blast.levels:
                blast.read.setdefault(step.to_run, {}).setdefault(step.dataset, set()).add(step.from_run)
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


def affected_fields(blast: Blast, steps: Sequence[FieldStep]) -> dict[DataRef, dict[str, set[str]]]:
    """The fields of the datasets the blast's runs wrote that hold what came from the bad writes,
    each with the kinds it came by. Everything a bad write's run (level 0) wrote is bad. A run
    downstream makes its edge's target bad when the edge's source is a bad version the run read
    (``Blast.read``: written by a run of the blast) and that version's writer made the source
    field bad (or is a level-0 run). INDIRECT counts: rows chosen by bad values are bad rows.
    Repeated to a fixpoint, so runs reached by several paths see them all. A dataset whose
    writers in the blast recorded field lineage is present (with no field when none is bad);
    one they recorded none for is absent (its fields are not known)."""
    origins = {run for run, level in blast.levels.items() if level == 0}
    bad: dict[tuple[int, DataRef], dict[str, set[str]]] = {}  # (writer run, dataset) -> field -> kinds
    found: dict[DataRef, dict[str, set[str]]] = {}
    mine = [step for step in steps if blast.levels.get(step.run_key, 0) > 0]
    for step in mine:
        found.setdefault(step.target, {})

    def tainted(step: FieldStep) -> bool:
        writers = blast.read.get(step.run_key, {}).get(step.source, ())
        return any(writer in origins or step.source_field in bad.get((writer, step.source), {}) for writer in writers)

    changed = True
    while changed:
        changed = False
        for step in mine:
            if step.kind in bad.get((step.run_key, step.target), {}).get(step.field, ()) or not tainted(step):
                continue
            bad.setdefault((step.run_key, step.target), {}).setdefault(step.field, set()).add(step.kind)
            found[step.target].setdefault(step.field, set()).add(step.kind)
            changed = True
    return found


@dataclass(frozen=True, slots=True)
class Incident:
    """A dataset marked bad over [bad_from, bad_until) (``warehouse.db.incident_store`` keeps them)."""

    incident_id: int
    namespace: str
    dataset_type: str
    dataset: str
    bad_from: datetime
    bad_until: datetime
    reason: str
    source: str
    created_by: str
    created_at: datetime


def incident_json(incident: Incident) -> dict[str, Any]:
    """An incident as the API and the CLI show it."""
    return {"id": incident.incident_id, "namespace": incident.namespace, "type": incident.dataset_type,
            "dataset": incident.dataset, "from": epoch_seconds(incident.bad_from),
            "until": epoch_seconds(incident.bad_until), "reason": incident.reason, "source": incident.source,
            "createdBy": incident.created_by, "createdAt": epoch_seconds(incident.created_at)}


def incident_ranges(ranges: Sequence[tuple[datetime, datetime]], since: datetime | None
                    ) -> list[tuple[datetime, datetime]]:
    """The incidents' ranges of bad writes, without what lies before ``since``."""
    return [(start if since is None else max(start, since), end) for start, end in ranges]


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
    hidden_runs: set[int] = set()

    def run_json(key: int) -> dict[str, Any] | None:
        node = nodes.get(key)
        if node is None or not readable_run(node):
            hidden_runs.add(key)  # each run once, however many datasets it rewrote
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
            "recovered": recovered, "stillAffected": still, "truncated": blast.truncated,
            "hidden": hidden + len(hidden_runs)}


def _time(node: RunNode | None) -> float:
    moment = node.run_at if node else None
    return moment.timestamp() if moment else 0.0

"""Run-level lineage's walk and answer (pure core), over a hand-written graph of runs."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import pytest

from lineage.errors import InvalidLineageRequestError
from lineage.ids import DataRef, ProgramRef
from warehouse.service.run_hierarchy import RunRef
from warehouse.service.run_lineage import RunNode, RunStep, parse_direction, run_lineage_response, walk_runs

RAW, CLEAN, SECRET = (DataRef("default", "dataset", name) for name in ("raw", "clean", "secret"))
# 1 read raw written by 2, and secret written by 3; 2 read clean written by 4; 4 read raw, written by nobody.
UPSTREAM = {1: [RunStep(1, RAW, 2), RunStep(1, SECRET, 3)], 2: [RunStep(2, CLEAN, 4)], 3: [],
            4: [RunStep(4, RAW, None)]}


class Graph:
    def __init__(self) -> None:
        self.calls: list[tuple[int, ...]] = []

    def upstream(self, runs: Sequence[int]) -> list[RunStep]:
        self.calls.append(tuple(runs))
        return [step for run in runs for step in UPSTREAM[run]]

    def downstream(self, runs: Sequence[int]) -> list[RunStep]:
        raise AssertionError("not asked")

    def runs(self, keys: Sequence[int]) -> dict[int, RunNode]:
        return {key: node(key) for key in keys}


def node(key: int) -> RunNode:
    program = ProgramRef("default", "app", "spark", "secret_job" if key == 3 else f"job{key}")
    moment = datetime(2026, 11, 20, key, tzinfo=UTC)
    return RunNode(key, RunRef(program, f"r{key}"), "completed", moment, moment, moment)


def test_the_walk_goes_level_by_level_with_one_call_per_level_and_keeps_the_ends() -> None:
    graph = Graph()
    found = walk_runs(graph, 1, "upstream", 5, 100)
    assert found.levels == {1: 0, 2: 1, 3: 1, 4: 2}
    assert graph.calls == [(1,), (2, 3), (4,)]
    assert RunStep(4, RAW, None) in found.steps and found.truncated is None


def test_a_walk_cut_by_levels_or_by_runs_says_so() -> None:
    by_levels = walk_runs(Graph(), 1, "upstream", 1, 100)
    assert (set(by_levels.levels), by_levels.truncated) == ({1, 2, 3}, "levels")
    assert all(step.to_run in by_levels.levels for step in by_levels.steps)  # no edge to a run left out
    by_runs = walk_runs(Graph(), 1, "upstream", 5, 1)
    assert (set(by_runs.levels), by_runs.truncated) == ({1, 2}, "runs")
    exact = walk_runs(Graph(), 1, "upstream", 2, 100)  # level 2 is the last with runs: nothing was cut
    assert exact.truncated is None


def test_the_answer_hides_runs_and_datasets_the_caller_cannot_read() -> None:
    found = walk_runs(Graph(), 1, "upstream", 5, 100)
    answer = run_lineage_response(found, Graph().runs(sorted(found.levels)),
                                  readable_program=lambda run: run.program.name != "secret_job",
                                  readable_data=lambda data: data.name != "secret",
                                  links_of=lambda run: {"run": run.run_id})
    assert [(r["id"], r["level"]) for r in answer["runs"]] == [
        ("default.app.spark.job2.r2", 1), ("hidden.1", 1), ("default.app.spark.job4.r4", 2)]
    hidden = answer["runs"][1]
    assert (hidden["program"], hidden["run_id"], hidden["links"]) == ("", "", {})
    assert {"writer": "hidden.1", "dataset": {"id": "hidden.1", "namespace": "", "type": "hidden", "name": ""},
            "reader": "default.app.spark.job1.r1"} in answer["edges"]
    assert answer["ends"] == [{"run": "default.app.spark.job4.r4", "reason": "no run wrote it before this run",
                               "dataset": {"id": "dataset.default.raw", "namespace": "default", "type": "dataset",
                                           "name": "raw"}}]
    assert "secret" not in str(answer)


def test_direction_values() -> None:
    assert parse_direction(" Downstream ") == "downstream"
    with pytest.raises(InvalidLineageRequestError, match="direction 'up' is not one of upstream, downstream"):
        parse_direction("up")

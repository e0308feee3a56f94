"""The blast radius's pure core (issue 33): the walk run by run, and which fields of the affected
datasets hold what came from the bad writes."""

from __future__ import annotations

from collections.abc import Sequence

from lineage.ids import DataRef
from warehouse.service.blast_radius import FieldStep, affected_fields, spread
from warehouse.service.run_lineage import RunStep

BAD, MID, OUT, SIDE = (DataRef("ns", "dataset", name) for name in ("bad", "mid", "out", "side"))
# run 1 wrote bad; run 2 read it and wrote mid; run 3 read mid (and side, good) and wrote out
GRAPH = {1: [RunStep(1, BAD, 2)], 2: [RunStep(2, MID, 3)], 3: [RunStep(3, OUT, None)]}


def downstream(runs: Sequence[int]) -> list[RunStep]:
    return [step for run in runs for step in GRAPH.get(run, [])]


def test_the_walk_levels_runs_and_datasets_and_remembers_the_bad_versions_each_run_read() -> None:
    blast = spread([1], downstream, levels=5, max_runs=100)
    assert blast.levels == {1: 0, 2: 1, 3: 2}
    assert blast.datasets == {BAD: 0, MID: 1, OUT: 2}
    assert blast.read == {2: {BAD: {1}}, 3: {MID: {2}}}
    assert not blast.truncated


def test_the_walk_says_when_levels_or_the_run_limit_cut_it() -> None:
    assert spread([1], downstream, levels=1, max_runs=100).truncated
    cut = spread([1], downstream, levels=5, max_runs=2)
    assert cut.truncated and cut.levels == {1: 0, 2: 1}


def test_fields_are_bad_when_they_come_from_the_bad_dataset_or_a_bad_field_of_a_bad_version() -> None:
    blast = spread([1], downstream, levels=5, max_runs=100)
    steps = [FieldStep(2, BAD, "amount", MID, "total", "DIRECT"),
             FieldStep(2, BAD, "country", MID, "id", "INDIRECT"),  # rows chosen by bad values
             FieldStep(3, MID, "total", OUT, "body", "DIRECT"),
             FieldStep(3, MID, "total", OUT, "body", "INDIRECT"),
             FieldStep(3, MID, "label", OUT, "title", "DIRECT"),  # mid's label was not made bad
             FieldStep(3, SIDE, "email", OUT, "email", "DIRECT"),  # a good read
             FieldStep(1, BAD, "x", BAD, "x", "DIRECT")]  # the bad write itself: level 0, not a reader
    assert affected_fields(blast, steps) == {MID: {"total": {"DIRECT"}, "id": {"INDIRECT"}},
                                                  OUT: {"body": {"DIRECT", "INDIRECT"}}}


def test_a_field_made_bad_at_a_later_level_does_not_reach_back_to_an_earlier_one() -> None:
    graph = {1: [RunStep(1, BAD, 2), RunStep(1, BAD, 3)], 2: [RunStep(2, MID, None)], 3: [RunStep(3, OUT, 4)],
             4: [RunStep(4, MID, None)]}
    blast = spread([1], lambda runs: [s for run in runs for s in graph.get(run, [])], levels=5, max_runs=100)
    assert blast.levels == {1: 0, 2: 1, 3: 1, 4: 2}
    steps = [FieldStep(4, OUT, "o", MID, "late", "DIRECT"), FieldStep(3, BAD, "b", OUT, "o", "DIRECT"),
             FieldStep(2, MID, "late", OUT, "never", "DIRECT")]  # run 2 did not read a bad mid
    assert affected_fields(blast, steps) == {OUT: {"o": {"DIRECT"}}, MID: {"late": {"DIRECT"}}}


def test_a_run_reached_by_two_paths_sees_the_bad_fields_of_both() -> None:
    y, x = 2, 3  # both read the bad dataset; x also read what y wrote from it, after y wrote it
    graph = {1: [RunStep(1, BAD, y), RunStep(1, BAD, x)], y: [RunStep(y, MID, x)], x: [RunStep(x, OUT, None)]}
    blast = spread([1], lambda runs: [s for run in runs for s in graph.get(run, [])], levels=5, max_runs=100)
    assert blast.levels == {1: 0, y: 1, x: 1} and blast.read[x] == {BAD: {1}, MID: {y}}
    steps = [FieldStep(x, MID, "f", OUT, "g", "DIRECT"), FieldStep(y, BAD, "a", MID, "f", "DIRECT"),
             FieldStep(x, BAD, "b", OUT, "h", "DIRECT"), FieldStep(x, MID, "other", OUT, "k", "DIRECT")]
    assert affected_fields(blast, steps) == {MID: {"f": {"DIRECT"}}, OUT: {"g": {"DIRECT"}, "h": {"DIRECT"}}}


def test_a_dataset_whose_recorded_fields_hold_nothing_bad_lists_none_and_one_without_field_lineage_is_absent() -> None:
    blast = spread([1], downstream, levels=5, max_runs=100)
    assert affected_fields(blast, [FieldStep(3, SIDE, "email", OUT, "email", "DIRECT")]) == {OUT: {}}
    assert affected_fields(blast, []) == {}


def test_a_hidden_run_that_rewrote_two_datasets_is_counted_once() -> None:
    from datetime import UTC, datetime

    from lineage.ids import ProgramRef
    from warehouse.service.blast_radius import LatestWrite, blast_answer
    from warehouse.service.run_hierarchy import RunRef
    from warehouse.service.run_lineage import RunNode

    at = datetime(2026, 11, 28, tzinfo=UTC)
    blast = spread([1], lambda runs: [RunStep(1, MID, None), RunStep(1, OUT, None)] if 1 in runs else [],
                   levels=5, max_runs=100)
    node = RunNode(1, RunRef(ProgramRef("ns", "app", "spark", "bad"), "r-1"), "completed", at, at, at)
    answer = blast_answer(BAD, [], blast, {1: node}, {MID: LatestWrite(9, at), OUT: LatestWrite(9, at)}, {},
                          readable_data=lambda _: True, readable_run=lambda run: run.key != 9)
    assert [d["name"] for d in answer["recovered"]] == ["mid", "out"]
    assert [d["by"] for d in answer["recovered"]] == [None, None]
    assert answer["hidden"] == 1  # run 9, once

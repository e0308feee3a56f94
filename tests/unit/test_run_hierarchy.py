"""Lineage rolled up to parent or root runs (pure core), over hand-written relations and links."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from lineage.errors import InvalidLineageRequestError
from warehouse.service.lineage_graph import DataRef, ProgramRef, Relation, RunSpan, build_relations
from warehouse.service.run_hierarchy import RunLinks, RunRef, parse_rollup, roll_up

ORDERS, TOTALS, REPORT = (DataRef("default", "dataset", name) for name in ("orders", "totals", "report"))
LOAD, SUM = (ProgramRef("default", "default", "openlineage", f"orders_dag.{task}") for task in ("load", "sum"))
DAG = ProgramRef("default", "default", "openlineage", "orders_dag")
PLATFORM = ProgramRef("ops", "scheduler", "openlineage", "nightly")
ADHOC = ProgramRef("default", "Adhoc", "spark", "report")

RELATIONS = [
    Relation(ORDERS, LOAD, "read", ("load-1", "load-2"), ("reader",)),
    Relation(TOTALS, LOAD, "write", ("load-1", "load-2")),
    Relation(TOTALS, SUM, "read", ("sum-1",)),
    Relation(REPORT, ADHOC, "write", ("adhoc-1",)),
]
LINKS = {
    RunRef(LOAD, "load-1"): RunLinks(parent=RunRef(DAG, "dag-1"), root=RunRef(PLATFORM, "night-1")),
    RunRef(LOAD, "load-2"): RunLinks(parent=RunRef(DAG, "dag-2")),
    RunRef(SUM, "sum-1"): RunLinks(parent=RunRef(DAG, "dag-1"), root=RunRef(PLATFORM, "night-1")),
}


class Recorded:
    """The warehouse's answer, and the calls made to it."""

    def __init__(self) -> None:
        self.calls: list[list[RunRef]] = []

    def __call__(self, runs: Sequence[RunRef]) -> Mapping[RunRef, RunLinks]:
        self.calls.append(list(runs))
        return {run: LINKS[run] for run in runs if run in LINKS}


def relations(rows: list[Relation]) -> list[tuple[str, str, str, list[str], list[str]]]:
    return [(r["data"], r["program"], r["access"], r["runs"], r["components"]) for r in build_relations(rows)]


def test_rollup_parent_shows_the_parent_runs_program_in_place_of_its_childrens_with_runs_merged() -> None:
    assert relations(roll_up(RELATIONS, Recorded(), "parent")) == [
        ("dataset.default.orders", "openlineage.default.default.orders_dag", "read", ["dag-1", "dag-2"], ["reader"]),
        ("dataset.default.report", "spark.default.Adhoc.report", "write", ["adhoc-1"], []),  # no parent: as it was
        ("dataset.default.totals", "openlineage.default.default.orders_dag", "read", ["dag-1"], []),
        ("dataset.default.totals", "openlineage.default.default.orders_dag", "write", ["dag-1", "dag-2"], []),
    ]


def test_rollup_root_uses_the_recorded_root_and_else_the_parent() -> None:
    assert relations(roll_up(RELATIONS, Recorded(), "root")) == [
        ("dataset.default.orders", "openlineage.default.default.orders_dag", "read", ["dag-2"], ["reader"]),
        ("dataset.default.orders", "openlineage.ops.scheduler.nightly", "read", ["night-1"], ["reader"]),
        ("dataset.default.report", "spark.default.Adhoc.report", "write", ["adhoc-1"], []),
        ("dataset.default.totals", "openlineage.default.default.orders_dag", "write", ["dag-2"], []),
        ("dataset.default.totals", "openlineage.ops.scheduler.nightly", "read", ["night-1"], []),
        ("dataset.default.totals", "openlineage.ops.scheduler.nightly", "write", ["night-1"], []),
    ]


def test_the_links_of_every_run_are_asked_for_in_one_call() -> None:
    asked = Recorded()
    roll_up(RELATIONS, asked, "parent")
    assert asked.calls == [[RunRef(LOAD, "load-1"), RunRef(LOAD, "load-2"), RunRef(SUM, "sum-1"),
                            RunRef(ADHOC, "adhoc-1")]]  # in program id order, then run id
    nothing = Recorded()
    assert roll_up([], nothing, "parent") == [] and nothing.calls == []


@pytest.mark.parametrize(("value", "chosen"), [(None, None), ("", None), ("parent", "parent"), (" ROOT ", "root")])
def test_rollup_values(value: str | None, chosen: str | None) -> None:
    assert parse_rollup(value) == chosen


def test_an_unknown_rollup_is_refused() -> None:
    with pytest.raises(InvalidLineageRequestError, match="rollup 'workflow' is not one of parent, root"):
        parse_rollup("workflow")


def test_a_rolled_up_relation_counts_its_stand_in_runs_and_keeps_the_first_and_the_newest() -> None:
    rows = [Relation(TOTALS, LOAD, "write", ("load-1", "load-2"), (), RunSpan(2, 100, 300, "load-2")),
            Relation(TOTALS, SUM, "write", ("sum-1",), (), RunSpan(1, 50, 200, "sum-1"))]
    [merged] = build_relations(roll_up(rows, Recorded(), "parent"))
    # load-1 and sum-1 both stand as dag-1: three runs are two runs of the DAG
    assert (merged["runs"], merged["runCount"], merged["firstRun"], merged["lastRun"], merged["latestRun"]) == (
        ["dag-1", "dag-2"], 2, 50, 300, "dag-2")


def test_a_declared_access_stays_its_own_program_s_under_a_roll_up() -> None:
    """Declared lineage names no run, so nothing stands in for it: the task's declared read stays
    the task's, beside its runs rolled up to the DAG's."""
    rows = [Relation(ORDERS, LOAD, "read", ("load-1",), ("reader",), RunSpan(1, 10, 10, "load-1"), declared=True),
            Relation(REPORT, SUM, "write", (), (), RunSpan(0, None, None, None), declared=True)]
    rolled = build_relations(roll_up(rows, Recorded(), "parent"))
    assert [(r["data"], r["program"], r["runs"], r["runCount"], r["declared"]) for r in rolled] == [
        ("dataset.default.orders", "openlineage.default.default.orders_dag", ["dag-1"], 1, False),
        ("dataset.default.orders", "openlineage.default.default.orders_dag.load", [], 0, True),
        ("dataset.default.report", "openlineage.default.default.orders_dag.sum", [], 0, True)]

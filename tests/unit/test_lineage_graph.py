from __future__ import annotations

from collections.abc import Sequence

import pytest

from lineage.limits import check_levels
from warehouse.service.lineage_graph import (
    DataRef,
    InvalidLineageRequestError,
    ProgramRef,
    Relation,
    RunSpan,
    build_relations,
    hide_unreadable,
    lineage_response,
    parse_collapse,
    parse_runs_shape,
    programs_reached,
    walk_lineage,
)

PURCHASES = DataRef("default", "dataset", "purchases")
HISTORY = DataRef("default", "dataset", "history")
BUILDER = ProgramRef("default", "PurchaseHistory", "mapreduce", "PurchaseHistoryBuilder")


def test_relations_are_ordered_by_data_program_access_with_sorted_runs_and_components() -> None:
    rows = [Relation(PURCHASES, BUILDER, "read", ("r2", "r1"), ("mapper",), RunSpan(2, 100, 200, "r2")),
            Relation(HISTORY, BUILDER, "write", ("r1",), ("reducer",), RunSpan(1, 100, 100, "r1"))]
    assert build_relations(rows) == [
        {"data": "dataset.default.history", "program": "mapreduce.default.PurchaseHistory.PurchaseHistoryBuilder",
         "access": "write", "runs": ["r1"], "components": ["reducer"],
         "runCount": 1, "firstRun": 100, "lastRun": 100, "latestRun": "r1", "declared": False},
        {"data": "dataset.default.purchases", "program": "mapreduce.default.PurchaseHistory.PurchaseHistoryBuilder",
         "access": "read", "runs": ["r1", "r2"], "components": ["mapper"],
         "runCount": 2, "firstRun": 100, "lastRun": 200, "latestRun": "r2", "declared": False},
    ]


def test_collapse_access_merges_access_types_runs_components_and_counts_each_run_once() -> None:
    rows = [Relation(PURCHASES, BUILDER, "read", ("r1", "r2"), ("mapper",), RunSpan(2, 100, 300, "r2")),
            Relation(PURCHASES, BUILDER, "write", ("r2", "r3"), (), RunSpan(2, 200, 300, "r3"))]
    assert build_relations(rows[::-1], frozenset({"access"})) == build_relations(rows, frozenset({"access"}))
    assert build_relations(rows, frozenset({"access"})) == [
        {"data": "dataset.default.purchases", "program": "mapreduce.default.PurchaseHistory.PurchaseHistoryBuilder",
         "access": "read,write", "runs": ["r1", "r2", "r3"], "components": ["mapper"],
         "runCount": 3, "firstRun": 100, "lastRun": 300, "latestRun": "r3", "declared": False}]  # ties: by run id


def test_collapse_run_and_component_keep_the_default_grouping() -> None:
    rows = [Relation(PURCHASES, BUILDER, "read", ("r2", "r1"), ("mapper",))]
    assert build_relations(rows, frozenset({"run", "component"})) == [
        {"data": "dataset.default.purchases", "program": "mapreduce.default.PurchaseHistory.PurchaseHistoryBuilder",
         "access": "read", "runs": ["r1", "r2"], "components": ["mapper"],
         "runCount": None, "firstRun": None, "lastRun": None, "latestRun": None, "declared": False}]


def test_a_declared_relation_counts_no_run_and_marks_a_runtime_one_it_joins() -> None:
    declared_only = Relation(HISTORY, BUILDER, "write", (), (), RunSpan(0, None, None, None), declared=True)
    both = Relation(PURCHASES, BUILDER, "read", ("r1",), (), RunSpan(1, 100, 100, "r1"), declared=True)
    answer = build_relations([declared_only, both])
    assert [(r["access"], r["runs"], r["runCount"], r["latestRun"], r["declared"]) for r in answer] == [
        ("write", [], 0, None, True), ("read", ["r1"], 1, "r1", True)]
    runtime_write = Relation(HISTORY, BUILDER, "write", ("r2",), (), RunSpan(1, 200, 200, "r2"))
    collapsed = build_relations([declared_only, runtime_write, both], frozenset({"access"}))
    assert [(r["data"], r["runs"], r["runCount"], r["firstRun"], r["declared"]) for r in collapsed] == [
        ("dataset.default.history", ["r2"], 1, 200, True), ("dataset.default.purchases", ["r1"], 1, 100, True)]
    hidden = hide_unreadable([declared_only], lambda _: True, lambda _: False)
    assert hidden[0].declared and hidden[0].program.type == "hidden" and hidden[0].span is None


@pytest.mark.parametrize(("shape", "runs"), [("ids", ["r1", "r2"]), ("count", []), ("latest", ["r2"])])
def test_the_runs_shape_chooses_the_ids_shown_and_keeps_the_counts(shape: str, runs: list[str]) -> None:
    rows = [Relation(PURCHASES, BUILDER, "read", ("r2", "r1") if shape == "ids" else (), (),
                     RunSpan(2, 100, 200, "r2"))]
    [relation] = build_relations(rows, runs=parse_runs_shape(shape))
    assert relation["runs"] == runs
    assert (relation["runCount"], relation["firstRun"], relation["lastRun"]) == (2, 100, 200)


def test_an_unknown_runs_shape_is_refused() -> None:
    assert parse_runs_shape(" Count ") == "count"
    with pytest.raises(InvalidLineageRequestError, match="runs 'all' is not one of ids, count, latest"):
        parse_runs_shape("all")


def test_response_carries_id_maps_in_seed_001_shape() -> None:
    response = lineage_response(1, 2, [Relation(PURCHASES, BUILDER, "read", ("r1",))])
    assert response["programs"] == {"mapreduce.default.PurchaseHistory.PurchaseHistoryBuilder": {"id": {
        "namespace": "default", "application": "PurchaseHistory", "type": "mapreduce", "id": "PurchaseHistoryBuilder"},
        "jobType": None}}  # an OpenLineage job's type, which the store adds
    assert response["data"] == {"dataset.default.purchases": {"id": {
        "namespace": "default", "type": "dataset", "id": "purchases"}}}
    assert (response["start"], response["end"]) == (1, 2)


@pytest.mark.parametrize("levels", [0, 101, -1])
def test_levels_outside_1_to_100_are_refused(levels: int) -> None:
    expected = fr"levels must be between 1 and 100 \(LINEAGE_LIMIT_LEVELS\), got {levels}"
    with pytest.raises(InvalidLineageRequestError, match=expected):
        check_levels(levels)


def test_unknown_collapse_is_refused() -> None:
    assert parse_collapse(["access", " RUN "]) == frozenset({"access", "run"})
    with pytest.raises(InvalidLineageRequestError, match="collapse 'program' is not one of access, run, component"):
        parse_collapse(["program"])


def test_unreadable_nodes_are_hidden_without_names_and_the_shape_is_kept() -> None:
    from warehouse.service.lineage_graph import DataRef, ProgramRef, Relation, hide_unreadable

    secret_data, open_data = DataRef("hr", "dataset", "salaries"), DataRef("sales", "dataset", "orders")
    secret_program = ProgramRef("hr", "Payroll", "spark", "Pay")
    open_program = ProgramRef("sales", "Shop", "spark", "L")
    relations = [Relation(secret_data, open_program, "read", ("r1",), ("c",)),
                 Relation(open_data, open_program, "write", ("r1",)),
                 Relation(secret_data, secret_program, "write", ("secret-run",), ("x",))]
    shown = hide_unreadable(relations, lambda d: d.namespace == "sales", lambda p: p.namespace == "sales")
    text = repr(shown)
    assert "salaries" not in text and "Payroll" not in text and "secret-run" not in text and "hr" not in text
    assert [(r.data.id, r.program.id, r.access, r.runs, r.components) for r in shown] == [
        ("hidden..1", "spark.sales.Shop.L", "read", ("r1",), ()),
        ("dataset.sales.orders", "spark.sales.Shop.L", "write", ("r1",), ()),
        ("hidden..1", "hidden...1", "write", (), ())]


def test_field_path_references_to_unreadable_datasets_are_hidden() -> None:
    from warehouse.service.field_hiding import hide_unreadable_sources

    body = {"paths": [{"operations": [{"id": "read", "sources": [
        {"namespace": "hr", "type": "dataset", "name": "salaries"},
        {"namespace": "sales", "type": "dataset", "name": "orders"}]}],
        "sources": [{"namespace": "hr", "type": "dataset", "name": "salaries", "field": "pay"}]}], "levels": 1}
    shown = hide_unreadable_sources(body, lambda namespace, kind, name: namespace == "sales")
    assert "salaries" not in repr(shown) and "pay" not in repr(shown) and "hr" not in repr(shown)
    assert shown["paths"][0]["operations"][0]["sources"] == [
        {"namespace": "", "type": "hidden", "name": ""}, {"namespace": "sales", "type": "dataset", "name": "orders"}]
    assert shown["paths"][0]["sources"] == [{"namespace": "", "type": "hidden", "name": "", "field": ""}]
    assert shown["levels"] == 1


class Warehouse:
    """In-memory ``LineageQueries``: accesses as (data key, program key) pairs; data and programs
    have separate key spaces (data 1 and program 1 are two nodes). Records each call."""

    def __init__(self, accesses: list[tuple[int, int]], keys: dict[DataRef, int] | None = None) -> None:
        self.accesses, self.keys = accesses, keys or {PURCHASES: 1}
        self.calls: list[tuple[str, tuple[int, ...]]] = []

    def dataset_key(self, data: DataRef) -> int | None:
        return self.keys.get(data)

    def programs_of(self, data_keys: Sequence[int]) -> list[int]:
        self.calls.append(("programs_of", tuple(data_keys)))
        return [program for data, program in self.accesses if data in data_keys]

    def data_of(self, program_keys: Sequence[int]) -> list[int]:
        self.calls.append(("data_of", tuple(program_keys)))
        return [data for data, program in self.accesses if program in program_keys]

    def relations(self, program_keys: Sequence[int]) -> list[Relation]:
        self.calls.append(("relations", tuple(program_keys)))
        return [Relation(DataRef("default", "dataset", f"d{data}"), ProgramRef("default", "A", "spark", f"p{program}"),
                         "read", ("r",)) for data, program in self.accesses if program in program_keys]


# data 1 <- program 1 -> data 2 <- program 2 -> data 3 <- program 3 -> data 4
PIPELINE = [(1, 1), (2, 1), (2, 2), (3, 2), (3, 3), (4, 3)]


@pytest.mark.parametrize(("levels", "programs", "truncated"), [
    (1, [1], True), (2, [1, 2], True), (3, [1, 2, 3], False), (10, [1, 2, 3], False)])
def test_the_walk_reaches_the_programs_within_its_levels_and_says_when_it_was_cut(
        levels: int, programs: list[int], truncated: bool) -> None:
    warehouse = Warehouse(PIPELINE)
    assert programs_reached(1, warehouse.programs_of, warehouse.data_of, levels) == (programs, truncated)


def test_each_level_is_two_calls_over_the_whole_frontier_and_the_walk_ends_when_nothing_is_new() -> None:
    # data 1 is read by programs 1 and 2, which write data 2 and 3, both read by program 3 (-> data 4).
    warehouse = Warehouse([(1, 1), (1, 2), (2, 1), (3, 2), (2, 3), (3, 3), (4, 3)])
    assert programs_reached(1, warehouse.programs_of, warehouse.data_of, 10) == ([1, 2, 3], False)
    assert warehouse.calls == [("programs_of", (1,)), ("data_of", (1, 2)), ("programs_of", (2, 3)),
                               ("data_of", (3,)), ("programs_of", (4,))]


def test_a_cycle_through_programs_ends_the_walk() -> None:
    # program 1 reads data 1 and writes data 2; program 2 reads data 2 and writes data 1: both
    # accessed both, so the first level visits everything and the next finds nothing new.
    warehouse = Warehouse([(1, 1), (2, 1), (2, 2), (1, 2)])
    assert programs_reached(1, warehouse.programs_of, warehouse.data_of, 100) == ([1, 2], False)
    assert warehouse.calls == [("programs_of", (1,)), ("data_of", (1, 2)), ("programs_of", (2,))]


def test_walk_lineage_answers_the_relations_of_the_programs_visited() -> None:
    warehouse = Warehouse(PIPELINE)
    relations, truncated = walk_lineage(warehouse, PURCHASES, 2)
    assert truncated  # program 3 lies a level further
    assert [(r.data.name, r.program.name) for r in relations] == [("d1", "p1"), ("d2", "p1"), ("d2", "p2"),
                                                                   ("d3", "p2")]
    assert warehouse.calls[-1] == ("relations", (1, 2))


def test_walk_lineage_of_unknown_or_unaccessed_data_is_empty_without_a_relations_query() -> None:
    assert walk_lineage(Warehouse(PIPELINE), HISTORY, 10) == ([], False)
    lonely = Warehouse(PIPELINE, {PURCHASES: 9})
    assert walk_lineage(lonely, PURCHASES, 10) == ([], False)
    assert lonely.calls == [("programs_of", (9,))]

"""The column lineage accuracy benchmark's pure parts: the notation of expectations, the scoring
of expected against captured, and the labelled case set's shape (``bench.column_accuracy``)."""

from __future__ import annotations

import pytest

from bench.column_accuracy.case import Expected, parse
from bench.column_accuracy.scoring import by_shape, differences, score_case, table


def test_the_notation_gives_the_type_from_the_subtype_and_keeps_nested_fields() -> None:
    assert parse("people.id IDENTITY, orders.amount AGGREGATION, people.age FILTER") == {
        Expected("people", "id", "DIRECT", "IDENTITY"), Expected("orders", "amount", "DIRECT", "AGGREGATION"),
        Expected("people", "age", "INDIRECT", "FILTER")}
    assert parse("people.address.city IDENTITY") == {Expected("people", "address.city", "DIRECT", "IDENTITY")}
    assert parse("people.ssn TRANSFORMATION masked") == {Expected("people", "ssn", "DIRECT", "TRANSFORMATION", True)}
    assert parse("") == set() and parse(" , ") == set()


@pytest.mark.parametrize("notation", [
    "people.id", "id IDENTITY", "people.id COPY", "people.id IDENTITY hidden", "people.id IDENTITY masked x",
    "people.id identity", "'; drop table people; -- IDENTITY",
])
def test_a_notation_that_is_not_dataset_field_subtype_is_refused_with_where_it_is(notation: str) -> None:
    with pytest.raises(ValueError, match="case_x/out/col"):
        parse(notation, where="case_x/out/col")


def expected(**columns: str) -> dict[str, dict[str, set[Expected]]]:
    return {"out": {column: parse(notation) for column, notation in columns.items()}}


def test_a_case_captured_as_labelled_is_exact_and_scores_every_ratio_full() -> None:
    labelled = expected(id="people.id IDENTITY, people.age FILTER", total="orders.amount AGGREGATION")
    outcome = score_case("same", "filter", labelled, labelled)
    assert outcome.right and outcome.score.exact == 1 and differences(outcome) == []
    assert outcome.score.row()[1:] == ["1/1", "100.0%", "100.0%", "100.0%", "100.0%", "100.0%"]


def test_a_wrong_kind_is_a_right_source_and_a_false_positive_and_negative_kind() -> None:
    labelled = expected(adult_age="people.age TRANSFORMATION, people.age CONDITIONAL")
    captured = expected(adult_age="people.age TRANSFORMATION, people.age FILTER, people.id FILTER")
    outcome = score_case("kinds", "conditional", labelled, captured)
    score = outcome.score
    assert not outcome.right and score.exact == 0
    assert (score.expected_sources, score.found_sources, score.right_sources) == (1, 2, 1)  # people.id is extra
    assert (score.expected_kinds, score.found_kinds, score.right_kinds) == (2, 3, 1)
    assert (score.shared_sources, score.agreeing_sources) == (1, 0)  # age's kinds differ
    assert differences(outcome) == ["missing out.adult_age <- people.age CONDITIONAL",
                                    "extra   out.adult_age <- people.age FILTER",
                                    "extra   out.adult_age <- people.id FILTER"]


def test_a_column_or_output_on_one_side_only_counts_against_the_capture() -> None:
    labelled = {"a": {"id": parse("people.id IDENTITY")}, "b": {"name": parse("people.first IDENTITY")}}
    captured = {"a": {"id": parse("people.id IDENTITY"), "extra": parse("people.last IDENTITY")}}
    score = score_case("partial", "multi-output", labelled, captured).score
    assert (score.expected_sources, score.found_sources, score.right_sources) == (2, 2, 1)


def test_a_failed_case_is_wrong_and_says_why() -> None:
    outcome = score_case("broken", "join", expected(id="people.id IDENTITY"), {}, error="AnalysisException: x")
    assert not outcome.right and differences(outcome) == ["failed: AnalysisException: x"]
    assert outcome.score.right_sources == 0 and outcome.score.expected_sources == 1


def test_the_table_sums_cases_by_shape_then_in_total() -> None:
    labelled = expected(id="people.id IDENTITY")
    outcomes = [score_case("a", "join", labelled, labelled), score_case("b", "join", labelled, {}),
                score_case("c", "window", labelled, labelled)]
    shapes = by_shape(outcomes)
    assert list(shapes) == ["join", "window", "total"]
    assert (shapes["join"].cases, shapes["join"].exact, shapes["total"].exact) == (2, 1, 2)
    rendered = table(outcomes)
    assert rendered.splitlines()[-1].split()[:4] == ["total", "3", "2/3", "100.0%"]
    assert table(outcomes, markdown=True).splitlines()[1].startswith("|---|")


def test_the_labelled_set_has_at_least_80_cases_across_the_shapes_in_both_forms() -> None:
    from bench.column_accuracy.cases import CASES

    names = [case.name for case in CASES]
    assert len(names) >= 80 and len(set(names)) == len(names)
    assert not [name for name in names if "__" in name]
    shapes = {case.shape for case in CASES}
    assert {"join", "aggregate", "window", "union", "subquery", "cte", "generator", "nested", "multi-output",
            "distinct", "table", "view"} <= shapes
    assert {case.form for case in CASES} == {"sql", "dataframe"}
    assert all(case.expected and all(case.expected.values()) for case in CASES)  # every case expects columns


def test_a_column_expected_to_read_nothing_must_still_be_written() -> None:
    """A literal column has no sources to count: a case is exact only when its written columns
    are the expected ones (an output never captured is wrong, not vacuously right)."""
    labelled = expected(id="people.id IDENTITY", version="")
    assert not score_case("lost", "projection", labelled, expected(id="people.id IDENTITY")).right
    outcome = score_case("none", "projection", {"out": {"version": set()}}, {})
    assert not outcome.right and differences(outcome) == ["column out.version not written"]
    extra = score_case("more", "projection", expected(id="people.id IDENTITY"),
                       expected(id="people.id IDENTITY", other=""))
    assert differences(extra) == ["column out.other written, not expected"]
    assert score_case("same", "projection", labelled, labelled).right

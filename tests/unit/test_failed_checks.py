"""Failed checks of a Great Expectations result (pure): both shapes GX 1.x saves, damaged entries,
and the time of the validation. (The CLI on a real GX run: tests/plugin/test_blast_radius.py.)"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from lineage.errors import InvalidRequestError
from warehouse.service.failed_checks import gx_failures


def test_a_checkpoint_result_lists_its_failed_expectations_once() -> None:
    result = {"success": False, "validation_results": [
        {"success": False, "expectations": [
            {"expectation_type": "expect_column_values_to_not_be_null", "success": False, "kwargs": {"column": "id"}},
            {"expectation_type": "expect_table_row_count_to_be_between", "success": True, "kwargs": {}},
            {"expectation_type": "expect_column_values_to_not_be_null", "success": False, "kwargs": {"column": "id"}},
            {"expectation_type": "expect_column_values_to_be_unique\r\n", "success": False, "kwargs": {"column": 7}},
            {"expectation_type": "", "success": False}, {"success": False}, "damaged", None]}]}
    failures = gx_failures(result)
    assert failures.checks == [{"assertion": "expect_column_values_to_not_be_null", "column": "id"},
                               {"assertion": "expect_column_values_to_be_unique"}]
    assert failures.checked_at is None  # a checkpoint's description has no time


def test_a_checkpoint_of_several_validations_is_refused_and_a_huge_one_is_cut() -> None:
    one = {"success": False, "expectations": [{"expectation_type": "x", "success": False}]}
    with pytest.raises(InvalidRequestError, match="2 validations"):
        gx_failures({"validation_results": [one, one]})
    many = {"results": [{"success": False, "expectation_config": {"type": f"check_{i}"}} for i in range(50_000)]}
    assert len(gx_failures(many).checks) == 100


def test_a_validation_result_says_when_it_ran() -> None:
    result = {"success": False, "results": [{"success": False, "expectation_config": {
        "type": "expect_column_max_to_be_between", "kwargs": {"column": "amount", "batch_id": "b"}}}],
        "meta": {"validation_time": "2026-11-27T10:00:00+00:00", "run_id": {"run_time": "2026-11-27T09:00:00"}}}
    failures = gx_failures(result)
    assert failures.checks == [{"assertion": "expect_column_max_to_be_between", "column": "amount"}]
    assert failures.checked_at == datetime(2026, 11, 27, 10, tzinfo=UTC)
    result["meta"] = {"validation_time": "yesterday", "run_id": {"run_time": "2026-11-27T09:00:00"}}
    assert gx_failures(result).checked_at == datetime(2026, 11, 27, 9, tzinfo=UTC)  # naive: UTC


@pytest.mark.parametrize("result", [[], "text", {"success": False}, {"results": "damaged"}])
def test_what_is_not_a_gx_result_is_refused(result: object) -> None:
    with pytest.raises(InvalidRequestError):
        gx_failures(result)

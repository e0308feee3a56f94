"""Access types of dataset methods (seed 002): the nesting rules, defaults, and what a run records."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lineage.client.access_types import (
    AccessType,
    AccessTypeError,
    lineage_dataset,
    no_access,
    read_only,
    read_write,
    write_only,
)
from lineage.client.run_context import RunContext

A = AccessType
SUBSET = {(A.NO_ACCESS, caller) for caller in A} | {(t, t) for t in A} | {(A.READ, A.READ_WRITE),
                                                                           (A.WRITE, A.READ_WRITE)}
DECORATORS = {A.NO_ACCESS: no_access, A.READ: read_only, A.WRITE: write_only, A.READ_WRITE: read_write}


@pytest.mark.parametrize("inner", list(A))
@pytest.mark.parametrize("outer", list(A))
def test_the_subset_table_of_seed_002(inner: AccessType, outer: AccessType) -> None:
    assert inner.within(outer) is ((inner, outer) in SUBSET)


def nested(outer: AccessType | None, inner: AccessType | None) -> Any:
    """A dataset whose method of type ``outer`` calls one of type ``inner`` (None: unannotated)."""
    def mark(kind: AccessType | None, method: Any) -> Any:
        return DECORATORS[kind](method) if kind else method

    def outer_method(self: Any) -> str:
        return str(self.inner())

    def inner_method(self: Any) -> str:
        return "done"

    members = {"dataset_name": "table", "outer": mark(outer, outer_method), "inner": mark(inner, inner_method)}
    return lineage_dataset(type("Table", (), members))()


@given(st.sampled_from(list(A)), st.sampled_from(list(A)))
def test_a_nested_call_must_be_the_same_or_a_subset_of_its_callers(outer: AccessType, inner: AccessType) -> None:
    table = nested(outer, inner)
    if (inner, outer) in SUBSET:
        assert table.outer() == "done"
    else:
        with pytest.raises(AccessTypeError, match=f"a {inner.value} call inside a {outer.value} call"):
            table.outer()


@given(st.sampled_from(list(A)))
def test_an_unannotated_nested_method_takes_its_callers_type(outer: AccessType) -> None:
    assert nested(outer, None).outer() == "done"  # never raises: it inherits


def test_defaults_read_write_at_top_level_and_no_access_for_constructors(tmp_path: Path) -> None:
    @lineage_dataset
    class Table:
        def __init__(self, name: str) -> None:
            self.dataset_name = name

        def touch(self) -> None:
            """Unannotated."""

        @read_only
        def scan(self) -> None:
            self.touch()  # unannotated inside read_only: a read, allowed

        @write_only
        def append(self) -> None:
            self.scan_inside()

        @read_only
        def scan_inside(self) -> None:
            """A read inside a write: refused."""

    with RunContext("default", "App", "spark", "Job", log_root=str(tmp_path)) as run:
        table = Table("purchases")  # the constructor records nothing
        table.scan()
        table.scan()  # recorded once per run
        table.touch()
        with pytest.raises(AccessTypeError, match="a read call inside a write call"):
            table.append()
    events = [json.loads(line) for path in run.files for line in Path(path).read_text().splitlines()]
    accesses = [(e["payload"]["dataset"]["name"], e["payload"]["access"]) for e in events
                if e["kind"] == "dataset_access"]
    assert accesses == [("purchases", "read"), ("purchases", "read_write"), ("purchases", "write")]


def test_calls_outside_a_run_record_nothing_and_still_check_the_rules() -> None:
    @lineage_dataset
    class Table:
        dataset_name = "t"

        @no_access
        def meta(self) -> None:
            self.read()

        @read_only
        def read(self) -> None:
            """Read."""

    with pytest.raises(AccessTypeError, match="a read call inside a no_access call"):
        Table().meta()

"""Node ids (``lineage.ids``): every id parses back to what it was rendered from, distinct
entities never share one, and ids of parts without special characters read as before."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lineage import ids
from lineage.errors import InvalidEntityError
from lineage.ids import DataRef, ProgramRef

# free text, rich in the characters the rule is about
TEXT = st.text(alphabet=st.sampled_from(["a", "b", ".", "\\", "|", "/", "é", " "]), max_size=8) | st.text(max_size=8)
NAMESPACE = st.from_regex(r"[A-Za-z0-9_]{1,8}", fullmatch=True)  # the event format's rule: no '.' or '\'
PROGRAM_TYPE = st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True)
PROGRAMS = st.builds(ProgramRef, namespace=NAMESPACE | TEXT, application=TEXT, type=PROGRAM_TYPE | TEXT, name=TEXT)
DATA = st.builds(DataRef, namespace=NAMESPACE | TEXT, type=st.sampled_from(["dataset", "stream"]) | TEXT, name=TEXT)


@given(st.lists(TEXT, min_size=1, max_size=6))
def test_ids_parse_back_to_their_parts(parts: list[str]) -> None:
    assert ids.parse(ids.render(parts), len(parts)) == tuple(parts)


@given(st.lists(TEXT, min_size=1, max_size=5), TEXT)
def test_an_id_is_its_prefix_and_its_last_part(parts: list[str], last: str) -> None:
    assert ids.render([*parts, last]) == ids.prefix(parts) + last


@given(PROGRAMS)
def test_program_ids_parse_back_to_the_program(program: ProgramRef) -> None:
    assert ProgramRef.parse(program.id) == program


@given(DATA)
def test_data_ids_parse_back_to_the_data(data: DataRef) -> None:
    assert DataRef.parse(data.id) == data


@given(PROGRAMS, TEXT)
def test_program_run_ids_parse_back_to_the_program_and_run(program: ProgramRef, run: str) -> None:
    assert ProgramRef.parse_run_id(program.run_id(run)) == (program, run)


@given(PROGRAMS, PROGRAMS)
def test_distinct_programs_have_distinct_ids(one: ProgramRef, other: ProgramRef) -> None:
    assert (one.id == other.id) == (one == other)


@given(DATA, DATA)
def test_distinct_data_have_distinct_ids(one: DataRef, other: DataRef) -> None:
    assert (one.id == other.id) == (one == other)


@given(PROGRAMS, TEXT, PROGRAMS, TEXT)
def test_distinct_program_runs_have_distinct_ids(one: ProgramRef, run: str, other: ProgramRef, other_run: str) -> None:
    assert (one.run_id(run) == other.run_id(other_run)) == ((one, run) == (other, other_run))


@pytest.mark.parametrize(("program", "expected"), [
    (ProgramRef("default", "PurchaseHistory", "mapreduce", "PurchaseHistoryBuilder"),
     "mapreduce.default.PurchaseHistory.PurchaseHistoryBuilder"),          # CDAP's, unchanged
    (ProgramRef("default", "a.b", "openlineage", "c"), "openlineage.default.a\\.b.c"),
    (ProgramRef("default", "a", "openlineage", "b.c"), "openlineage.default.a.b.c"),
    (ProgramRef("default", "a\\", "openlineage", "b"), "openlineage.default.a\\\\.b"),
    (ProgramRef("default", "orders_dag", "openlineage", "s3://x/build.totals"),
     "openlineage.default.orders_dag.s3://x/build.totals"),                  # the last part as it is
    (ProgramRef("", "", "hidden", "1"), "hidden...1"),                       # the hidden stand-in
])
def test_program_ids(program: ProgramRef, expected: str) -> None:
    assert program.id == expected


@pytest.mark.parametrize(("data", "expected"), [
    (DataRef("default", "dataset", "purchases"), "dataset.default.purchases"),
    (DataRef("default", "dataset", "postgres://db:5432/shop.public.orders"),
     "dataset.default.postgres://db:5432/shop.public.orders"),
    (DataRef("default", "stream", "a\\b.c"), "stream.default.a\\b.c"),
])
def test_data_ids_read_as_before(data: DataRef, expected: str) -> None:
    assert data.id == expected


def test_program_run_ids_escape_the_program_but_not_the_run() -> None:
    assert ProgramRef("default", "ax", "openlineage", "p").run_id("q.r") == "default.ax.openlineage.p.q.r"
    assert ProgramRef("default", "ax", "openlineage", "p.q").run_id("r") == "default.ax.openlineage.p\\.q.r"
    assert ProgramRef("default", "PurchaseHistory", "flow", "PurchaseFlow").run_id_prefix == (
        "default.PurchaseHistory.flow.PurchaseFlow.")


@pytest.mark.parametrize(("text", "count"), [
    ("dataset.default", 3),          # too few parts
    ("a\\b.c.d", 3),                 # an escape of neither '\' nor '.'
    ("a.b\\", 3),                    # a lone backslash before the last part
    ("anything", 0),
])
def test_malformed_ids_are_refused(text: str, count: int) -> None:
    with pytest.raises(InvalidEntityError):
        ids.parse(text, count)

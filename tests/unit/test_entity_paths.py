"""``to_path``, the inverse of ``from_path``: the REST path the API's links are built from."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lineage.model.metadata_entity import entity, from_path, to_path

RESERVED = {"namespace", "dataset", "stream", "application", "version", "type", "program", "run",
            "datasets", "streams", "apps", "runs"}
values = st.text(st.characters(blacklist_characters="/\x00", blacklist_categories=("Cs",)), min_size=1, max_size=12)
custom_keys = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True).filter(lambda key: key not in RESERVED)


@st.composite
def paths(draw: st.DrawFn) -> tuple[str, list[str], str | None]:
    """(namespace, segments, version) of a path the API serves."""
    base = draw(st.sampled_from(["", "datasets", "streams", "apps", "program", "run"]))
    segments: list[str] = []
    version = None
    if base in ("datasets", "streams"):
        segments = [base, draw(values)]
    elif base:
        segments = ["apps", draw(values)]
        version = draw(st.none() | values)
        if base in ("program", "run"):
            segments += [draw(custom_keys.filter(lambda key: key not in ("field", "partition", "file"))), draw(values)]
        if base == "run":
            segments += ["runs", draw(values)]
    # custom pairs after an application without a program must start with field/partition/file
    first = st.sampled_from(["field", "partition", "file"]) if base == "apps" else custom_keys
    keys = draw(st.lists(custom_keys, max_size=2, unique=True))
    if keys:
        keys[0] = draw(first.filter(lambda key: key not in keys[1:]))
    for key in keys:
        segments += [key, draw(values)]
    return draw(values), segments, version


@given(paths())
def test_to_path_inverts_from_path(path: tuple[str, list[str], str | None]) -> None:
    namespace, segments, version = path
    subject = from_path(namespace, segments, version)
    assert to_path(subject) == (namespace, tuple(segments), version)
    assert from_path(*to_path(subject)) == subject  # type: ignore[arg-type]


@pytest.mark.parametrize(("parts", "expected"), [
    ([("namespace", "ns"), ("dataset", "orders")], ("ns", ("datasets", "orders"), None)),
    ([("namespace", "ns"), ("stream", "clicks")], ("ns", ("streams", "clicks"), None)),
    ([("namespace", "ns"), ("application", "Shop"), ("version", "1.0")], ("ns", ("apps", "Shop"), "1.0")),
    ([("namespace", "ns"), ("application", "Shop"), ("type", "spark"), ("program", "Load"), ("run", "r1")],
     ("ns", ("apps", "Shop", "spark", "Load", "runs", "r1"), None)),
    ([("namespace", "ns"), ("dataset", "orders"), ("field", "a/b")], ("ns", ("datasets", "orders", "field", "a/b"),
                                                                      None)),
    ([("database", "crm"), ("table", "customers")], (None, ("database", "crm", "table", "customers"), None)),
])
def test_to_path_of_each_kind_of_entity(parts: list[tuple[str, str]], expected: tuple[object, ...]) -> None:
    assert to_path(entity(parts)) == expected

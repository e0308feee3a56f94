"""Metadata entities (seed 000): build, parse, render, validate, REST paths."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lineage.model.metadata_entity import InvalidEntityError, entity, from_path, parse

keys = st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True).filter(lambda k: k != "namespace")
values = st.text(alphabet=st.characters(exclude_characters="\x00", exclude_categories=["Cs"]), min_size=1,
                 max_size=30)


@given(namespace=values, custom=st.lists(st.tuples(keys, values), max_size=4, unique_by=lambda kv: kv[0]))
def test_parse_of_render_is_the_entity(namespace: str, custom: list[tuple[str, str]]) -> None:
    built = entity([("namespace", namespace), *custom])
    assert parse(built.render()) == built


def test_special_characters_survive_and_are_escaped() -> None:
    built = entity([("namespace", "ns"), ("dataset", "a,b=c\\d: 'q' \"é\" 数据")])
    assert built.render() == "namespace=ns,dataset=a\\,b\\=c\\\\d: 'q' \"é\" 数据"
    assert parse(built.render()).value("dataset") == "a,b=c\\d: 'q' \"é\" 数据"


def test_types_come_from_the_keys() -> None:
    assert entity([("namespace", "n"), ("dataset", "d")]).type == "dataset"
    assert entity([("namespace", "n"), ("application", "a"), ("version", "1.0")]).type == "application"
    assert entity([("namespace", "n"), ("dataset", "d"), ("field", "employees/name")]).type == "field"
    external = entity([("database", "myDatabase"), ("table", "myTable")])
    assert (external.type, external.namespace) == ("table", None)


@pytest.mark.parametrize(("segments", "version", "expected"), [
    (["datasets", "d"], None, "namespace=n,dataset=d"),
    (["datasets", "d", "field", "emp"], None, "namespace=n,dataset=d,field=emp"),
    (["datasets", "fs", "partition", "p1", "file", "f1"], None, "namespace=n,dataset=fs,partition=p1,file=f1"),
    (["apps", "a"], "1.0", "namespace=n,application=a,version=1.0"),
    (["apps", "a", "spark", "p"], None, "namespace=n,application=a,type=spark,program=p"),
    (["streams", "s"], None, "namespace=n,stream=s"),
])
def test_rest_paths_name_entities(segments: list[str], version: str | None, expected: str) -> None:
    assert from_path("n", segments, version).render() == expected


@pytest.mark.parametrize(("parts", "reason"), [
    ([], "at least one"),
    ([("Namespace", "n")], "lowercase letters"),
    ([("namespace", "")], "empty value"),
    ([("namespace", "n"), ("dataset", "x" * 1025)], "over 1024 characters"),
    ([("dataset", "d"), ("namespace", "n")], "must be the first key"),
    ([("namespace", "n"), ("dataset", "a"), ("dataset", "b")], "keys repeat"),
])
def test_malformed_entities_are_refused(parts: list[tuple[str, str]], reason: str) -> None:
    with pytest.raises(InvalidEntityError, match=reason):
        entity(parts)


def test_unparseable_text_and_odd_paths_are_refused() -> None:
    with pytest.raises(InvalidEntityError, match="no '='"):
        parse("namespace")
    with pytest.raises(InvalidEntityError, match="lone backslash"):
        parse("namespace=n\\")
    with pytest.raises(InvalidEntityError, match="has no name"):
        from_path("n", ["datasets", "d", "field"])

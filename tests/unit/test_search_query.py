"""The search query language: terms, keys, required terms, literal characters."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from warehouse.service.search_query import InvalidSearchError, Term, like_escape, parse_query


@pytest.mark.parametrize(("query", "terms"), [
    ("pur*", [Term("pur")]),
    ("Pur", [Term("pur")]),
    ("owner:Sales", [Term("sales", "owner")]),
    ("owner:", [Term("", "owner")]),
    ("tags:PII field:emp*", [Term("pii", "tags"), Term("emp", "field")]),
    ("+tags:PII gold", [Term("pii", "tags", required=True), Term("gold")]),
    ('"gold tier" note:"a, b: c"', [Term("gold tier"), Term("a, b: c", "note")]),
    ("tags:PII propagated:false", [Term("pii", "tags", propagated=False)]),
    ("propagated:true tags:PII", [Term("pii", "tags")]),
    ("100% a_b o'brien c\\d x*y*", [Term("100%"), Term("a_b"), Term("o'brien"), Term("c\\d"), Term("x*y")]),
])
def test_queries_parse_into_terms(query: str, terms: list[Term]) -> None:
    assert parse_query(query) == terms


@pytest.mark.parametrize(("query", "message"), [
    ("", "empty"), ("   +  ", "empty"), ("propagated:false", "empty"), ("tags:x propagated:no", "takes true"),
    (" ".join("abcdefghijk"), "at most 10 terms"), ("x" * 201, "at most 200"),
])
def test_bad_queries_are_refused(query: str, message: str) -> None:
    with pytest.raises(InvalidSearchError, match=message):
        parse_query(query)


def test_terms_match_by_kind_key_and_prefix() -> None:
    assert Term("sal", "owner").matches("property", "owner", "sales")
    assert not Term("sal", "owner").matches("property", "team", "sales")
    assert not Term("sal", "tags").matches("property", "tags", "sales")  # a property named tags is not a tag
    assert Term("pii", "tags").matches("tag", "tags", "pii")
    assert Term("pii", "tags").matches("propagated_tag", "tags", "pii")
    assert not Term("pii", "tags", propagated=False).matches("propagated_tag", "tags", "pii")
    assert Term("sha", "op").matches("operation", "op", "sha2") and not Term("sha", "op").matches("tag", "tags", "sha")
    assert Term("masked", "transform").matches("transform", "transform", "masked")
    assert Term("emp", "field").matches("field", "field", "empname")
    assert Term("pur").matches("name", "", "purchases") and not Term("pur").matches("name", "", "repurchase")


@given(st.text(max_size=30))
def test_like_escape_leaves_no_unescaped_metacharacter(text: str) -> None:
    escaped = like_escape(text)
    index = 0
    unescaped = []
    while index < len(escaped):
        if escaped[index] == "\\":
            unescaped.append(escaped[index + 1])
            index += 2
        else:
            assert escaped[index] not in "%_"
            unescaped.append(escaped[index])
            index += 1
    assert "".join(unescaped) == text

"""Seed 000's enforcement on the nearest enforceable parent, and privileges including lesser ones."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lineage.model.metadata_entity import InvalidEntityError, entity, from_path
from warehouse.service.authorization import (
    INSTANCE,
    Access,
    NotAuthorizedError,
    Privilege,
    enforcement_keys,
    grant_key,
    grant_target,
)

NS = "namespace=sales"
DS = "namespace=sales,dataset=orders"
PROGRAM = "namespace=sales,application=Shop,type=spark,program=Load"


@pytest.mark.parametrize(("segments", "version", "expected"), [
    (["datasets", "orders"], None, (DS, NS)),
    (["datasets", "orders", "field", "id"], None, (DS, NS)),
    (["datasets", "orders", "partition", "p1", "file", "f"], None, (DS, NS)),
    (["streams", "clicks"], None, ("namespace=sales,stream=clicks", NS)),
    (["apps", "Shop", "spark", "Load"], None, (PROGRAM, NS)),
    (["apps", "Shop", "spark", "Load", "runs", "r1"], None, (PROGRAM, NS)),
    (["apps", "Shop", "spark", "Load"], "1.0", (PROGRAM, NS)),
    (["apps", "Shop"], None, (NS,)),
    (["apps", "Shop"], "1.0", (NS,)),
    ([], None, (NS,)),
])
def test_each_entity_is_checked_on_its_nearest_enforceable_parent(segments: list[str], version: str | None,
                                                                  expected: tuple[str, ...]) -> None:
    assert enforcement_keys(from_path("sales", segments, version)) == expected


@pytest.mark.parametrize(("segments", "version", "expected"), [
    (["datasets", "orders"], None, DS),
    (["datasets", "orders", "field", "id"], None, DS),
    (["streams", "clicks"], None, "namespace=sales,stream=clicks"),
    (["apps", "Shop", "spark", "Load"], None, PROGRAM),
    (["apps", "Shop", "spark", "Load"], "1.0", PROGRAM),  # a version is covered by a grant on its program
    (["apps", "Shop", "spark", "Load", "runs", "r1"], "2.0", PROGRAM),
    (["apps", "Shop"], "1.0", None),
    ([], None, None),
    (["table", "t"], None, None),
])
def test_the_stored_grant_key_is_the_enforceable_entity_below_the_namespace(
        segments: list[str], version: str | None, expected: str | None) -> None:
    assert grant_key(from_path("sales", segments, version)) == expected


def test_an_external_resource_has_no_grant_key() -> None:
    assert grant_key(entity([("database", "db"), ("table", "t")])) is None


def test_an_external_resource_is_checked_on_the_instance() -> None:
    assert enforcement_keys(entity([("database", "db"), ("table", "t")])) == (INSTANCE,)


def test_grants_go_only_on_enforceable_entities() -> None:
    assert grant_target(None) == INSTANCE
    assert grant_target(from_path("sales", [])) == NS
    assert grant_target(from_path("sales", ["datasets", "orders"])) == DS
    assert grant_target(from_path("sales", ["apps", "Shop", "spark", "Load"])) == PROGRAM
    for segments in (["datasets", "orders", "field", "id"], ["apps", "Shop"]):
        with pytest.raises(InvalidEntityError, match="grants are given on"):
            grant_target(from_path("sales", segments))


def test_privileges_parse_and_refuse_unknown_names() -> None:
    assert Privilege.parse("read") is Privilege.READ and Privilege.parse("ADMIN") is Privilege.ADMIN
    for bad in ("EXECUTE", "", None, 3, "READ "):
        with pytest.raises(InvalidEntityError, match="is not one of READ, WRITE, ADMIN"):
            Privilege.parse(bad)


def test_the_403_message_names_what_is_needed_and_where() -> None:
    with pytest.raises(NotAuthorizedError, match=r"user 'bob' needs WRITE on namespace=sales,dataset=orders "
                                                 r"or namespace=sales"):
        Access("bob", grants={DS: Privilege.READ}).require(from_path("sales", ["datasets", "orders"]),
                                                           Privilege.WRITE)


# Each subject with the keys whose grants reach it, written out independently of the code.
SUBJECTS = [
    (from_path("sales", ["datasets", "orders"]), {DS, NS}),
    (from_path("sales", ["datasets", "orders", "field", "id"]), {DS, NS}),
    (from_path("sales", ["datasets", "other"]), {NS}),
    (from_path("sales", ["apps", "Shop", "spark", "Load"]), {PROGRAM, NS}),
    (from_path("sales", ["apps", "Shop"]), {NS}),
    (from_path("sales", []), {NS}),
    (from_path("hr", ["datasets", "orders"]), {"namespace=hr"}),
    (entity([("database", "db"), ("table", "t")]), {INSTANCE}),
]
KEYS = [NS, DS, PROGRAM, INSTANCE, "namespace=hr"]


@given(st.dictionaries(st.sampled_from(KEYS), st.sampled_from(list(Privilege)), max_size=4),
       st.sampled_from(SUBJECTS), st.sampled_from(list(Privilege)), st.booleans())
def test_a_check_passes_exactly_when_a_parent_grant_is_at_least_the_need(
        grants: dict[str, Privilege], case, needed: Privilege, admin: bool) -> None:  # type: ignore[no-untyped-def]
    subject, parents = case
    access = Access("u", instance_admin=admin, grants=grants)
    expected = admin or any(grants.get(key, 0) >= needed for key in parents)
    assert access.allows(subject, needed) is expected
    if not admin and expected:  # a higher privilege includes the lower ones
        assert all(access.allows(subject, lower) for lower in Privilege if lower <= needed)


def test_readable_lists_what_search_may_show() -> None:
    access = Access("u", grants={NS: Privilege.READ, DS: Privilege.WRITE, INSTANCE: Privilege.READ,
                                 "namespace=hr": Privilege.ADMIN})
    readable = access.readable()
    assert readable is not None
    assert readable.namespaces == ("hr", "sales") and readable.entity_keys == (DS,) and readable.external
    assert Access("root", instance_admin=True).readable() is None

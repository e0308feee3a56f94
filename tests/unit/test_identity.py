from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from lineage.errors import InvalidEntityError
from lineage.naming.identity import NATIVE_SCHEME, DatasetIdentity, NamespaceMap, dataset_identity, parse_dataset


@pytest.mark.parametrize(
    ("namespace", "name", "rendered"),
    [
        ("s3://lake", "sales/2026", "s3://lake/sales/2026"),
        ("postgres://db:5432", "shop.public.orders", "postgres://db:5432/shop.public.orders"),
        ("file", "/tmp/a.csv", "file//tmp/a.csv"),
        ("bigquery", "proj.ds.table", "bigquery/proj.ds.table"),
        ("bigquery://", "proj.ds.table", "bigquery:///proj.ds.table"),
        ("azurecosmos://host/dbs/db", "colls/t", "azurecosmos://host%2Fdbs%2Fdb/colls/t"),
        ("weird%ns", "x", "weird%25ns/x"),
        ("hdfs://nn:8020", "data/with space/🚀", "hdfs://nn:8020/data/with space/🚀"),
    ],
)
def test_dataset_identity_renders_the_openlineage_uri_and_parses_back(namespace: str, name: str,
                                                                      rendered: str) -> None:
    identity = dataset_identity(namespace, name)
    assert identity.render() == rendered
    assert parse_dataset(rendered) == DatasetIdentity(namespace, name)


def test_two_identities_that_concatenate_alike_never_merge() -> None:
    one = dataset_identity("s3://b", "a/c").render()
    other = dataset_identity("s3://b/a", "c").render()
    assert one != other
    assert parse_dataset(other) == DatasetIdentity("s3://b/a", "c")


def test_a_name_of_our_own_client_is_not_an_identity() -> None:
    assert parse_dataset("purchases") is None


@given(st.text(st.characters(blacklist_categories=("Cc", "Cs")), min_size=1, max_size=40),
       st.text(st.characters(blacklist_categories=("Cc", "Cs")), min_size=1, max_size=80))
def test_every_identity_round_trips(namespace: str, name: str) -> None:
    # the reserved scheme names only the warehouse's own datasets (test_native_identity.py)
    assume(not namespace.startswith(NATIVE_SCHEME))
    identity = dataset_identity(namespace, name)
    assert parse_dataset(identity.render()) == identity


@pytest.mark.parametrize(("namespace", "name"), [("", "x"), ("s3://b", ""), ("s3://b", "a\nb"), (None, "x"),
                                                 ("s3://b", "x" * 1100)])
def test_bad_identities_are_refused_with_a_reason(namespace: object, name: object) -> None:
    with pytest.raises(InvalidEntityError):
        dataset_identity(namespace, name)


def test_namespace_map_longest_prefix_wins_and_defaults() -> None:
    mapping = NamespaceMap.of([("s3://", "lake"), ("s3://finance-", "finance"), ("airflow", "etl")])
    assert mapping.for_dataset("s3://finance-raw") == "finance"
    assert mapping.for_dataset("s3://other") == "lake"
    assert mapping.for_dataset("postgres://db:5432") == "default"
    assert mapping.for_job("airflow") == "etl"
    assert mapping.for_job("team_a") == "team_a"  # a valid warehouse namespace name is its own
    assert mapping.for_job("my-spark-ns") == "default"


def test_namespace_map_refuses_a_bad_target() -> None:
    with pytest.raises(InvalidEntityError, match="not a warehouse namespace"):
        NamespaceMap.of([("s3://", "no-dashes")])

"""The reserved ``lineage://`` scheme: the OpenLineage identity the export gives names of our own
client, read back by the mapping to the same names (issue 34)."""

from __future__ import annotations

import pytest

from lineage.errors import InvalidEntityError
from lineage.naming.identity import (
    NO_MAPPING,
    NamespaceMap,
    dataset_identity,
    exported_dataset,
    exported_job,
    job_program,
    native_dataset,
)

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("namespace", "dataset_type", "name"), [
    ("sales", "dataset", "orders"), ("sales", "stream", "clicks"), ("default", "dataset", "a b.c%d"),
])
def test_a_dataset_of_our_own_comes_back_to_its_name(namespace: str, dataset_type: str, name: str) -> None:
    identity = exported_dataset(namespace, dataset_type, name)
    assert identity.namespace.startswith("lineage://")
    ref = NO_MAPPING.dataset_ref(dataset_identity(identity.namespace, identity.name))
    assert (ref["namespace"], ref.get("type", "dataset"), ref["name"]) == (namespace, dataset_type, name)


def test_a_dataset_named_by_its_openlineage_identity_keeps_it() -> None:
    identity = exported_dataset("default", "dataset", "s3://lake/sales/2026")
    assert (identity.namespace, identity.name) == ("s3://lake", "sales/2026")


def test_a_program_of_our_own_comes_back_to_its_identity_and_an_openlineage_job_keeps_its_own() -> None:
    namespace, name = exported_job("sales", "nightly/load", "spark", "etl/x")
    assert (namespace, name) == ("lineage://sales/nightly/load", "spark/etl/x")
    program = job_program(namespace, name, NO_MAPPING)
    assert (program.namespace, program.application, program.program_type, program.program) == (
        "sales", "nightly/load", "spark", "etl/x")
    assert exported_job("default", "airflow", "openlineage", "dag.task") == ("airflow", "dag.task")


def test_the_scheme_lands_in_its_own_namespace_before_any_rule() -> None:
    mapped = NamespaceMap.of([("lineage://", "other")])
    assert mapped.for_dataset("lineage://sales") == mapped.for_job("lineage://sales/app") == "sales"


@pytest.mark.parametrize(("namespace", "name", "reason"), [
    ("lineage://no such", "x", "names the warehouse's own datasets"),
    ("lineage://sales/tables", "x", "names the warehouse's own datasets"),
    ("lineage://sales", "s3://lake/x", "holds no '<scheme>://.../' identity"),
])
def test_a_name_of_the_scheme_that_names_nothing_we_could_have_is_refused(namespace: str, name: str,
                                                                          reason: str) -> None:
    with pytest.raises(InvalidEntityError, match=reason.replace("(", r"\(")):
        native_dataset(dataset_identity(namespace, name))


@pytest.mark.parametrize(("namespace", "name"), [
    ("lineage://sales", "spark/etl"), ("lineage://sales/app", "noslash"), ("lineage://sales/app", "Spark/etl"),
    ("lineage://sales/app", "openlineage/etl"),
])
def test_a_job_of_the_scheme_that_names_no_program_of_ours_is_refused(namespace: str, name: str) -> None:
    with pytest.raises(InvalidEntityError, match="names the warehouse's own programs"):
        job_program(namespace, name, NO_MAPPING)

"""What the mapping keeps of an OpenLineage event beside runs and accesses (pure core): the run's
parent and root, run, job and dataset facets, warnings, aliases. Expected values are written by
hand from the spec's meaning."""

from __future__ import annotations

from typing import Any

import pytest

from lineage.model.events import validate_event
from lineage.naming.identity import NO_MAPPING, NamespaceMap
from lineage.openlineage.facets import MAX_FACET_BYTES
from tests.unit.test_openlineage_mapping import RUN_ID, expanded, run_event

DAG_RUN = "0195f3b1-0000-7c6e-9d3f-2f1c0b8e4a00"
DAG = {"namespace": "airflow", "application": "airflow", "program_type": "openlineage", "program": "etl_dag",
       "run_id": DAG_RUN}


def parent_facet(**extra: Any) -> dict[str, Any]:
    return {"_producer": "p", "_schemaURL": "https://openlineage.io/spec/facets/1-2-0/ParentRunFacet.json",
            "run": {"runId": DAG_RUN}, "job": {"namespace": "airflow", "name": "etl_dag"}, **extra}


def with_run_facets(**facets: Any) -> dict[str, Any]:
    return run_event(run={"runId": RUN_ID, "facets": facets})


def kept(event: dict[str, Any], kind: str, mapping: NamespaceMap = NO_MAPPING) -> list[dict[str, Any]]:
    return [e["payload"] for e in expanded(event, mapping) if e["kind"] == kind]


def test_the_parent_facet_names_the_parent_and_root_runs_as_runs_of_their_jobs_programs() -> None:
    facet = parent_facet(root={"run": {"runId": "root-1"}, "job": {"namespace": "scheduler", "name": "nightly"}})
    mapping = NamespaceMap.of([("scheduler", "ops")])
    assert kept(with_run_facets(parent=facet), "run_parent", mapping) == [{
        "parent": DAG,
        "root": {"namespace": "ops", "application": "scheduler", "program_type": "openlineage",
                 "program": "nightly", "run_id": "root-1"}}]


def test_kept_events_follow_the_mapped_ones_so_earlier_ids_do_not_move() -> None:
    events = expanded(with_run_facets(parent=parent_facet()))
    assert [e["kind"] for e in events] == ["run_end", "dataset_access", "dataset_access", "dataset_access",
                                           "field_operations", "metadata_change", "run_parent"]
    assert events[-1]["event_id"].endswith(".6")
    for event in events:
        validate_event(event)


@pytest.mark.parametrize(("facet", "warning"), [
    ({"job": {"namespace": "airflow", "name": "etl_dag"}}, "parent facet skipped: run.runId is missing"),
    (parent_facet(run={"runId": 42}), "parent facet skipped: run.runId is missing"),
    (parent_facet(job={"namespace": "airflow", "name": 7}), "parent facet skipped: job name must be non-empty text"),
    (parent_facet(job="etl_dag"), "parent facet skipped: job is missing"),
    ("etl_dag", "parent facet skipped: it is not an object"),
    (parent_facet(run={"runId": "has spaces"}), "run_parent skipped: schema violation"),
])
def test_a_malformed_parent_facet_is_skipped_with_a_warning_and_the_event_kept(facet: Any, warning: str) -> None:
    event = with_run_facets(parent=facet)
    assert kept(event, "run_parent") == []
    assert kept(event, "run_facets")[0]["warnings"][0].startswith(warning)
    assert [e["kind"] for e in expanded(event)][:2] == ["run_end", "dataset_access"]


def test_a_malformed_root_is_skipped_and_the_parent_kept() -> None:
    event = with_run_facets(parent=parent_facet(root={"run": {"runId": "r"}, "job": None}))
    assert kept(event, "run_parent") == [{"parent": DAG}]
    assert kept(event, "run_facets") == [{"warnings": ["parent facet's root skipped: job is missing"]}]


def test_a_root_the_raw_format_refuses_is_skipped_and_the_parent_kept() -> None:
    event = with_run_facets(parent=parent_facet(root={"run": {"runId": "has spaces"},
                                                      "job": {"namespace": "airflow", "name": "etl_dag"}}))
    assert kept(event, "run_parent") == [{"parent": DAG}]
    (warning,) = kept(event, "run_facets")[0]["warnings"]
    assert warning.startswith("parent facet's root skipped: schema violation")


def test_facets_the_raw_format_cannot_hold_are_skipped_and_the_warnings_kept() -> None:
    event = with_run_facets(**{f"facet_{n}": {} for n in range(1001)})  # over the format's 1,000 facets
    event["eventTime"] = "2026-11-23T10:00:00"
    (payload,) = kept(event, "run_facets")
    assert list(payload) == ["warnings"]
    assert payload["warnings"][0] == "eventTime without offset, read as UTC"
    assert payload["warnings"][1].startswith("facets skipped: schema violation")


def test_run_and_job_facets_are_kept_as_they_are_and_null_or_non_object_facets_skipped() -> None:
    nominal = {"_producer": "p", "_schemaURL": "s", "nominalStartTime": "2026-11-23T10:00:00Z"}
    event = with_run_facets(parent=parent_facet(), nominalTime=nominal, gone=None, text="x", listed=[1])
    event["job"]["facets"] = {"sql": {"query": "select 1"}, "jobType": {"processingType": "BATCH",
                                                                       "integration": "AIRFLOW", "jobType": "TASK"}}
    assert kept(event, "run_facets") == [{"run": {"nominalTime": nominal}, "job": event["job"]["facets"]}]


def test_a_facet_over_the_limit_is_dropped_with_a_warning() -> None:
    big = {"blob": "x" * MAX_FACET_BYTES}
    event = with_run_facets(big=big, small={"a": 1})
    event["inputs"][1]["facets"] = {"huge": big}
    (payload,) = kept(event, "run_facets")
    assert payload["run"] == {"small": {"a": 1}}
    assert payload["warnings"] == [
        f"dataset s3://lake/customers/2026 facet 'huge' dropped: {MAX_FACET_BYTES + 11} bytes, over the "
        f"{MAX_FACET_BYTES}-byte limit",
        f"run facet 'big' dropped: {MAX_FACET_BYTES + 11} bytes, over the {MAX_FACET_BYTES}-byte limit"]
    assert kept(event, "dataset_facets") == []


def test_an_event_time_without_offset_is_flagged_on_the_run() -> None:
    assert kept(run_event(eventTime="2026-11-23T10:00:00"), "run_facets") == [
        {"warnings": ["eventTime without offset, read as UTC"]}]
    assert kept(run_event(), "run_facets") == []


def test_dataset_facets_are_kept_per_dataset_without_those_stored_elsewhere() -> None:
    event = run_event()
    orders = event["inputs"][0]
    orders["facets"]["documentation"] = {"description": "orders"}
    event["outputs"][0]["facets"]["dataSource"] = {"name": "db", "uri": "postgres://db:5432"}
    assert kept(event, "dataset_facets") == [
        {"dataset": {"namespace": "default", "name": "postgres://db:5432/shop.public.orders"},
         "facets": {"documentation": {"description": "orders"}}},  # its schema is the SYSTEM schema
        {"dataset": {"namespace": "default", "name": "postgres://db:5432/shop.marts.order_totals"},
         "facets": {"dataSource": {"name": "db", "uri": "postgres://db:5432"}}}]  # columnLineage: field operations


def test_symlinks_are_aliases_of_the_dataset_not_datasets() -> None:
    event = run_event()
    event["inputs"][1]["facets"] = {"symlinks": {"identifiers": [
        {"namespace": "hive://metastore:9083", "name": "lake.customers", "type": "TABLE"},
        {"namespace": "s3://lake", "name": "customers/2026", "type": "LOCATION"},  # the dataset itself
        {"namespace": "hive://metastore:9083", "name": ""},  # malformed
        "not an identifier",
        {"namespace": "glue://eu", "name": "lake.customers"}]}}
    mapping = NamespaceMap.of([("hive://", "warehouse")])
    assert kept(event, "dataset_facets", mapping) == [{
        "dataset": {"namespace": "default", "name": "s3://lake/customers/2026"},
        "aliases": [{"namespace": "warehouse", "name": "hive://metastore:9083/lake.customers", "type": "TABLE"},
                    {"namespace": "default", "name": "glue://eu/lake.customers", "type": "unknown"}]}]
    accessed = {e["payload"]["dataset"]["name"] for e in expanded(event, mapping) if e["kind"] == "dataset_access"}
    assert "hive://metastore:9083/lake.customers" not in accessed

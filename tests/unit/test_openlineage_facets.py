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
DAG_JOB = {"namespace": "airflow", "name": "etl_dag"}
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


# What each damage to the parent facet's own run does, with no root to fall back on: the link is
# skipped, the run keeps a warning naming the damage, and the event keeps everything else.
DAMAGED_PARENT_RUNS = [
    ({"job": {"namespace": "airflow", "name": "etl_dag"}}, "run.runId is missing"),
    (parent_facet(run={"runId": None}), "run.runId is missing"),
    (parent_facet(run={"runId": ""}), "run.runId is missing"),
    (parent_facet(run="0195f3b1-0000-7c6e-9d3f-2f1c0b8e4a00"), "run.runId is missing"),  # run is not an object
    (parent_facet(run={"runId": 42}), "run.runId is not text (a JSON number)"),
    (parent_facet(run={"runId": ["0195f3b1-0000-7c6e-9d3f-2f1c0b8e4a00"]}), "run.runId is not text (a JSON array)"),
    (parent_facet(run={"runId": "r" * 129}), "run.runId is over 128 characters"),
    (parent_facet(run={"runId": "dag\nrun"}), "run.runId holds a control character"),
    (parent_facet(job={"namespace": "airflow", "name": 7}), "job name must be non-empty text, got 7"),
    (parent_facet(job="etl_dag"), "job is missing"),
]


@pytest.mark.parametrize(("facet", "damage"), [*DAMAGED_PARENT_RUNS, ("etl_dag", "it is not an object")])
def test_a_malformed_parent_facet_is_skipped_with_a_warning_and_the_event_kept(facet: Any, damage: str) -> None:
    event = with_run_facets(parent=facet)
    assert kept(event, "run_parent") == []
    assert kept(event, "run_facets")[0]["warnings"][0].startswith(f"parent facet skipped: {damage}")
    assert [e["kind"] for e in expanded(event)][:2] == ["run_end", "dataset_access"]


ROOT = {"run": {"runId": "0195f3b1-00ff-7c6e-9d3f-2f1c0b8e4aff"}, "job": {"namespace": "scheduler", "name": "nightly"}}
ROOT_RUN = {"namespace": "scheduler", "application": "scheduler", "program_type": "openlineage", "program": "nightly",
            "run_id": "0195f3b1-00ff-7c6e-9d3f-2f1c0b8e4aff"}


@pytest.mark.parametrize(("facet", "damage"), DAMAGED_PARENT_RUNS)
def test_a_damaged_parent_run_still_links_the_run_to_a_valid_root(facet: dict[str, Any], damage: str) -> None:
    """Issue 30, item 4: before, a parent facet whose own run was damaged was skipped whole, and the
    root it named with it. Now only the damaged part is: the run is linked to its root (no parent),
    with a warning naming what was skipped and why."""
    event = with_run_facets(parent={**facet, "root": ROOT})
    assert kept(event, "run_parent") == [{"root": ROOT_RUN}]
    assert kept(event, "run_facets") == [{"warnings": [
        f"parent facet's parent run skipped: {damage} (its root is kept)"]}]
    for derived in expanded(event):
        validate_event(derived)


def test_a_parent_facet_damaged_in_both_runs_links_nothing_and_says_why_for_each() -> None:
    event = with_run_facets(parent={"job": {"namespace": "airflow", "name": "etl_dag"},
                                    "root": {"run": {"runId": 7}, "job": ROOT["job"]}})
    assert kept(event, "run_parent") == []
    assert kept(event, "run_facets") == [{"warnings": [
        "parent facet skipped: run.runId is missing",
        "parent facet's root skipped: run.runId is not text (a JSON number)"]}]


def test_a_malformed_root_is_skipped_and_the_parent_kept() -> None:
    event = with_run_facets(parent=parent_facet(root={"run": {"runId": "r"}, "job": None}))
    assert kept(event, "run_parent") == [{"parent": DAG}]
    assert kept(event, "run_facets") == [{"warnings": ["parent facet's root skipped: job is missing"]}]


def test_a_link_the_raw_format_refuses_is_skipped_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """``parent_links`` checks what the raw format asks of a linked run; should a link still fail
    the format, it alone is skipped, with the format's reason, and the other kept."""
    from lineage.openlineage import mapping

    refused = {**ROOT_RUN, "namespace": "not a namespace"}
    monkeypatch.setattr(mapping, "parent_links", lambda event, namespaces: ({"parent": DAG, "root": refused}, []))
    event = with_run_facets(parent=parent_facet())
    assert kept(event, "run_parent") == [{"parent": DAG}]
    (warning,) = kept(event, "run_facets")[0]["warnings"]
    assert warning.startswith("parent facet's root skipped: schema violation")
    monkeypatch.setattr(mapping, "parent_links", lambda event, namespaces: ({"parent": refused}, []))
    assert kept(event, "run_parent") == []
    assert kept(event, "run_facets")[0]["warnings"][0].startswith("run_parent skipped: schema violation")


@pytest.mark.parametrize("run_id", ["run 1", "scheduled__2026-11-23T09:00:00+00:00", "42", "dag/run#7", "  x  ",
                                    "0195F3B1-7A3E-7C6E-9D3F-2F1C0B8E4A11x", "é" * 128])
def test_a_run_id_that_is_not_a_uuid_is_kept_as_sent_with_a_warning_on_the_run(run_id: str) -> None:
    """Issue 30, item 4: the spec asks for a UUID, producers send what they have (Airflow 2's run
    ids, hand-written clients' counters). Before, one the raw format's old run id rule refused
    (``run 1``, a ``+`` or a ``/``) quarantined the whole event; now any text of 1-128 characters
    without control characters is the run's id, verbatim, and the run says it is not a UUID."""
    event = run_event(run={"runId": run_id, "facets": {}})
    derived = expanded(event)
    assert {e["run"]["run_id"] for e in derived} == {run_id}
    assert [e["kind"] for e in derived][:2] == ["run_end", "dataset_access"]
    assert kept(event, "run_facets") == [{"warnings": ["run.runId is not a UUID; kept as sent"]}]
    for native in derived:
        validate_event(native)


@pytest.mark.parametrize("run_id", [RUN_ID, RUN_ID.upper(), "00000000-0000-0000-0000-000000000000"])
def test_a_uuid_run_id_in_any_case_or_version_carries_no_warning(run_id: str) -> None:
    assert kept(run_event(run={"runId": run_id, "facets": {}}), "run_facets") == []


def test_linked_run_ids_that_are_not_uuids_are_kept_with_a_warning_each() -> None:
    event = with_run_facets(parent=parent_facet(run={"runId": "manual__2026-11-23"},
                                                root={"run": {"runId": "nightly 7"}, "job": ROOT["job"]}))
    assert kept(event, "run_parent") == [{"parent": {**DAG, "run_id": "manual__2026-11-23"},
                                          "root": {**ROOT_RUN, "run_id": "nightly 7"}}]
    assert kept(event, "run_facets") == [{"warnings": ["parent facet's run.runId is not a UUID; kept as sent",
                                                       "parent facet's root run.runId is not a UUID; kept as sent"]}]


def test_every_warning_of_one_event_is_kept_in_order() -> None:
    """The envelope's warnings first (time, run id), then the parent facet's, then the facets'."""
    event = with_run_facets(parent={"job": DAG_JOB, "root": ROOT}, big={"blob": "x" * MAX_FACET_BYTES})
    event["run"]["runId"] = "run 1"
    event["eventTime"] = "2026-11-23T10:00:00"
    assert kept(event, "run_facets") == [{"warnings": [
        "eventTime without offset, read as UTC", "run.runId is not a UUID; kept as sent",
        "parent facet's parent run skipped: run.runId is missing (its root is kept)",
        f"run facet 'big' dropped: {MAX_FACET_BYTES + 11} bytes, over the {MAX_FACET_BYTES}-byte limit"]}]


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

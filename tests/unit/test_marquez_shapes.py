"""Marquez's read API, its pure part (``warehouse.service.marquez``): node ids read as Marquez
reads them (a scheme's ``://`` and a port's ``:`` are no separators), the run states, version
ids that stay the same, and the graphs' edges in Marquez's own directions."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from lineage.errors import InvalidRequestError
from lineage.naming.identity import DatasetIdentity
from warehouse.service import marquez
from warehouse.service.marquez import FieldFlow, Flow, NodeId, RunRow, parse_node_id

AT = datetime(2026, 11, 20, 1, 0, tzinfo=UTC)


@pytest.mark.parametrize(("text", "expected"), [
    ("dataset:postgres://db:5432:shop.public.orders", NodeId("dataset", "postgres://db:5432", "shop.public.orders")),
    ("dataset:lineage://sales:orders", NodeId("dataset", "lineage://sales", "orders")),
    ("dataset:s3://bucket:a/b:c", NodeId("dataset", "s3://bucket", "a/b:c")),
    ("dataset:lineage://sales:2024", NodeId("dataset", "lineage://sales", "2024")),  # digits at the end: a name
    ("job:airflow:etl_dag.load", NodeId("job", "airflow", "etl_dag.load")),
    ("job:lineage://sales/nightly:spark/etl", NodeId("job", "lineage://sales/nightly", "spark/etl")),
    ("datasetField:kafka://host:9092:clicks:user_id", NodeId("datasetField", "kafka://host:9092", "clicks", "user_id")),
])
def test_node_ids_split_where_marquez_splits_them(text: str, expected: NodeId) -> None:
    assert parse_node_id(text) == expected
    assert expected.render() == text


@pytest.mark.parametrize(("text", "message"), [
    ("", "is not dataset:"), ("table:ns:name", "is not dataset:"), ("dataset:ns", "has no <namespace>:<name>"),
    ("dataset::name", "has no <namespace>:<name>"), ("dataset:ns:", "has no <namespace>:<name>"),
    ("datasetField:ns:name", "has no <namespace>:<name>"), ("datasetField:ns:name:", "names no field"),
    ("dataset:ns:name#0195f3b1-0001-7c6e-9d3f-2f1c0b8e4a01", "versions (#...) are not served"),
])
def test_bad_node_ids_are_refused_naming_them(text: str, message: str) -> None:
    with pytest.raises(InvalidRequestError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_node_id(text)


def test_version_ids_are_uuids_the_same_every_time_and_differ_by_version() -> None:
    identity = DatasetIdentity("lineage://sales", "orders")
    first = marquez.version_id(identity, 1)
    assert first == marquez.version_id(identity, 1) != marquez.version_id(identity, 2)
    assert first != marquez.version_id(DatasetIdentity("lineage://sales", "orders2"), 1)
    assert marquez.version_id(identity, None) is None and len(str(first)) == 36


@pytest.mark.parametrize(("status", "state"), [("running", "RUNNING"), ("completed", "COMPLETED"),
                                              ("failed", "FAILED"), ("killed", "ABORTED")])
def test_a_runs_status_is_marquezs_state_and_its_duration_counts_from_start_to_end(status: str, state: str) -> None:
    ended = None if status == "running" else AT.replace(minute=5)
    shown = marquez.run(RunRow("r-1", status, AT, ended, AT))
    assert shown["state"] == state
    assert shown["durationMs"] == (None if ended is None else 300_000)
    assert shown["startedAt"] == "2026-11-20T01:00:00Z" and shown["endedAt"] == (ended and "2026-11-20T01:05:00Z")


def test_a_lineage_graph_puts_each_edge_on_both_its_nodes_once() -> None:
    read = Flow("dataset:ns:a", "job:j:x", reads=True)
    graph = marquez.lineage_graph([read, read, Flow("dataset:ns:b", "job:j:x", reads=False)],
                                  {"dataset:ns:c": {"alone": True}})["graph"]
    by_id = {node["id"]: node for node in graph}
    assert [node["id"] for node in graph] == ["dataset:ns:a", "dataset:ns:b", "dataset:ns:c", "job:j:x"]
    assert by_id["job:j:x"]["inEdges"] == [{"origin": "dataset:ns:a", "destination": "job:j:x"}]
    assert by_id["job:j:x"]["outEdges"] == [{"origin": "job:j:x", "destination": "dataset:ns:b"}]
    assert by_id["dataset:ns:b"]["inEdges"] == by_id["job:j:x"]["outEdges"]
    assert by_id["dataset:ns:c"] == {"id": "dataset:ns:c", "type": "DATASET", "data": {"alone": True},
                                     "inEdges": [], "outEdges": []}


def test_column_lineage_keeps_every_way_a_source_reaches_a_field() -> None:
    source, target = ("s", "crm", "b"), ("s", "out", "c")
    flows = [FieldFlow(source, target, "DIRECT", "TRANSFORMATION", False, ("case",)),
             FieldFlow(source, target, "INDIRECT", "CONDITIONAL", False, ("case",))]
    graph = {node["id"]: node for node in marquez.column_lineage_graph([target], flows, {target: "int"})["graph"]}
    node = graph["datasetField:s:out:c"]
    [only] = node["data"]["inputFields"]
    assert only["transformationType"] == "DIRECT/TRANSFORMATION, INDIRECT/CONDITIONAL"
    assert [t["type"] for t in only["transformations"]] == ["DIRECT", "INDIRECT"]
    assert node["data"]["fieldType"] == "int"
    assert node["inEdges"] == [{"origin": "datasetField:s:out:c", "destination": "datasetField:s:crm:b"}]  # Marquez's
    assert graph["datasetField:s:crm:b"]["outEdges"] == [{"origin": "datasetField:s:crm:b",
                                                         "destination": "datasetField:s:out:c"}]

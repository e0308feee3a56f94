"""CDAP's field lineage JSON shapes, rendered from rows written out by hand."""

from __future__ import annotations

from datetime import UTC, datetime

from lineage.ids import DataRef
from warehouse.service.field_lineage_rows import FieldKey, ProgramLastRun
from warehouse.service.field_summaries import (
    OperationSet,
    dataset_summary,
    field_summary,
    operation_sets,
    program_infos,
)


def program(name: str, last: int, app: str = "App") -> ProgramLastRun:
    return ProgramLastRun("ns", app, "spark", name, last)


def test_programs_appear_once_with_their_latest_run_newest_first() -> None:
    assert program_infos([program("a", 10), program("b", 30), program("a", 50), program("c", 30)]) == [
        {"program": {"namespace": "ns", "application": "App", "type": "spark", "program": "a", "entity": "PROGRAM"},
         "lastExecutedTimeInSeconds": 50},
        {"program": {"namespace": "ns", "application": "App", "type": "spark", "program": "b", "entity": "PROGRAM"},
         "lastExecutedTimeInSeconds": 30},
        {"program": {"namespace": "ns", "application": "App", "type": "spark", "program": "c", "entity": "PROGRAM"},
         "lastExecutedTimeInSeconds": 30},
    ]


READ = {"id": "read", "type": "read", "name": "read", "inputs": [], "outputs": ["body"],
        "sources": [{"namespace": "ns", "type": "dataset", "name": "files"}]}
PARSE = {"id": "parse", "type": "transform", "name": "parse", "sources": [],
         "inputs": [{"field": "body", "origin": "read"}], "outputs": ["name"]}
WRITE = {"id": "write", "type": "write", "name": "write", "sources": [],
         "inputs": [{"field": "name", "origin": "parse"}], "outputs": ["name"]}


def row(fingerprint: str, programs: list[ProgramLastRun], hour: int, descriptions: dict[str, str] | None = None,
        destination: str = "people") -> OperationSet:
    return OperationSet(fingerprint=fingerprint, document={"operations": [READ, PARSE, WRITE]},
                        destination=DataRef("ns", "dataset", destination), descriptions=descriptions or {},
                        described_at=datetime(2026, 11, 20, hour, tzinfo=UTC), programs=programs,
                        last_seen=datetime(2026, 11, 20, hour, tzinfo=UTC))


def test_operation_sets_merge_rows_of_one_set_and_render_cdap_operations() -> None:
    rendered = operation_sets([row("fp", [program("a", 10)], 1, {"parse": "old"}),
                               row("fp", [program("b", 20)], 2, {"parse": "split the body"}),
                               row("older", [program("c", 5)], 0)])
    assert [[p["program"]["program"] for p in item["programs"]] for item in rendered] == [["b", "a"], ["c"]]
    assert rendered[0]["operations"] == [
        {"name": "read", "description": "", "type": "read",
         "inputs": {"endPoint": {"namespace": "ns", "name": "files", "type": "dataset"}},
         "outputs": {"fields": ["body"]}},
        {"name": "parse", "description": "split the body", "type": "transform",
         "inputs": {"fields": [{"origin": "read", "name": "body"}]}, "outputs": {"fields": ["name"]}},
        {"name": "write", "description": "", "type": "write",
         "inputs": {"fields": [{"origin": "parse", "name": "name"}]},
         "outputs": {"endPoint": {"namespace": "ns", "name": "people", "type": "dataset"}}},
    ]


def test_field_summary_groups_fields_by_dataset_and_leaves_out_the_direction_not_asked() -> None:
    incoming = [FieldKey("ns", "b", "y"), FieldKey("ns", "a", "x"), FieldKey("ns", "b", "w")]
    assert field_summary("incoming", incoming, []) == {"incoming": [
        {"dataset": {"namespace": "ns", "dataset": "a", "entity": "DATASET"}, "fields": ["x"]},
        {"dataset": {"namespace": "ns", "dataset": "b", "entity": "DATASET"}, "fields": ["w", "y"]}]}
    assert field_summary("both", [], [FieldKey("ns", "c", "z")]) == {"incoming": [], "outgoing": [
        {"dataset": {"namespace": "ns", "dataset": "c", "entity": "DATASET"}, "fields": ["z"]}]}


def test_dataset_summary_groups_relations_by_the_other_dataset_with_its_field_count() -> None:
    summary = dataset_summary(
        "both", 100, 200, ("ns", "people"), ["name", "id"],
        incoming=[(FieldKey("ns", "files", "body"), "name"), (FieldKey("ns", "files", "body"), "id")],
        outgoing=[("name", FieldKey("ns", "report", "who"))],
        field_counts={("ns", "files"): 1, ("ns", "report"): 3})
    assert summary == {
        "direction": "BOTH", "start-ts": 100_000, "end-ts": 200_000,
        "entityId": {"namespace": "ns", "dataset": "people", "entity": "DATASET"}, "fields": ["id", "name"],
        "incoming": [{"entityId": {"namespace": "ns", "dataset": "files", "entity": "DATASET"}, "fieldCount": 1,
                      "relations": [{"source": "body", "destination": "id"},
                                    {"source": "body", "destination": "name"}]}],
        "outgoing": [{"entityId": {"namespace": "ns", "dataset": "report", "entity": "DATASET"}, "fieldCount": 3,
                      "relations": [{"source": "name", "destination": "who"}]}]}

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from lineage import FieldInput, FieldOperation, RunContext, Source
from lineage.errors import InvalidEventError, RunStateError
from lineage.transport.log_file import EventLogWriter, partition_of


def read_events(paths: list[str]) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(line) for path in paths for line in Path(path).read_text().splitlines()]


def test_run_context_writes_start_at_once_and_the_rest_at_end(tmp_path: Path) -> None:
    run = RunContext("default", "PurchaseHistory", "mapreduce", "PurchaseHistoryBuilder", "r1", log_root=str(tmp_path))
    run.start()
    assert len(run.files) == 1
    assert [e["kind"] for e in read_events(run.files)] == ["run_start"]
    run.read("purchases")
    run.write("history", component="writer")
    run.end()
    events = read_events(run.files)
    assert [e["kind"] for e in events] == ["run_start", "dataset_access", "dataset_access", "run_end"]
    assert events[2]["payload"] == {"dataset": {"type": "dataset", "name": "history"}, "access": "write",
                                    "component": "writer"}
    assert events[3]["payload"] == {"status": "completed"}
    assert {e["run"]["run_id"] for e in events} == {"r1"}
    assert len({e["event_id"] for e in events}) == 4


def test_run_context_marks_a_failing_run_failed(tmp_path: Path) -> None:
    with pytest.raises(ZeroDivisionError), RunContext("default", "A", "spark", "P", log_root=str(tmp_path)) as run:
        run.read("purchases")
        _ = 1 / 0
    assert run.status == "failed"
    assert read_events(run.files)[-1]["payload"] == {"status": "failed"}


def test_recording_outside_the_run_raises(tmp_path: Path) -> None:
    run = RunContext("default", "A", "spark", "P", log_root=str(tmp_path))
    with pytest.raises(RunStateError, match="has not started"):
        run.read("d")
    run.start()
    run.end()
    with pytest.raises(RunStateError, match="has ended"):
        run.write("d")


def test_invalid_names_raise_when_recorded(tmp_path: Path) -> None:
    with RunContext("default", "A", "spark", "P", log_root=str(tmp_path)) as run, pytest.raises(InvalidEventError):
        run.read("bad name; drop table")


def test_field_operations_are_recorded_in_seed_004_shape(tmp_path: Path) -> None:
    with RunContext("myns", "App", "mapreduce", "ETL", log_root=str(tmp_path)) as run:
        run.record_field_operations(
            "mytableds",
            [FieldOperation("read", [Source("user_data", "myns")], ["offset", "body"]),
             FieldOperation("parse", ["body"], ["first_name", "last_name"]),
             FieldOperation("concat", [FieldInput("first_name", origin="parse"), "last_name"], ["name"], "concat")],
            destination_fields=["name"],
        )
    recorded = next(e for e in read_events(run.files) if e["kind"] == "field_operations")["payload"]
    assert recorded == {
        "destination": {"type": "dataset", "name": "mytableds"},
        "destination_fields": ["name"],
        "operations": [
            {"name": "read", "inputs": [{"source": {"type": "dataset", "name": "user_data", "namespace": "myns"}}],
             "outputs": ["offset", "body"]},
            {"name": "parse", "inputs": [{"field": "body"}], "outputs": ["first_name", "last_name"]},
            {"name": "concat", "inputs": [{"field": "first_name", "origin": "parse"}, {"field": "last_name"}],
             "outputs": ["name"], "description": "concat"},
        ],
    }


def test_writer_partitions_by_utc_hour_and_leaves_no_temporary(tmp_path: Path) -> None:
    moment = datetime(2026, 11, 21, 23, 59, tzinfo=UTC)
    path = EventLogWriter(str(tmp_path)).write([{"a": 1}, {"b": "é"}], prefix="p", now=moment)
    assert Path(path).parent == tmp_path / "dt=2026-11-21" / "hour=23"
    assert Path(path).read_text(encoding="utf-8") == '{"a":1}\n{"b":"é"}\n'
    assert [p.name for p in Path(path).parent.iterdir()] == [Path(path).name]
    assert partition_of(datetime(2026, 11, 22, 1, 0, tzinfo=UTC)) == "dt=2026-11-22/hour=01"


def test_writer_writes_nothing_for_no_events(tmp_path: Path) -> None:
    assert EventLogWriter(str(tmp_path)).write([]) == ""
    assert list(tmp_path.iterdir()) == []


def test_flush_every_bounds_the_buffer(tmp_path: Path) -> None:
    with RunContext("default", "A", "spark", "P", log_root=str(tmp_path), flush_every=2) as run:
        for index in range(5):
            run.read(f"d{index}")
    # start file, two full buffers of 2, then the last access + end
    assert [len(Path(p).read_text().splitlines()) for p in run.files] == [1, 2, 2, 2]


def test_external_stream_writes_are_one_pseudo_run_per_source_and_day(tmp_path: Path) -> None:
    from lineage.client.external import external_stream_events, record_external_stream_write

    morning = external_stream_events("default", "purchaseStream", "web-shop", datetime(2026, 11, 21, 8, tzinfo=UTC))
    evening = external_stream_events("default", "purchaseStream", "web-shop", datetime(2026, 11, 21, 20, tzinfo=UTC))
    next_day = external_stream_events("default", "purchaseStream", "web-shop", datetime(2026, 11, 22, 1, tzinfo=UTC))
    assert [e["event_id"] for e in morning] == [e["event_id"] for e in evening]
    assert {e["event_id"] for e in morning}.isdisjoint(e["event_id"] for e in next_day)
    assert morning[1]["run"] == {"application": "_external", "program_type": "external", "program": "web-shop",
                                 "run_id": "2026-11-21"}
    assert (morning[0]["event_time"], morning[2]["event_time"]) == (
        "2026-11-21T00:00:00.000000Z", "2026-11-21T23:59:59.999999Z")
    path = record_external_stream_write("default", "purchaseStream", "web-shop", log_root=str(tmp_path))
    assert [e["kind"] for e in read_events([path])] == ["run_start", "dataset_access", "run_end"]


def test_run_context_delivers_through_any_transport(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The writer is a seam (``lineage.transport.Transport``): a run's batches go to the transport
    given, whole, in order, and nothing is written under the log root."""

    class Collecting:
        root = "memory:"

        def __init__(self) -> None:
            self.batches: list[tuple[str, list[str]]] = []

        def write(self, events, *, prefix="events", now=None):  # type: ignore[no-untyped-def]
            self.batches.append((prefix, [event["kind"] for event in events]))
            return f"memory:{len(self.batches)}"

        def place(self, source, name, *, now=None):  # type: ignore[no-untyped-def]
            raise AssertionError("nothing was spilled")

    monkeypatch.setenv("LINEAGE_LOG_ROOT", str(tmp_path / "never"))
    transport = Collecting()
    with RunContext("default", "app", "spark", "job", transport=transport) as run:
        run.read("purchases")
        run.write("history")
    assert [kinds for _, kinds in transport.batches] == [["run_start"], ["dataset_access", "dataset_access", "run_end"]]
    assert run.files == ["memory:1", "memory:2"]
    assert not (tmp_path / "never").exists()

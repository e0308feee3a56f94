"""The client never drops events, on the real filesystem: a log root that is unavailable (its
folder is a file) is retried, then the events are spilled locally and delivered later into
their partition; when even the spill fails, the events stay buffered and the next flush writes
them once; the user's own exception wins over a failure to record the run's end."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from lineage import RunContext
from lineage.client.delivery import Delivery, main
from lineage.transport.log_file import EventLogWriter


def blocked(folder: Path) -> Path:
    """A log root that cannot be written: its parent is a regular file."""
    folder.parent.parent.mkdir(parents=True, exist_ok=True)
    folder.parent.write_text("not a folder")
    return folder


def unblock(folder: Path) -> None:
    folder.parent.unlink()
    folder.mkdir(parents=True)


def lines(root: Path) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(line) for path in sorted(root.glob("dt=*/hour=*/*.jsonl"))
            for line in path.read_text().splitlines()]


@pytest.fixture(autouse=True)
def one_attempt(monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs try a write once here (no pauses); the retries are tested on Delivery itself."""
    monkeypatch.setenv("LINEAGE_WRITE_ATTEMPTS", "1")


@pytest.fixture
def spill(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "spill"
    monkeypatch.setenv("LINEAGE_SPILL_DIR", str(folder))
    return folder


def test_an_unavailable_root_spills_the_run_and_the_next_good_write_delivers_it(tmp_path: Path, spill: Path) -> None:
    root = blocked(tmp_path / "down" / "raw")
    with RunContext("default", "A", "spark", "P", "r1", log_root=str(root)) as run:
        run.read("purchases")
    assert len(run.spilled) == 2 and run.files == run.spilled  # the start, then the rest
    assert sorted(e["kind"] for e in lines(spill)) == ["dataset_access", "run_end", "run_start"]

    unblock(root)
    with RunContext("default", "A", "spark", "P", "r2", log_root=str(root)):
        pass

    assert sorted(e["run"]["run_id"] for e in lines(root)) == ["r1", "r1", "r1", "r2", "r2"]
    assert lines(spill) == []
    spilled_partitions = {Path(p).parent.relative_to(spill).as_posix() for p in run.spilled}
    assert spilled_partitions <= {p.parent.relative_to(root).as_posix() for p in root.glob("dt=*/hour=*/*.jsonl")}


def test_python_m_lineage_delivery_delivers_on_demand(tmp_path: Path, spill: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    root = blocked(tmp_path / "down" / "raw")
    Delivery(EventLogWriter(str(root)), spill, attempts=1).deliver([{"a": 1}], "x")
    monkeypatch.setenv("LINEAGE_LOG_ROOT", str(root))
    assert main([]) == 1  # still down: the file stays, the exit code says so
    unblock(root)
    assert main([]) == 0
    assert lines(root) == [{"a": 1}]


def test_a_write_is_retried_before_anything_is_spilled(tmp_path: Path, spill: Path) -> None:
    root = blocked(tmp_path / "down" / "raw")
    pauses: list[float] = []

    def pause_then_repair(seconds: float) -> None:
        pauses.append(seconds)
        if len(pauses) == 2:
            unblock(root)

    delivered = Delivery(EventLogWriter(str(root)), spill, attempts=3, pause=0.5,
                         sleep=pause_then_repair).deliver([{"a": 1}], "x")
    assert pauses == [0.5, 1.0] and not delivered.spilled
    assert lines(root) == [{"a": 1}] and lines(spill) == []


def test_when_even_the_spill_fails_the_events_stay_buffered_and_are_written_once_later(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LINEAGE_SPILL_DIR", str(blocked(tmp_path / "no-spill" / "spill")))
    root = tmp_path / "raw"
    run = RunContext("default", "A", "spark", "P", "r1", log_root=str(root)).start()
    run.read("a")
    os.rename(root, tmp_path / "raw-away")
    root.write_text("the root is a file now")
    with pytest.raises(OSError):
        run.flush()
    run.write("b")  # recorded while the root is down
    root.unlink()
    run.end()
    kinds = [e["kind"] for e in lines(root)]
    assert kinds == ["dataset_access", "dataset_access", "run_end"]  # none lost, none twice


def test_the_users_exception_wins_over_a_failure_to_record_the_end(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LINEAGE_SPILL_DIR", str(blocked(tmp_path / "no-spill" / "spill")))
    root = tmp_path / "raw"
    with pytest.raises(ZeroDivisionError):
        with RunContext("default", "A", "spark", "P", "r1", log_root=str(root)):
            os.rename(root, tmp_path / "raw-away")
            root.write_text("the root is a file now")
            1 / 0  # noqa: B018 - the user's own error


def test_the_writer_leaves_no_temporary_file_when_the_rename_fails(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: object) -> None:
        raise OSError("disk gone")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="disk gone"):
        EventLogWriter(str(tmp_path)).write([{"a": 1}])
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []

"""Builders of raw events and log files for tests (plain dicts; no code under test)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

RUN = {"application": "PurchaseHistory", "program_type": "mapreduce", "program": "PurchaseHistoryBuilder",
       "run_id": "run-1"}


def event(kind: str, payload: dict[str, Any] | None = None, **overrides: Any) -> dict[str, Any]:
    built: dict[str, Any] = {
        "schema_version": 1,
        "event_id": str(uuid.uuid4()),
        "kind": kind,
        "event_time": "2026-11-21T05:00:00Z",
        "namespace": "default",
        "run": dict(RUN),
        "payload": {} if payload is None else payload,
    }
    built.update(overrides)
    return built


def access(dataset: str, access_type: str = "read", **overrides: Any) -> dict[str, Any]:
    return event("dataset_access", {"dataset": {"type": "dataset", "name": dataset}, "access": access_type},
                 **overrides)


def declared_access(dataset: str, access_type: str, job: dict[str, str], **overrides: Any) -> dict[str, Any]:
    """A program's declared access (format v2: ``job``, no run), as an OpenLineage JobEvent gives."""
    built = event("dataset_access", {"dataset": {"name": dataset}, "access": access_type}, schema_version=2,
                  job=job, **overrides)
    del built["run"]
    return built


def write_log(root: Path, lines: list[dict[str, Any] | str], *, hour: str = "dt=2026-11-21/hour=05",
              name: str | None = None) -> Path:
    """Write a log file under ``root/hour``; dict lines are JSON-encoded, strings written as given."""
    folder = root / hour
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / (name or f"test-{uuid.uuid4().hex}.jsonl")
    path.write_text("".join((json.dumps(line) if isinstance(line, dict) else line) + "\n" for line in lines))
    return path


def move_into_hour(root: Path, files: Iterable[str | Path], hour: str = "dt=2026-11-21/hour=05") -> None:
    """Move log files a RunContext wrote (today's partition) into ``root/hour``, the window the
    tests compact."""
    folder = root / hour
    folder.mkdir(parents=True, exist_ok=True)
    for path in map(Path, files):
        path.rename(folder / path.name)


def iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def run_events(program_type: str, program: str, run_id: str, started: datetime, stopped: datetime | None,
               accesses: list[tuple[str, str, str]], *, application: str = "PurchaseHistory") -> list[dict[str, Any]]:
    """A run's events; accesses are (type.name, access, component)."""
    run = {"application": application, "program_type": program_type, "program": program, "run_id": run_id}
    events = [event("run_start", run=run, event_time=iso(started))]
    for data, access, component in accesses:
        data_type, name = data.split(".", 1)
        payload: dict[str, Any] = {"dataset": {"type": data_type, "name": name}, "access": access}
        if component:
            payload["component"] = component
        events.append(event("dataset_access", payload, run=run, event_time=iso(started + timedelta(seconds=1))))
    if stopped is not None:
        events.append(event("run_end", {"status": "completed"}, run=run, event_time=iso(stopped)))
    return events


# What changed: two days of a small shop. On the base day Feed writes orders and Report reads them
# into report; on the next day Feed still writes orders, Report did not run and Audit, a new
# consumer, reads orders.
D1 = datetime(2026, 11, 10, 0, 0, tzinfo=UTC)
D2 = D1 + timedelta(days=1)


def shop_history() -> list[dict[str, Any]]:
    hour = timedelta(hours=1)
    return [
        *run_events("spark", "Feed", "feed-1", D1 + hour, D1 + 2 * hour, [("dataset.dx_orders", "write", "")],
                    application="Shop"),
        *run_events("spark", "Report", "report-1", D1 + 3 * hour, D1 + 4 * hour,
                    [("dataset.dx_orders", "read", ""), ("dataset.dx_report", "write", "")], application="Shop"),
        *run_events("spark", "Feed", "feed-2", D2 + hour, D2 + 2 * hour, [("dataset.dx_orders", "write", "")],
                    application="Shop"),
        *run_events("spark", "Feed", "feed-3", D2 + 5 * hour, D2 + 6 * hour, [("dataset.dx_orders", "write", "")],
                    application="Shop"),
        *run_events("spark", "Audit", "audit-1", D2 + 3 * hour, D2 + 4 * hour, [("dataset.dx_orders", "read", "")],
                    application="Shop"),
    ]

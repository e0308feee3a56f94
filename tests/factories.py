"""Builders of raw events and log files for tests (plain dicts; no code under test)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable
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

"""Health, compactions and the summary."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from lineage_api.models.base import Body


class Health(Body):
    status: Literal["ok"]
    warehouse: Literal["ok", "unreachable"]


class Compaction(Body):
    batch_id: str
    dag_run_id: str | None
    interval_end: datetime | None
    started_at: datetime
    finished_at: datetime
    files: int
    events_read: int
    events_compacted: int
    duplicates: int
    quarantined: int
    runs_touched: int
    accesses_added: int


class Compactions(Body):
    compactions: list[Compaction]


class Summary(Body):
    namespaces: int
    runs: int
    dataset_accesses: int
    quarantined_lines: int
    compacted_files: int

"""Announcing what changed: the compaction DAG emits one Airflow asset event per dataset whose
lineage changed (``lineage_marts.lineage_changes``), with the changes in its extra, each change
once.

A change is due when the mart holds it and it was not announced yet: an edge or field source
that *appeared* on a day as soon as it is seen, one that *disappeared* on a day once that day is
over (before its end, a later run of the day may still use it). Only the days of the last
``LOOKBACK_DAYS`` are looked at, so a first deployment does not announce its whole history.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

import psycopg
from psycopg.rows import dict_row

LOOKBACK_DAYS = 3
MAX_CHANGES_PER_EVENT = 200  # an event's extra stays small; the mart holds the rest


@dataclass
class DatasetChanges:
    """A dataset's due changes of one day (``changes``: the mart's rows, as plain values)."""

    day: date
    namespace: str
    dataset_type: str
    dataset: str
    data_id: str
    change_ids: list[str] = field(default_factory=list)
    changes: list[dict[str, Any]] = field(default_factory=list)

    def extra(self) -> dict[str, Any]:
        """The asset event's extra: the day, the dataset and its changes (at most 200 listed)."""
        return {"day": self.day.isoformat(), "namespace": self.namespace, "type": self.dataset_type,
                "dataset": self.dataset, "data_id": self.data_id, "change_count": len(self.changes),
                "changes": self.changes[:MAX_CHANGES_PER_EVENT]}


def due(conn: psycopg.Connection, today: date) -> list[DatasetChanges]:
    """The changes not announced yet, by day and dataset: appeared ones of the lookback's days,
    disappeared ones of its days before ``today``."""
    with conn.cursor(row_factory=dict_row) as cursor:
        rows = cursor.execute(
            """select c.* from lineage_marts.lineage_changes c
               where c.day >= %(first)s and c.day <= %(today)s
                 and (c.change = 'appeared' or c.day < %(today)s)
                 and not exists (select 1 from lineage.change_announcements a
                                 where a.lineage_change_id = c.lineage_change_id)
               order by c.day, c.data_id, c.kind, c.change, c.lineage_change_id""",
            {"first": today - timedelta(days=LOOKBACK_DAYS), "today": today}).fetchall()
    grouped: dict[tuple[date, str], DatasetChanges] = {}
    for row in rows:
        key = (row["day"], row["data_id"])
        entry = grouped.get(key) or grouped.setdefault(key, DatasetChanges(
            row["day"], row["namespace"], row["dataset_type"], row["dataset"], row["data_id"]))
        entry.change_ids.append(row["lineage_change_id"])
        entry.changes.append({name: row[name] for name in (
            "kind", "change", "program_id", "access", "field", "source_namespace", "source", "source_field")
            if row[name] is not None})
    return list(grouped.values())


def mark_announced(conn: psycopg.Connection, announced: Iterable[DatasetChanges]) -> int:
    """Record the changes as announced (a re-run announces nothing twice); returns how many."""
    rows = [(change_id, entry.day) for entry in announced for change_id in entry.change_ids]
    with conn.cursor() as cursor:
        cursor.executemany("""insert into lineage.change_announcements (lineage_change_id, day) values (%s, %s)
                              on conflict do nothing""", rows)
    return len(rows)


"""Incidents (a dataset marked bad over a time range) and the reads the blast radius needs: the
writes an incident covers, and each dataset's latest write (issue 33)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import psycopg
from psycopg.rows import class_row

from lineage.ids import DataRef
from warehouse.service.blast_radius import LatestWrite


@dataclass(frozen=True, slots=True)
class Incident:
    incident_id: int
    namespace: str
    dataset_type: str
    dataset: str
    bad_from: datetime
    bad_until: datetime
    reason: str
    source: str
    created_by: str
    created_at: datetime


_COLUMNS = "incident_id, namespace, dataset_type, dataset, bad_from, bad_until, reason, source, created_by, created_at"


def record(conn: psycopg.Connection, namespace: str, dataset_type: str, dataset: str, bad_from: datetime,
           bad_until: datetime, reason: str, created_by: str) -> Incident:
    with conn.cursor(row_factory=class_row(Incident)) as cursor:
        row = cursor.execute(
            f"""insert into lineage.dataset_incidents (namespace, dataset_type, dataset, bad_from, bad_until, reason,
                    created_by) values (%s, %s, %s, %s, %s, %s, %s) returning {_COLUMNS}""",
            (namespace, dataset_type, dataset, bad_from, bad_until, reason, created_by)).fetchone()
    assert row is not None
    return row


def incidents_of(conn: psycopg.Connection, namespace: str, dataset_type: str, dataset: str) -> list[Incident]:
    with conn.cursor(row_factory=class_row(Incident)) as cursor:
        return cursor.execute(f"""select {_COLUMNS} from lineage.dataset_incidents
                                  where (namespace, dataset_type, dataset) = (%s, %s, %s)
                                  order by bad_from, incident_id""", (namespace, dataset_type, dataset)).fetchall()


def bad_writes(conn: psycopg.Connection, dataset_key: int, ranges: Sequence[tuple[datetime, datetime]]) -> list[int]:
    """The runs whose write of the dataset happened in one of ``ranges`` (a write happens at its
    run's end, or, while it runs, at its access), in time order."""
    rows = conn.execute(
        """select a.run_key from lineage.dataset_accesses a join lineage.runs r using (run_key)
           cross join unnest(%s::timestamptz[], %s::timestamptz[]) as bad(bad_from, bad_until)
           where a.dataset_key = %s and a.access in ('write', 'read_write')
             and coalesce(r.stopped_at, a.accessed_at) >= bad.bad_from
             and coalesce(r.stopped_at, a.accessed_at) < bad.bad_until
           group by a.run_key order by min(coalesce(r.stopped_at, a.accessed_at)), a.run_key""",
        ([start for start, _ in ranges], [end for _, end in ranges], dataset_key)).fetchall()
    return [row[0] for row in rows]


def latest_writes(conn: psycopg.Connection, datasets: Sequence[DataRef]) -> dict[DataRef, LatestWrite]:
    """Each dataset's latest write: by which run, when."""
    rows = conn.execute(
        """select distinct on (d.dataset_key) d.namespace, d.dataset_type, d.dataset, a.run_key,
                  coalesce(r.stopped_at, a.accessed_at)
           from unnest(%s::text[], %s::text[], %s::text[]) as k(namespace, dataset_type, dataset)
           join lineage.datasets d
             on (d.namespace, d.dataset_type, d.dataset) = (k.namespace, k.dataset_type, k.dataset)
           join lineage.dataset_accesses a on a.dataset_key = d.dataset_key and a.access in ('write', 'read_write')
           join lineage.runs r on r.run_key = a.run_key
           order by d.dataset_key, coalesce(r.stopped_at, a.accessed_at) desc, a.run_key desc""",
        ([d.namespace for d in datasets], [d.type for d in datasets], [d.name for d in datasets])).fetchall()
    return {DataRef(row[0], row[1], row[2]): LatestWrite(row[3], row[4]) for row in rows}


def dataset_keys(conn: psycopg.Connection, refs: Sequence[tuple[str, str, str]]) -> dict[tuple[str, str, str], int]:
    """The surrogate keys of datasets named (namespace, type, name)."""
    if not refs:
        return {}
    rows = conn.execute(
        """select d.namespace, d.dataset_type, d.dataset, d.dataset_key from lineage.datasets d
           join unnest(%s::text[], %s::text[], %s::text[]) as k(namespace, dataset_type, dataset)
             on (d.namespace, d.dataset_type, d.dataset) = (k.namespace, k.dataset_type, k.dataset)""",
        ([r[0] for r in refs], [r[1] for r in refs], [r[2] for r in refs])).fetchall()
    return {(row[0], row[1], row[2]): row[3] for row in rows}

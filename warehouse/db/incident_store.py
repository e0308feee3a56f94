"""Incidents: a dataset marked bad over a time range (issue 33). When its writes happened is
``warehouse.db.run_lineage_store``'s to answer."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

import psycopg
from psycopg.rows import class_row
from psycopg.types.json import Jsonb

from lineage.ids import DataRef
from warehouse.service.blast_radius import Incident

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


def record_check(conn: psycopg.Connection, dataset_key: int, namespace: str, dataset_type: str, dataset: str,
                 checked_at: datetime, checks: Sequence[Mapping[str, str]], source: str, created_by: str) -> Incident:
    """An incident from failed ``checks`` (``{"assertion", "column"?}``, worded as the compaction
    words OpenLineage's: ``lineage.failed_checks_reason``) at ``checked_at``: the version it checked
    (the latest write at or before it; ``lineage.checked_version``, as the compaction does)."""
    with conn.cursor(row_factory=class_row(Incident)) as cursor:
        row = cursor.execute(
            f"""insert into lineage.dataset_incidents (namespace, dataset_type, dataset, bad_from, bad_until, reason,
                    source, created_by)
                select %s, %s, %s, version.bad_from, version.bad_until, lineage.failed_checks_reason(%s), %s, %s
                from lineage.checked_version(%s, %s) version
                returning {_COLUMNS}""",
            (namespace, dataset_type, dataset, Jsonb(list(checks)), source, created_by, dataset_key,
             checked_at)).fetchone()
    assert row is not None
    return row


def incidents_of(conn: psycopg.Connection, namespace: str, dataset_type: str, dataset: str) -> list[Incident]:
    with conn.cursor(row_factory=class_row(Incident)) as cursor:
        return cursor.execute(f"""select {_COLUMNS} from lineage.dataset_incidents
                                  where (namespace, dataset_type, dataset) = (%s, %s, %s)
                                  order by bad_from, incident_id""", (namespace, dataset_type, dataset)).fetchall()


def recent(conn: psycopg.Connection, since: datetime) -> list[Incident]:
    """The incidents recorded, or with bad writes, at or after ``since``, oldest first."""
    with conn.cursor(row_factory=class_row(Incident)) as cursor:
        return cursor.execute(f"""select {_COLUMNS} from lineage.dataset_incidents
                                  where created_at >= %(since)s or bad_until >= %(since)s
                                  order by incident_id""", {"since": since}).fetchall()


def announced(conn: psycopg.Connection, incident_id: int) -> set[DataRef]:
    """The datasets the incident's blast radius was announced for."""
    rows = conn.execute("""select namespace, dataset_type, dataset from lineage.blast_announcements
                           where incident_id = %s""", (incident_id,)).fetchall()
    return {DataRef(*row) for row in rows}

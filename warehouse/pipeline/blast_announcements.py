"""Announcing the blast radius: the compaction DAG emits one Airflow asset event per dataset a
recent incident's bad writes reached (the bad dataset itself at level 0, then what runs that read
it wrote, up to ``LEVELS``), through the asset alias ``lineage_blast_radius``, each (incident,
dataset) once. A dataset reached later (a run that reads the bad version after the incident was
recorded) is announced by the DAG run after it is compacted.

Incidents are looked at while recent: recorded, or with bad writes, in the last ``LOOKBACK_DAYS``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import psycopg

from lineage.ids import DataRef
from warehouse.db import blast_radius_store, entity_keys, incident_store
from warehouse.service.blast_radius import Incident
from warehouse.service.timespec import epoch_seconds

LOOKBACK_DAYS = 7
LEVELS = 5


@dataclass(frozen=True, slots=True)
class Affected:
    """A dataset an incident's bad writes reached, ``level`` runs away, and whether its latest
    write still came from inside the blast (``still``) or a run outside it rewrote it since."""

    incident: Incident
    dataset: DataRef
    level: int
    still: bool

    def extra(self) -> dict[str, Any]:
        """The asset event's extra."""
        bad = self.incident
        return {"namespace": self.dataset.namespace, "type": self.dataset.type, "dataset": self.dataset.name,
                "level": self.level, "stillAffected": self.still,
                "incident": {"id": bad.incident_id, "namespace": bad.namespace, "type": bad.dataset_type,
                             "dataset": bad.dataset, "from": epoch_seconds(bad.bad_from),
                             "until": epoch_seconds(bad.bad_until), "reason": bad.reason, "source": bad.source}}


def due(conn: psycopg.Connection, now: datetime) -> list[Affected]:
    """The datasets recent incidents reached that were not announced yet, by incident and level."""
    found: list[Affected] = []
    for incident in incident_store.recent(conn, now - timedelta(days=LOOKBACK_DAYS)):
        key = entity_keys.dataset_key(conn, DataRef(incident.namespace, incident.dataset_type, incident.dataset))
        if key is None:
            continue
        announced = incident_store.announced(conn, incident.incident_id)
        walked = blast_radius_store.reached(conn, key, [(incident.bad_from, incident.bad_until)], LEVELS,
                                            details=False)
        blast, latest = walked.blast, walked.latest
        fresh = sorted(((data, level) for data, level in blast.datasets.items() if data not in announced),
                       key=lambda item: (item[1], item[0].id))
        found += [Affected(incident, data, level, data not in latest or latest[data].run_key in blast.levels)
                  for data, level in fresh]
    return found


def mark_announced(conn: psycopg.Connection, affected: Iterable[Affected]) -> int:
    """Record the datasets as announced for their incidents (a re-run announces nothing twice)."""
    rows = [(item.incident.incident_id, item.dataset.namespace, item.dataset.type, item.dataset.name, item.level)
            for item in affected]
    with conn.cursor() as cursor:
        cursor.executemany("""insert into lineage.blast_announcements (incident_id, namespace, dataset_type, dataset,
                                  level) values (%s, %s, %s, %s, %s) on conflict do nothing""", rows)
    return len(rows)

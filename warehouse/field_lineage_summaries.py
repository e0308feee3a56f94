"""The queries of CDAP's field lineage summaries (``lineage.field_summaries`` renders them): a
field's source fields and destination fields one dataset away, and a whole dataset's relations
in one pass. All read the source index ``field_path_sources`` (source field -> destination field
per operation set) and keep the operation sets a run recorded in the window."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import psycopg

from lineage.field_lineage_response import FieldKey
from warehouse.lineage_store import in_window

# An operation set's row of field_path_sources counts when a run in the window recorded the set
# for its destination.
_RECORDED_IN_WINDOW = f"""exists (
    select 1 from lineage.datasets d
    join lineage.field_lineage_runs f on f.dataset_key = d.dataset_key and f.set_fingerprint = s.fingerprint
    join lineage.runs r on r.run_key = f.run_key
    where d.namespace = s.destination_namespace and d.dataset_type = s.destination_type
      and d.dataset = s.destination and {in_window("r.started_at", "r.stopped_at")})"""

# (source field, destination field) pairs whose destination is the dataset (and field, when given).
_INCOMING = f"""
    select distinct x.source_namespace, x.source, x.source_field, x.field
    from lineage.field_operation_sets s
    join lineage.field_path_sources x on x.set_fingerprint = s.fingerprint
    where s.destination_namespace = %(namespace)s and s.destination = %(dataset)s
      and (%(field)s::text is null or x.field = %(field)s) and {_RECORDED_IN_WINDOW}"""

# (source field, destination field) pairs whose source is the dataset (and field, when given).
_OUTGOING = f"""
    select distinct x.source_field, s.destination_namespace, s.destination, x.field
    from lineage.field_path_sources x
    join lineage.field_operation_sets s on s.fingerprint = x.set_fingerprint
    where x.source_namespace = %(namespace)s and x.source = %(dataset)s
      and (%(field)s::text is null or x.source_field = %(field)s) and {_RECORDED_IN_WINDOW}"""


def incoming_relations(conn: psycopg.Connection, namespace: str, dataset: str, start: datetime, end: datetime,
                       field: str | None = None) -> list[tuple[FieldKey, str]]:
    """(source field, field of the dataset) for every field of it (or ``field``), in the window."""
    rows = conn.execute(_INCOMING, _params(namespace, dataset, field, start, end)).fetchall()
    return [(FieldKey(ns, ds, source_field), destination_field) for ns, ds, source_field, destination_field in rows]


def outgoing_relations(conn: psycopg.Connection, namespace: str, dataset: str, start: datetime, end: datetime,
                       field: str | None = None) -> list[tuple[str, FieldKey]]:
    """(field of the dataset, destination field) for every field of it (or ``field``), in the window."""
    rows = conn.execute(_OUTGOING, _params(namespace, dataset, field, start, end)).fetchall()
    return [(source_field, FieldKey(ns, ds, destination_field)) for source_field, ns, ds, destination_field in rows]


def _params(namespace: str, dataset: str, field: str | None, start: datetime, end: datetime) -> dict[str, Any]:
    return {"namespace": namespace, "dataset": dataset, "field": field, "start": start, "end": end}

"""The queries of CDAP's field lineage summaries (``warehouse.service.field_summaries`` renders them): a
field's source fields and destination fields one dataset away, and a whole dataset's relations
in one pass. All read the source index ``field_path_sources`` (source field -> destination field
per operation set) and keep the operation sets a run recorded in the window."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import psycopg

from lineage.ids import DataRef
from warehouse.db import field_lineage_store
from warehouse.db.lineage_store import run_in_window
from warehouse.service.field_hiding import Readable, hide_flow, hide_path
from warehouse.service.field_lineage_rows import FieldKey
from warehouse.service.field_summaries import (
    Direction,
    OperationSet,
    dataset_summary,
    field_summary,
    operation_sets,
    wants,
)

# An operation set's row of field_path_sources counts when a run in the window recorded the set
# for its destination.
_RECORDED_IN_WINDOW = f"""exists (
    select 1 from lineage.datasets d
    join lineage.field_lineage_runs f on f.dataset_key = d.dataset_key and f.set_fingerprint = s.fingerprint
    join lineage.runs r on r.run_key = f.run_key
    where d.namespace = s.destination_namespace and d.dataset_type = s.destination_type
      and d.dataset = s.destination and {run_in_window("r")})"""

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


# Never prepared: each execution planned for its values. psycopg prepares a query on its 5th
# execution on a connection, and from the 11th PostgreSQL kept one generic plan, which cannot use
# the optional field filter and the window: on the API's pooled connections a dataset's
# summary took 22-35 ms instead of 9-13 ms (the storage benchmark's two-day platform). Not for
# every read: the field lineage queries were as fast or faster with their generic plans.
_PREPARE = False


def incoming_relations(conn: psycopg.Connection, namespace: str, dataset: str, start: datetime, end: datetime,
                       field: str | None = None) -> list[tuple[FieldKey, str]]:
    """(source field, field of the dataset) for every field of it (or ``field``), in the window."""
    rows = conn.execute(_INCOMING, _params(namespace, dataset, field, start, end), prepare=_PREPARE).fetchall()
    return [(FieldKey(ns, ds, source_field), destination_field) for ns, ds, source_field, destination_field in rows]


def outgoing_relations(conn: psycopg.Connection, namespace: str, dataset: str, start: datetime, end: datetime,
                       field: str | None = None) -> list[tuple[str, FieldKey]]:
    """(field of the dataset, destination field) for every field of it (or ``field``), in the window."""
    rows = conn.execute(_OUTGOING, _params(namespace, dataset, field, start, end), prepare=_PREPARE).fetchall()
    return [(source_field, FieldKey(ns, ds, destination_field)) for source_field, ns, ds, destination_field in rows]


def _params(namespace: str, dataset: str, field: str | None, start: datetime, end: datetime) -> dict[str, Any]:
    return {"namespace": namespace, "dataset": dataset, "field": field, "start": start, "end": end}


def summary(conn: psycopg.Connection, key: FieldKey, start: datetime, end: datetime, direction: Direction
            ) -> dict[str, Any]:
    """CDAP's ``FieldLineageSummary`` of the field ``key`` in [start, end)."""
    incoming = [source for source, _ in incoming_relations(conn, key.namespace, key.dataset, start, end, key.field)] \
        if wants(direction, "incoming") else []
    outgoing = [target for _, target in outgoing_relations(conn, key.namespace, key.dataset, start, end, key.field)] \
        if wants(direction, "outgoing") else []
    return field_summary(direction, incoming, outgoing)


def operation_details(conn: psycopg.Connection, key: FieldKey, start: datetime, end: datetime,
                      direction: Direction, readable: Readable | None = None) -> dict[str, Any]:
    """CDAP's ``FieldLineageDetails`` of the field ``key`` in [start, end): incoming, the
    operation sets of its paths; outgoing, those of its flows (up to each write or drop).
    ``readable``: what the caller may read; the rest is hidden as ``warehouse.service.field_hiding`` says."""
    details: dict[str, Any] = {}
    if wants(direction, "incoming"):
        destination = DataRef(key.namespace, "dataset", key.dataset)
        paths = field_lineage_store.FieldLineageQueries(conn, start, end).paths([key])
        details["incoming"] = operation_sets(
            OperationSet(fingerprint=row.path_fingerprint if path is row.path else path["fingerprint"],
                         destination=destination, document=path, descriptions=row.descriptions,
                         described_at=row.described_at, programs=row.programs, last_seen=row.last_seen)
            for row in paths
            for path in [row.path if readable is None else hide_path(row.path, readable)])
    if wants(direction, "outgoing"):
        flows = field_lineage_store.flows(conn, key, start, end)
        details["outgoing"] = operation_sets(
            OperationSet(fingerprint=row.flow_fingerprint, destination=row.destination, document=row.flow,
                         descriptions=row.descriptions, described_at=row.described_at, programs=row.programs,
                         last_seen=row.last_seen)
            for row in (flows if readable is None else [hide_flow(flow, readable) for flow in flows]))
    return details


def dataset_field_lineage(conn: psycopg.Connection, namespace: str, dataset: str, start: datetime, end: datetime,
                          direction: Direction, schema_fields: set[str]) -> dict[str, Any]:
    """CDAP's ``DatasetFieldLineageSummary`` of the dataset in [start, end): one query per
    direction for every field's relations, one for the field counts of the datasets related."""
    incoming = incoming_relations(conn, namespace, dataset, start, end) if wants(direction, "incoming") else []
    outgoing = outgoing_relations(conn, namespace, dataset, start, end) if wants(direction, "outgoing") else []
    others = sorted({(k.namespace, k.dataset) for k, _ in incoming} | {(k.namespace, k.dataset) for _, k in outgoing})
    fields = field_lineage_store.lineage_fields(conn, [(namespace, dataset), *others], start, end)
    counts = {other: sum(fields.get(other, {}).values()) for other in others}
    own = {name for name, has_lineage in fields[(namespace, dataset)].items() if has_lineage} | schema_fields
    return dataset_summary(direction, int(start.timestamp()), int(end.timestamp()), (namespace, dataset),
                           sorted(own), incoming, outgoing, counts)

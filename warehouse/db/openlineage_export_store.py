"""Reads of the OpenLineage export: the events of a window in time order, a page at a time.

The window holds, by event time in ``[after, before)``: each OpenLineage RunEvent kept as it
came (``lineage.openlineage_events``), and for each run the warehouse has no such event of (our
client's, automatic capture's, or an OpenLineage run compacted before events were kept) its
start (at the run's time) and its end (at its end, once it ended), which the service layer
renders (``warehouse.service.openlineage_export``). An event is given only to a caller who may
read every namespace it touches (a kept event's recorded namespaces; a rendered run's own, its
datasets', its column lineage sources' and its parent and root runs'); the others are counted as
withheld. Of a namespace deleted and awaiting its cleanup, nothing from before its re-creation.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import dict_row

from lineage.model.field_paths import stored_record
from lineage.model.metadata_entity import dataset_entity
from warehouse.service.openlineage_export import (
    DatasetExport,
    DatasetRef,
    LinkedRunRef,
    Program,
    RunExport,
    run_events,
)

# Every event of the window, with the namespaces it touches; %(all)s: the caller reads everything.
_WINDOW = """
    with runs as (
        select r.run_key, r.run_at, r.stopped_at, r.status,
               -- every namespace its rendering names: its datasets, its column lineage's sources, its
               -- parent and root runs' programs
               array(select a.namespace from lineage.dataset_accesses a where a.run_key = r.run_key
                     union select d.namespace from lineage.field_lineage_runs f
                           join lineage.datasets d using (dataset_key) where f.run_key = r.run_key
                     union select p.source_namespace from lineage.field_lineage_runs f
                           join lineage.field_path_sources p on p.set_fingerprint = f.set_fingerprint
                           where f.run_key = r.run_key
                     union select l.namespace from lineage.run_parents l where l.run_key = r.run_key)
               || r.namespace as namespaces
        from lineage.runs r
        where (r.run_at >= %(after)s and r.run_at < %(before)s
               or r.stopped_at >= %(after)s and r.stopped_at < %(before)s)
          and not exists (select from lineage.openlineage_events o where o.run_key = r.run_key)),
    items as (
        select o.event_time as at, 'kept' as kind, o.event_id, o.run_key, o.namespaces
        from lineage.openlineage_events o
        where o.event_time >= %(after)s and o.event_time < %(before)s
        union all
        select t.at, t.kind, null, r.run_key, r.namespaces
        from runs r
        cross join lateral (values ('start', r.run_at),
                                   ('end', case when r.status <> 'running' then r.stopped_at end)) as t(kind, at)
        where t.at >= %(after)s and t.at < %(before)s)
    select at, kind, event_id, run_key, (%(all)s or namespaces <@ %(readable)s::text[]) as readable from items i
    -- the race guard: of a namespace deleted and awaiting its cleanup, nothing from before it was created again
    where not exists (select from lineage.namespace_guards g
                      where g.namespace = any(i.namespaces) and i.at < g.visible_since)"""


@dataclass(frozen=True, slots=True)
class WindowItem:
    """One event of the window: a kept event (``event_id``) or a run's ``start`` or ``end``."""

    at: datetime
    kind: str
    event_id: str | None
    run_key: int


@dataclass(frozen=True, slots=True)
class WindowPage:
    items: tuple[WindowItem, ...]
    total: int  # the caller's events in the window
    withheld: int  # events of the window touching a namespace the caller may not read


def window_page(conn: psycopg.Connection, after: datetime, before: datetime, readable: Sequence[str] | None, *,
                ascending: bool, limit: int, offset: int) -> WindowPage:
    """The caller's events of ``[after, before)`` in time order, ``limit`` from ``offset``
    (``readable``: the namespaces the caller may read; None: all)."""
    params = {"after": after, "before": before, "all": readable is None, "readable": list(readable or [])}
    direction = "asc" if ascending else "desc"
    with conn.cursor(row_factory=dict_row) as cursor:
        counts = cursor.execute(f"select count(*) filter (where readable) as total, "
                                f"count(*) filter (where not readable) as withheld from ({_WINDOW}) w",
                                params).fetchone()
        rows = cursor.execute(
            f"select * from ({_WINDOW}) w where readable "
            f"order by at {direction}, kind = 'end' {direction}, event_id {direction}, run_key {direction} "
            "limit %(limit)s offset %(offset)s", {**params, "limit": limit, "offset": offset}).fetchall()
    assert counts is not None
    return WindowPage(tuple(WindowItem(row["at"], row["kind"], row["event_id"], row["run_key"]) for row in rows),
                      counts["total"], counts["withheld"])


def kept_events(conn: psycopg.Connection, event_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """The kept OpenLineage events of ``event_ids``, as they came."""
    rows = conn.execute("select event_id, event from lineage.openlineage_events where event_id = any(%s)",
                        (list(event_ids),)).fetchall()
    return {row[0]: row[1] for row in rows}


def run_exports(conn: psycopg.Connection, run_keys: Sequence[int]) -> dict[int, RunExport]:
    """What the warehouse keeps of each of ``run_keys``, for the export to render."""
    keys = list(run_keys)
    if not keys:
        return {}
    with conn.cursor(row_factory=dict_row) as cursor:
        runs = cursor.execute(
            """select r.run_key, p.namespace, p.application, p.program_type, p.program, r.run_id, r.status,
                      r.run_at, r.stopped_at
               from lineage.runs r join lineage.programs p using (program_key) where r.run_key = any(%s)""",
            (keys,)).fetchall()
        accesses = cursor.execute(
            """select a.run_key, d.namespace, d.dataset_type, d.dataset, a.access
               from lineage.dataset_accesses a join lineage.datasets d using (dataset_key)
               where a.run_key = any(%s) order by d.namespace, d.dataset_type, d.dataset, a.access""",
            (keys,)).fetchall()
        links = cursor.execute(
            """select run_key, relation, namespace, application, program_type, program, run_id
               from lineage.run_parents where run_key = any(%s)""", (keys,)).fetchall()
        facets = cursor.execute(
            "select run_key, facet_of, name, facet from lineage.run_facets where run_key = any(%s) order by name",
            (keys,)).fetchall()
        sets = cursor.execute(
            """select f.run_key, d.namespace, d.dataset_type, d.dataset, s.destination_namespace,
                      s.destination_type, s.destination, s.operations
               from lineage.field_lineage_runs f join lineage.datasets d using (dataset_key)
               join lineage.field_operation_sets s on s.fingerprint = f.set_fingerprint
               where f.run_key = any(%s) order by f.set_fingerprint""", (keys,)).fetchall()
    refs: dict[int, dict[str, list[DatasetRef]]] = {}
    for row in accesses:
        ref = DatasetRef(row["namespace"], row["dataset_type"], row["dataset"])
        sides = refs.setdefault(row["run_key"], {"reads": [], "writes": []})
        if row["access"] in ("read", "read_write", "unknown") and ref not in sides["reads"]:
            sides["reads"].append(ref)
        if row["access"] in ("write", "read_write") and ref not in sides["writes"]:
            sides["writes"].append(ref)
    linked: dict[int, dict[str, LinkedRunRef]] = {}
    for row in links:
        linked.setdefault(row["run_key"], {})[row["relation"]] = LinkedRunRef(
            Program(row["namespace"], row["application"], row["program_type"], row["program"]), row["run_id"])
    kept: dict[int, dict[str, dict[str, Any]]] = {}
    for row in facets:
        kept.setdefault(row["run_key"], {"run": {}, "job": {}})[row["facet_of"]][row["name"]] = row["facet"]
    records: dict[int, dict[DatasetRef, list[dict[str, Any]]]] = {}
    for row in sets:
        ref = DatasetRef(row["namespace"], row["dataset_type"], row["dataset"])
        records.setdefault(row["run_key"], {}).setdefault(ref, []).append(_record(row))
    datasets = {ref for sides in refs.values() for side in sides.values() for ref in side}
    described = _dataset_descriptions(conn, datasets)
    exports = {}
    for row in runs:
        key = row["run_key"]
        sides = refs.get(key, {"reads": [], "writes": []})
        sides["writes"] += [ref for ref in records.get(key, {}) if ref not in sides["writes"]]  # recorded fields only
        mine = set(sides["reads"]) | set(sides["writes"])
        facets_of = kept.get(key, {"run": {}, "job": {}})
        exports[key] = RunExport(
            program=Program(row["namespace"], row["application"], row["program_type"], row["program"]),
            run_id=row["run_id"], status=row["status"], run_at=row["run_at"], stopped_at=row["stopped_at"],
            reads=tuple(sides["reads"]), writes=tuple(sides["writes"]),
            parent=linked.get(key, {}).get("parent"), root=linked.get(key, {}).get("root"),
            run_facets=facets_of["run"], job_facets=facets_of["job"], field_records=records.get(key, {}),
            schemas={ref: described.schemas[ref] for ref in mine if ref in described.schemas},
            dataset_facets={ref: described.facets[ref] for ref in mine if ref in described.facets},
            metadata={ref: described.metadata[ref] for ref in mine if ref in described.metadata})
    return exports


def _record(row: dict[str, Any]) -> dict[str, Any]:
    """A stored operation set as the field-operations record it was checked from."""
    return stored_record({"namespace": row["destination_namespace"], "type": row["destination_type"],
                          "name": row["destination"]}, row["operations"])


@dataclass(frozen=True, slots=True)
class _Descriptions:
    schemas: dict[DatasetRef, list[dict[str, str]]]
    facets: dict[DatasetRef, dict[str, Any]]
    metadata: dict[DatasetRef, dict[str, Any]]


def _dataset_descriptions(conn: psycopg.Connection, datasets: set[DatasetRef]) -> _Descriptions:
    """Each dataset's latest schema version, kept facets, and tags and properties."""
    by_key = {dataset_entity(ref.namespace, ref.dataset_type, ref.name).render(): ref for ref in datasets}
    found = _Descriptions({}, {}, {})
    if not by_key:
        return found
    with conn.cursor(row_factory=dict_row) as cursor:
        for row in cursor.execute(
                """select distinct on (entity_key) entity_key, schema from lineage.dataset_schema_versions
                   where entity_key = any(%s) order by entity_key, version desc""", (list(by_key),)):
            fields = (row["schema"] or {}).get("fields") or []
            found.schemas[by_key[row["entity_key"]]] = [
                {"name": item["name"], "type": str(item.get("type") or "")}
                for item in fields if isinstance(item, dict) and "name" in item]
        for row in cursor.execute(
                """select d.namespace, d.dataset_type, d.dataset, f.name, f.facet
                   from lineage.dataset_facets f join lineage.datasets d using (dataset_key)
                   where (d.namespace, d.dataset_type, d.dataset) in (select * from unnest(%s::text[], %s::text[],
                                                                                          %s::text[]))""",
                ([ref.namespace for ref in by_key.values()], [ref.dataset_type for ref in by_key.values()],
                 [ref.name for ref in by_key.values()])):
            ref = DatasetRef(row["namespace"], row["dataset_type"], row["dataset"])
            found.facets.setdefault(ref, {})[row["name"]] = row["facet"]
        for row in cursor.execute(
                """select entity_key, scope, kind, key, value from lineage.metadata where entity_key = any(%s)
                   order by entity_key, scope, kind, key""", (list(by_key),)):
            entry = found.metadata.setdefault(by_key[row["entity_key"]], {"tags": {}, "properties": {}})
            if row["kind"] == "tag":
                entry["tags"].setdefault(row["scope"], []).append(row["key"])
            else:
                entry["properties"].setdefault(row["scope"], {})[row["key"]] = row["value"]
    return found


@contextmanager
def snapshot(conn: psycopg.Connection) -> Iterator[None]:
    """One read-only REPEATABLE READ transaction on an autocommit ``conn``: the pages read in it
    (their counts, their events) see one state of the warehouse, however compactions run meanwhile."""
    with conn.transaction():
        conn.execute("set transaction isolation level repeatable read, read only")
        yield


@dataclass(frozen=True, slots=True)
class ExportPage:
    """A page of the export: OpenLineage run events in time order, and the window's counts."""

    events: list[dict[str, Any]]
    total: int
    withheld: int


def export_page(conn: psycopg.Connection, after: datetime, before: datetime, readable: Sequence[str] | None, *,
                ascending: bool = True, limit: int = 100, offset: int = 0) -> ExportPage:
    """The window's events, ``limit`` from ``offset``: kept ones as they came, the others rendered."""
    page = window_page(conn, after, before, readable, ascending=ascending, limit=limit, offset=offset)
    kept = kept_events(conn, [item.event_id for item in page.items if item.event_id is not None])
    runs = run_exports(conn, sorted({item.run_key for item in page.items if item.event_id is None}))
    events: list[dict[str, Any]] = []
    for item in page.items:
        if item.event_id is not None:
            events.append(kept[item.event_id])
        else:
            events.extend(run_events(runs[item.run_key], (item.kind,)))
    return ExportPage(events, page.total, page.withheld)


def quiet_datasets(conn: psycopg.Connection, after: datetime, before: datetime, readable: Sequence[str] | None
                   ) -> list[DatasetExport]:
    """The datasets with a schema or metadata that no run of ``[after, before)`` read or wrote
    (in the namespaces of ``readable``; None: all), each with its schema, facets and metadata."""
    rows = conn.execute(
        """select d.namespace, d.dataset_type, d.dataset,
                  greatest((select max(v.created_at) from lineage.dataset_schema_versions v
                            where v.entity_key = d.entity_key),
                           (select max(m.updated_at) from lineage.metadata m where m.entity_key = d.entity_key))
           from lineage.datasets d
           where (%(all)s or d.namespace = any(%(readable)s))
             and (exists (select from lineage.dataset_schema_versions v where v.entity_key = d.entity_key)
                  or exists (select from lineage.metadata m where m.entity_key = d.entity_key))
             and not exists (select from lineage.dataset_accesses a join lineage.runs r using (run_key)
                             where a.dataset_key = d.dataset_key
                               and (r.run_at >= %(after)s and r.run_at < %(before)s
                                    or r.stopped_at >= %(after)s and r.stopped_at < %(before)s))
           order by d.namespace, d.dataset_type, d.dataset""",
        {"all": readable is None, "readable": list(readable or []), "after": after, "before": before}).fetchall()
    refs = [DatasetRef(row[0], row[1], row[2]) for row in rows]
    described = _dataset_descriptions(conn, set(refs))
    return [DatasetExport(ref=ref, updated_at=row[3], schema=described.schemas.get(ref, ()),
                          facets=described.facets.get(ref, {}), metadata=described.metadata.get(ref, {}))
            for ref, row in zip(refs, rows, strict=True) if row[3] is not None]

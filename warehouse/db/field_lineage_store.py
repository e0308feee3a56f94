"""Field lineage reads: the API's queries over what the field lineage job stored
(``warehouse.db.field_lineage_staging`` writes it; ``warehouse.service.field_lineage_response``
walks and renders these rows). The rows are the service's (``warehouse.service.field_lineage_rows``:
``PathRow``, ``FlowRow``), since the service declares what it asks. The CDAP-shaped summaries are
in ``warehouse.db.field_lineage_summaries``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

import orjson
import psycopg
from psycopg.rows import dict_row, kwargs_row
from psycopg.types.json import set_json_loads

from lineage.ids import DataRef
from lineage.model.field_paths import path_fingerprint, path_operations, path_origins
from warehouse.db.lineage_store import run_in_window
from warehouse.service.field_lineage_diff import field_diff
from warehouse.service.field_lineage_response import field_lineage
from warehouse.service.field_lineage_rows import FieldKey, FlowDocument, FlowRow, PathDocument, PathRow, ProgramLastRun
from warehouse.service.timespec import epoch_seconds


def dataset_exists(conn: psycopg.Connection, namespace: str, dataset: str) -> bool:
    return conn.execute("select 1 from lineage.datasets where namespace = %s and dataset = %s",
                        (namespace, dataset)).fetchone() is not None


def field_written(conn: psycopg.Connection, namespace: str, dataset: str, field: str) -> bool:
    """Whether any recorded operation set writes ``field`` of the dataset (it has provenance)."""
    return conn.execute(
        """select 1 from lineage.field_operation_sets s join lineage.field_paths p on p.set_fingerprint = s.fingerprint
           where s.destination_namespace = %s and s.destination = %s and p.field = %s limit 1""",
        (namespace, dataset, field)).fetchone() is not None


def field_known(conn: psycopg.Connection, namespace: str, dataset: str, field: str) -> bool:
    """Whether any recorded operation set writes ``field`` of the dataset or reads it."""
    return field_written(conn, namespace, dataset, field) or conn.execute(
        """select 1 from lineage.field_source_flows
           where source_namespace = %s and source = %s and source_field = %s limit 1""",
        (namespace, dataset, field)).fetchone() is not None


def run_groups(keys: Sequence[str]) -> str:
    """Two CTEs over a CTE ``per_run`` (``keys``, run_id, run_at, program_key): ``per_set``,
    each group's runs with the first and last run time, and ``per_program``, each group's
    programs (CDAP's program id parts and ``lastExecutedTimeInSeconds``, the latest run time, and
    its runs: a caller who may not read a program sees none of them). A
    run's time is its start, or else its earliest event (``lineage_store.run_in_window``)."""
    cols, x_cols = ", ".join(keys), ", ".join(f"x.{key}" for key in keys)
    return f"""
    per_set as (
        select {cols}, to_jsonb(array_agg(run_id)) as runs, min(run_at) as first_seen, max(run_at) as last_seen
        from per_run group by {cols}
    ),
    per_program as (
        select {x_cols}, jsonb_agg(jsonb_build_object(
                   'namespace', p.namespace, 'application', p.application, 'type', p.program_type,
                   'program', p.program, 'lastExecutedTimeInSeconds', extract(epoch from x.last_run)::bigint,
                   'runs', x.runs)
               ) as programs
        from (select {cols}, program_key, max(run_at) as last_run, to_jsonb(array_agg(run_id)) as runs
              from per_run group by {cols}, program_key) x
        join lineage.programs p on p.program_key = x.program_key
        group by {x_cols}
    )"""


# For a set of fields: the operation sets that write each, then per (destination, set) the runs
# that recorded it in the window and their programs, aggregated once per set however many of its
# fields are asked (a wide record's 100 fields share one set and its 1,000 runs); the (large)
# path documents join last, and the core merges the sets that share a path fingerprint. A path
# travels without its operations (their ids only): the store rebuilds them from the set's
# operations, sent once per set, so a wide record's 100 paths do not carry 100 copies of them.
_PATHS = f"""
    with keys as (
        select * from unnest(%(namespaces)s::text[], %(datasets)s::text[], %(fields)s::text[])
            as k(namespace, dataset, field)
    ),
    key_sets as (
        select k.namespace, k.dataset, k.field, d.dataset_key, p.set_fingerprint
        from keys k
        join lineage.datasets d on d.namespace = k.namespace and d.dataset = k.dataset
        join lineage.field_operation_sets s on s.destination_namespace = k.namespace and s.destination = k.dataset
                                            and s.destination_type = d.dataset_type
        join lineage.field_paths p on p.set_fingerprint = s.fingerprint and p.field = k.field
    ),
    per_run as (
        select ds.dataset_key, ds.set_fingerprint, r.run_id, r.run_at, r.program_key
        from (select distinct dataset_key, set_fingerprint from key_sets) ds
        join lineage.field_lineage_runs f on f.dataset_key = ds.dataset_key and f.set_fingerprint = ds.set_fingerprint
        join lineage.runs r on r.run_key = f.run_key
        where {run_in_window("r")}
    ),
    {run_groups(("dataset_key", "set_fingerprint"))}
    select ks.namespace, ks.dataset, ks.field, p.path_fingerprint, p.path - 'operations' as path,
           jsonb_path_query_array(p.path, '$.operations[*].id') as operation_ids,
           s.descriptions, s.described_at, ps.first_seen, ps.last_seen, ks.dataset_key, ks.set_fingerprint,
           -- a set's runs, programs and operations travel once, on its first row (the store shares them)
           case when row_number() over (partition by ks.dataset_key, ks.set_fingerprint) = 1
                then ps.runs end as runs,
           case when row_number() over (partition by ks.dataset_key, ks.set_fingerprint) = 1
                then pp.programs end as programs,
           case when row_number() over (partition by ks.set_fingerprint) = 1
                then s.operations end as set_operations
    from key_sets ks
    join per_set ps using (dataset_key, set_fingerprint)
    join per_program pp using (dataset_key, set_fingerprint)
    join lineage.field_paths p on p.set_fingerprint = ks.set_fingerprint and p.field = ks.field
    join lineage.field_operation_sets s on s.fingerprint = ks.set_fingerprint
    order by ks.namespace, ks.dataset, ks.field, ps.first_seen, p.path_fingerprint"""

_PATH_OPERATIONS = """select (path->'operations')::text from lineage.field_paths
                       where set_fingerprint = %s and field = %s"""

# Destination fields whose paths start at any of a set of source fields, with a run in the
# window (checked as an existence through the (dataset_key, set_fingerprint) key of the run rows).
_FED_BY = f"""
    select distinct s.destination_namespace, s.destination, x.field
    from unnest(%(namespaces)s::text[], %(datasets)s::text[], %(fields)s::text[]) as k(namespace, dataset, field)
    join lineage.field_path_sources x
      on x.source_namespace = k.namespace and x.source = k.dataset and x.source_field = k.field
    join lineage.field_operation_sets s on s.fingerprint = x.set_fingerprint
    join lineage.datasets d on d.namespace = s.destination_namespace and d.dataset_type = s.destination_type
                           and d.dataset = s.destination
    where exists (select 1 from lineage.field_lineage_runs f join lineage.runs r on r.run_key = f.run_key
                  where f.dataset_key = d.dataset_key and f.set_fingerprint = x.set_fingerprint
                    and {run_in_window("r")})
    order by 1, 2, 3"""


class FieldLineageQueries:
    """Field lineage's queries (``warehouse.service.field_lineage_response.FieldLineageQueries``) for the
    window [start, end): one query per call, over the whole set of fields it is given."""

    def __init__(self, conn: psycopg.Connection, start: datetime, end: datetime) -> None:
        self.conn, self.start, self.end = conn, start, end

    def paths(self, keys: Sequence[FieldKey]) -> list[PathRow]:
        """Per field in ``keys`` and operation set, the set's path with every run that recorded
        it in the window (the core merges the sets that share a path)."""
        with self.conn.cursor(row_factory=dict_row) as cursor:
            set_json_loads(orjson.loads, cursor)  # path documents are large: parse them fast
            rows = cursor.execute(_PATHS, self._arrays(keys)).fetchall()
        # Every field of a set has the set's runs: one tuple shared, not one copy per field.
        shared = {(row["dataset_key"], row["set_fingerprint"]): (tuple(row["runs"]), _programs(row["programs"]))
                  for row in rows if row["runs"] is not None}
        set_operations = {row["set_fingerprint"]: {op["id"]: op for op in row["set_operations"]}
                          for row in rows if row["set_operations"] is not None}
        found = []
        for row in rows:
            set_fingerprint, path = row["set_fingerprint"], row["path"]
            if not self._rebuilt(path, set_operations[set_fingerprint], row["operation_ids"], row["path_fingerprint"]):
                # a set stored by an older derivation: read the path's operations as stored
                stored = self.conn.execute(_PATH_OPERATIONS, (set_fingerprint, row["field"])).fetchone()
                path["operations"] = orjson.loads(stored[0]) if stored else []
            path["set"] = set_fingerprint  # whose operations these are (an answer's one drawing keeps sets apart)
            runs, programs = shared[(row["dataset_key"], set_fingerprint)]
            found.append(PathRow(
                key=FieldKey(row["namespace"], row["dataset"], row["field"]), path_fingerprint=row["path_fingerprint"],
                path=path, descriptions=row["descriptions"], described_at=row["described_at"], runs=runs,
                programs=programs, first_seen=row["first_seen"], last_seen=row["last_seen"]))
        return found

    @staticmethod
    def _rebuilt(path: PathDocument, known: dict[str, Any], ids: list[str], fingerprint: str) -> bool:
        """Give ``path`` its operations (``ids``) from its set's ``known`` operations; whether
        they are the ones it was stored with (its ``fingerprint`` matches: a set's
        ``derived_with`` is no proof, migrations moved it on without deriving paths again)."""
        if not all(op_id in known for op_id in ids):
            return False
        path["operations"] = path_operations(known, ids, path["field"])
        return path_fingerprint(path["field"], path_origins(path), path["operations"]) == fingerprint

    def flows(self, key: FieldKey) -> list[FlowRow]:
        """Where the source field ``key`` goes, per operation set with a run in the window (``flows``)."""
        return flows(self.conn, key, self.start, self.end)

    def fed_by(self, keys: Sequence[FieldKey]) -> list[FieldKey]:
        """Destination fields whose paths start at any source field in ``keys``, run in the window."""
        return [FieldKey(*row) for row in self.conn.execute(_FED_BY, self._arrays(keys)).fetchall()]

    def _arrays(self, keys: Sequence[FieldKey]) -> dict[str, Any]:
        return {"namespaces": [k.namespace for k in keys], "datasets": [k.dataset for k in keys],
                "fields": [k.field for k in keys], "start": self.start, "end": self.end}


# Per source field and operation set with a run in the window: where the field goes (its flow),
# the set's destination, and the runs and programs of the set.
_FLOWS = f"""
    with flows as (
        select x.set_fingerprint, x.flow_fingerprint, x.flow, s.descriptions, s.described_at,
               s.destination_namespace, s.destination_type, s.destination, d.dataset_key
        from lineage.field_source_flows x
        join lineage.field_operation_sets s on s.fingerprint = x.set_fingerprint
        join lineage.datasets d on d.namespace = s.destination_namespace and d.dataset_type = s.destination_type
                               and d.dataset = s.destination
        where x.source_namespace = %(namespace)s and x.source = %(dataset)s and x.source_field = %(field)s
    ),
    per_run as (
        select fl.set_fingerprint, r.run_id, r.run_at, r.program_key
        from flows fl
        join lineage.field_lineage_runs f on f.dataset_key = fl.dataset_key and f.set_fingerprint = fl.set_fingerprint
        join lineage.runs r on r.run_key = f.run_key
        where {run_in_window("r")}
    ),
    {run_groups(("set_fingerprint",))}
    select fl.flow_fingerprint, fl.flow, fl.descriptions, fl.described_at, fl.destination_namespace,
           fl.destination_type, fl.destination, ps.runs, ps.first_seen, ps.last_seen, pp.programs
    from flows fl
    join per_set ps using (set_fingerprint)
    join per_program pp using (set_fingerprint)
    order by ps.first_seen, fl.destination_namespace, fl.destination, fl.flow_fingerprint"""


def flows(conn: psycopg.Connection, key: FieldKey, start: datetime, end: datetime) -> list[FlowRow]:
    """Per operation set with a run in [start, end) that reads the source field ``key``: its flow
    (``SourceFieldFlow.to_dict()``), the set's destination and descriptions, runs and programs."""
    with conn.cursor(row_factory=kwargs_row(_flow_row)) as cursor:
        set_json_loads(orjson.loads, cursor)
        return cursor.execute(_FLOWS, {"namespace": key.namespace, "dataset": key.dataset, "field": key.field,
                                       "start": start, "end": end}).fetchall()


def _flow_row(*, flow_fingerprint: str, flow: FlowDocument, descriptions: dict[str, str], described_at: datetime,
              destination_namespace: str, destination_type: str, destination: str, runs: list[str],
              first_seen: datetime, last_seen: datetime, programs: list[dict[str, Any]]) -> FlowRow:
    """A row of ``_FLOWS``, by its columns."""
    return FlowRow(flow_fingerprint=flow_fingerprint, flow=flow, descriptions=descriptions, described_at=described_at,
                   destination=DataRef(destination_namespace, destination_type, destination), runs=tuple(runs),
                   programs=_programs(programs), first_seen=first_seen, last_seen=last_seen)


def _programs(aggregated: list[dict[str, Any]]) -> tuple[ProgramLastRun, ...]:
    """The ``programs`` aggregate of ``run_groups`` (a JSON list) as rows."""
    return tuple(ProgramLastRun.from_json(item) for item in aggregated)


# The fields of a set of datasets with lineage: the fields an operation set writes to each, and
# the fields read from each whose values went somewhere (to a write or a drop); whether a run in
# the window recorded such a set.
_LINEAGE_FIELDS = f"""
    with keys as (select * from unnest(%(namespaces)s::text[], %(datasets)s::text[]) as k(namespace, dataset)),
    fields as (
        select k.namespace, k.dataset, p.field, s.fingerprint, s.destination_namespace, s.destination_type,
               s.destination
        from keys k
        join lineage.field_operation_sets s on s.destination_namespace = k.namespace and s.destination = k.dataset
        join lineage.field_paths p on p.set_fingerprint = s.fingerprint
        where starts_with(p.field, %(prefix)s)
        union all
        select k.namespace, k.dataset, x.source_field, s.fingerprint, s.destination_namespace, s.destination_type,
               s.destination
        from keys k
        join lineage.field_source_flows x on x.source_namespace = k.namespace and x.source = k.dataset
        join lineage.field_operation_sets s on s.fingerprint = x.set_fingerprint
        where starts_with(x.source_field, %(prefix)s) and not %(destinations_only)s
          and (jsonb_array_length(x.flow->'destinationFields') > 0 or jsonb_array_length(x.flow->'drops') > 0)
    ),
    live as (
        select distinct f.fingerprint, f.destination_namespace, f.destination
        from (select distinct fingerprint, destination_namespace, destination_type, destination from fields) f
        join lineage.datasets d on d.namespace = f.destination_namespace and d.dataset_type = f.destination_type
                               and d.dataset = f.destination
        where exists (select 1 from lineage.field_lineage_runs r join lineage.runs u on u.run_key = r.run_key
                      where r.dataset_key = d.dataset_key and r.set_fingerprint = f.fingerprint
                        and {run_in_window("u")})
    )
    select f.namespace, f.dataset, f.field, bool_or(l.fingerprint is not null) as has_lineage
    from fields f
    left join live l on l.fingerprint = f.fingerprint and l.destination_namespace = f.destination_namespace
                    and l.destination = f.destination
    group by f.namespace, f.dataset, f.field
    order by f.namespace, f.dataset, f.field"""


def lineage_fields(conn: psycopg.Connection, datasets: Sequence[tuple[str, str]], start: datetime, end: datetime,
                   prefix: str = "", *, destinations_only: bool = False) -> dict[tuple[str, str], dict[str, bool]]:
    """(namespace, dataset) -> each field ever recorded with lineage (written to it, or read from
    it and written or dropped; ``destinations_only``: written to it, as CDAP's ``getFields``
    lists) -> whether it has lineage in [start, end); one query for all."""
    found: dict[tuple[str, str], dict[str, bool]] = {key: {} for key in datasets}
    rows = conn.execute(_LINEAGE_FIELDS, {
        "namespaces": [ns for ns, _ in datasets], "datasets": [ds for _, ds in datasets], "prefix": prefix,
        "start": start, "end": end, "destinations_only": destinations_only}).fetchall()
    for namespace, dataset, field, has_lineage in rows:
        found.setdefault((namespace, dataset), {})[field] = has_lineage
    return found


Window = tuple[datetime, datetime]


def diff(conn: psycopg.Connection, key: FieldKey, window: Window, base: Window, *, direction: str = "incoming",
         changed_only: bool = False, answer: Callable[[Window], dict[str, Any]] | None = None) -> dict[str, Any]:
    """What changed in the field ``key``'s lineage from ``base`` to ``window``
    (``warehouse.service.field_lineage_diff``): its answer (one level, ``direction``) in each
    window, compared. ``answer``: how one window's answer is made for the caller (the API's hides
    what the caller cannot read); by default, everything."""
    def everything(side: Window) -> dict[str, Any]:
        return field_lineage(FieldLineageQueries(conn, *side), key, *map(epoch_seconds, side), direction=direction)

    current, before = ((answer or everything)(side) for side in (window, base))
    seconds = {"start": current["startTimeInSeconds"], "end": current["endTimeInSeconds"],
               "baseStart": before["startTimeInSeconds"], "baseEnd": before["endTimeInSeconds"]}
    return field_diff(seconds, current, before, changed_only=changed_only)

"""Field lineage in the warehouse: what the field lineage job stores, and the API's queries
(``warehouse.service.field_lineage_response`` walks and renders their rows).

Writes (one transaction per job run): operation sets by fingerprint (with their warnings),
their per-field paths, the source field -> destination field index for impact, each source
field's flow (where it goes: written, dropped, nowhere), and one row per run and destination.
The CDAP-shaped summaries read these tables in ``warehouse.db.field_lineage_summaries``.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson
import psycopg
from psycopg import sql
from psycopg.rows import dict_row
from psycopg.types.json import set_json_loads

from lineage.model.field_paths import DERIVATION, path_fingerprint, path_operations, path_origins
from warehouse.db import entity_keys
from warehouse.db.lineage_store import run_in_window
from warehouse.service.field_lineage_response import FieldKey

STAGING_SCHEMA = "lineage_field_staging"  # not the compaction's: it drops its own schema whole
STALE_STAGING_SECONDS = 86_400  # a staging table this old was left by a job that crashed
_PENDING = "kind = 'field_operations' and processed_at is null"
_KEY = "(event_time, namespace, event_id)"  # the order records are taken in, chunk by chunk
_COLUMNS = {
    "records": ("namespace", "event_id", "fingerprint", "destination_namespace", "destination_type", "destination",
                "descriptions", "reason"),
    "sets": ("fingerprint", "operations", "paths", "flows", "warnings"),
}
_TYPES = {"operations": "jsonb", "paths": "jsonb", "flows": "jsonb", "warnings": "jsonb"}


@dataclass(frozen=True)
class PendingKey:
    """Where a record stands in the order pending records are processed in."""

    event_time: str  # PostgreSQL's text of the timestamptz: exact, with its offset
    namespace: str
    event_id: str


@dataclass(frozen=True)
class PendingRange:
    """The pending records after ``after`` (from the first when None) up to ``upto`` inclusive."""

    after: PendingKey | None
    upto: PendingKey


@dataclass(frozen=True)
class FieldStaging:
    """One job run's staging tables (qualified names): the records Spark fingerprinted, and the
    operation sets not stored yet with their paths, flows and warnings."""

    records: str
    sets: str


def has_pending(conn: psycopg.Connection) -> bool:
    """Whether any compacted field operation record is not processed yet."""
    return conn.execute(f"select 1 from lineage.pending_events where {_PENDING} limit 1").fetchone() is not None


_FIELD_LINEAGE_LOCK = 7_265_404  # arbitrary, constant: one field lineage job at a time per warehouse


def lock_chunk(conn: psycopg.Connection) -> None:
    """Wait for the field lineage lock in ``conn``'s transaction: two jobs (the scheduled DAG's and
    the refresh's) take the pending records one chunk after the other, never the same chunk."""
    conn.execute("select pg_advisory_xact_lock(%s)", (_FIELD_LINEAGE_LOCK,))


def chunk_ranges(conn: psycopg.Connection, limit: int, parts: int) -> list[PendingRange]:
    """The next ``limit`` pending records, cut into at most ``parts`` consecutive ranges of about
    equal size (one per Spark task, which reads its range itself); [] when none is pending."""
    rows = conn.execute(f"""
        with chunk as (
            select event_time, namespace, event_id from lineage.pending_events where {_PENDING}
            order by {_KEY} limit %(limit)s
        ), parts as (
            select *, ntile(%(parts)s) over (order by {_KEY}) as part from chunk
        )
        select distinct on (part) event_time::text, namespace, event_id from parts
        order by part, event_time desc, namespace desc, event_id desc""",
        {"limit": limit, "parts": parts}).fetchall()
    ends = [PendingKey(*row) for row in rows]
    return [PendingRange(ends[index - 1] if index else None, upto) for index, upto in enumerate(ends)]


def read_pending(conn: psycopg.Connection, part: PendingRange, batch_rows: int) -> Iterator[list[tuple[str, ...]]]:
    """The (namespace, event_id, payload) of the pending records in ``part``, ``batch_rows`` at a
    time (a Spark task reads its range with this, on the executor)."""
    where = [_PENDING, "event_time <= %(upto_time)s::timestamptz",
             f"{_KEY} <= (%(upto_time)s::timestamptz, %(upto_namespace)s, %(upto_id)s)"]
    params = {"upto_time": part.upto.event_time, "upto_namespace": part.upto.namespace, "upto_id": part.upto.event_id}
    if part.after is not None:
        where += ["event_time >= %(after_time)s::timestamptz",
                  f"{_KEY} > (%(after_time)s::timestamptz, %(after_namespace)s, %(after_id)s)"]
        params.update(after_time=part.after.event_time, after_namespace=part.after.namespace,
                      after_id=part.after.event_id)
    with conn.cursor(name="pending_range") as cursor:
        cursor.execute(f"select namespace, event_id, payload::text from lineage.pending_events "
                       f"where {' and '.join(where)}", params)
        while rows := cursor.fetchmany(batch_rows):
            yield rows


def read_new_sets(conn: psycopg.Connection, staging: FieldStaging, bucket: int, buckets: int,
                  batch_rows: int) -> Iterator[list[tuple[str, ...]]]:
    """One record (fingerprint, namespace, payload) per operation set of the staged records that
    is not stored yet, or was derived by an older derivation, whose fingerprint falls in
    ``bucket`` of ``buckets`` (a Spark task derives the paths of its bucket, on the executor)."""
    with conn.cursor(name="new_sets") as cursor:
        cursor.execute(sql.SQL("""
            select distinct on (f.fingerprint) f.fingerprint, f.namespace, e.payload::text
            from {records} f
            join lineage.pending_events e on e.namespace = f.namespace and e.event_id = f.event_id
            where f.reason is null and (hashtext(f.fingerprint) & 2147483647) %% %(buckets)s = %(bucket)s
              and not exists (select 1 from lineage.field_operation_sets s
                              where s.fingerprint = f.fingerprint and s.derived_with >= %(derivation)s)
            order by f.fingerprint, f.namespace, f.event_id""").format(records=_table(staging.records)),
            {"bucket": bucket, "buckets": buckets, "derivation": DERIVATION})
        while rows := cursor.fetchmany(batch_rows):
            yield rows


def staging_columns(table: str) -> tuple[str, ...]:
    """The columns of the ``records`` or ``sets`` staging table, in COPY order."""
    return _COLUMNS[table]


def create_staging(conn: psycopg.Connection) -> FieldStaging:
    """Create (and commit) a job run's staging tables, which executors COPY into over their own
    connections; drop the ones crashed runs left a day ago or more. Under the field lineage
    lock: two jobs starting at once would race on ``create schema if not exists``."""
    lock_chunk(conn)
    conn.execute(sql.SQL("create schema if not exists {}").format(sql.Identifier(STAGING_SCHEMA)))
    now = int(time.time())
    for (name,) in conn.execute("select tablename from pg_tables where schemaname = %s",
                                (STAGING_SCHEMA,)).fetchall():
        created = name.split("_")[1] if name.count("_") >= 2 else ""
        if not created.isdigit() or int(created) < now - STALE_STAGING_SECONDS:
            conn.execute(sql.SQL("drop table if exists {}").format(sql.Identifier(STAGING_SCHEMA, name)))
    token = f"{now}_{uuid.uuid4().hex[:8]}"
    for kind, columns in _COLUMNS.items():
        conn.execute(sql.SQL("create unlogged table {} ({})").format(
            sql.Identifier(STAGING_SCHEMA, f"{kind}_{token}"),
            sql.SQL(", ").join(sql.SQL("{} {}").format(sql.Identifier(c), sql.SQL(_TYPES.get(c, "text")))
                               for c in columns)))
    conn.commit()
    return FieldStaging(f"{STAGING_SCHEMA}.records_{token}", f"{STAGING_SCHEMA}.sets_{token}")


def drop_staging(conn: psycopg.Connection, staging: FieldStaging) -> None:
    """Drop a job run's staging tables (in the open transaction)."""
    for table in (staging.records, staging.sets):
        conn.execute(sql.SQL("drop table if exists {}").format(_table(table)))


def _table(qualified: str) -> sql.Identifier:
    return sql.Identifier(*qualified.split("."))


def store_results(conn: psycopg.Connection, staging: FieldStaging) -> dict[str, int]:
    """Merge one chunk's staged results in the open transaction and drop its staging tables;
    returns counts by kind."""
    # Statistics for the staging tables: without them the planner guesses a few rows and picks
    # nested loops that take minutes at 20k records (measured: 3.7 min for one chunk).
    for table in (staging.records, staging.sets):
        conn.execute(sql.SQL("analyze {}").format(_table(table)))
    # A Spark task retried after its COPY committed (a lost executor) staged its rows twice.
    _run(conn, """delete from {records} a using {records} b
                  where a.ctid < b.ctid and a.namespace = b.namespace and a.event_id = b.event_id""", staging)
    _run(conn, "delete from {sets} a using {sets} b where a.ctid < b.ctid and a.fingerprint = b.fingerprint", staging)
    counts: dict[str, int] = {}
    _run(conn, """insert into lineage.datasets (namespace, dataset_type, dataset)
                    select distinct destination_namespace, destination_type, destination from {records}
                    where reason is null on conflict do nothing""", staging)
    counts["sets_added"] = int(_run(conn, "select count(*) from {sets}", staging).fetchall()[0][0])
    _run(conn, """
        insert into lineage.field_operation_sets as s (fingerprint, destination_namespace, destination_type,
            destination, operations, descriptions, described_at)
        select distinct on (f.fingerprint) f.fingerprint, f.destination_namespace, f.destination_type, f.destination,
               coalesce(n.operations, '[]'), f.descriptions::jsonb, e.event_time
        from {records} f
        join lineage.pending_events e on e.namespace = f.namespace and e.event_id = f.event_id
        left join {sets} n on n.fingerprint = f.fingerprint
        where f.reason is null
        order by f.fingerprint, e.event_time desc
        on conflict (fingerprint) do update set descriptions = excluded.descriptions,
                                                described_at = excluded.described_at
        where excluded.described_at > s.described_at""", staging)
    _run(conn, f"""update lineage.field_operation_sets s set warnings = n.warnings, derived_with = {DERIVATION:d}
                     from {{sets}} n where s.fingerprint = n.fingerprint""", staging)
    counts["paths_added"] = _run(conn, """
        insert into lineage.field_paths as f (set_fingerprint, field, path_fingerprint, path)
        select n.fingerprint, p.path->>'field', p.path->>'fingerprint', p.path
        from {sets} n cross join lateral jsonb_array_elements(n.paths) as p(path)
        on conflict (set_fingerprint, field) do update set path_fingerprint = excluded.path_fingerprint,
                                                          path = excluded.path
        where f.path_fingerprint <> excluded.path_fingerprint or f.path <> excluded.path""", staging).rowcount
    _run(conn, """
        insert into lineage.field_source_flows as f (source_namespace, source_type, source, source_field,
                                                     set_fingerprint, flow_fingerprint, flow)
        select x.flow->>'namespace', x.flow->>'type', x.flow->>'name', x.flow->>'field', n.fingerprint,
               x.flow->>'fingerprint', x.flow
        from {sets} n cross join lateral jsonb_array_elements(n.flows) as x(flow)
        on conflict (source_namespace, source, source_field, source_type, set_fingerprint)
        do update set flow_fingerprint = excluded.flow_fingerprint, flow = excluded.flow""", staging)
    _run(conn, """
        insert into lineage.field_path_sources (source_namespace, source_type, source, source_field,
                                                set_fingerprint, field)
        select distinct s.source->>'namespace', s.source->>'type', s.source->>'name', s.source->>'field',
               n.fingerprint, p.path->>'field'
        from {sets} n cross join lateral jsonb_array_elements(n.paths) as p(path)
        cross join lateral jsonb_array_elements(p.path->'sources') as s(source)
        on conflict do nothing""", staging)
    # Every source of a read is a dataset, whether or not any of its fields reaches the destination.
    _run(conn, """insert into lineage.datasets (namespace, dataset_type, dataset)
                    select distinct x.flow->>'namespace', x.flow->>'type', x.flow->>'name'
                    from {sets} n cross join lateral jsonb_array_elements(n.flows) as x(flow)
                    where x.flow->>'type' in ('dataset', 'stream')
                    on conflict do nothing""", staging)
    entity_keys.fill_missing(conn)  # keys of the datasets just inserted
    counts["runs_recorded"] = _run(conn, """
        insert into lineage.field_lineage_runs (dataset_key, run_key, set_fingerprint, recorded_at)
        select d.dataset_key, r.run_key, f.fingerprint, min(e.event_time)
        from {records} f
        join lineage.pending_events e on e.namespace = f.namespace and e.event_id = f.event_id
        join lineage.programs p on p.namespace = e.namespace and p.application = e.application
                               and p.program_type = e.program_type and p.program = e.program
        join lineage.runs r on r.namespace = e.namespace and r.program_key = p.program_key and r.run_id = e.run_id
        join lineage.datasets d on d.namespace = f.destination_namespace and d.dataset_type = f.destination_type
                               and d.dataset = f.destination
        where f.reason is null
        group by d.dataset_key, r.run_key, f.fingerprint
        on conflict do nothing""", staging).rowcount
    counts["quarantined"] = _run(conn, """
        insert into lineage.quarantine (batch_id, source_file, line_number, reason, raw_text)
        select 'field-lineage', 'pending_events/' || f.namespace || '/' || f.event_id, 1, f.reason, e.payload::text
        from {records} f
        join lineage.pending_events e on e.namespace = f.namespace and e.event_id = f.event_id
        where f.reason is not null
        on conflict do nothing""", staging).rowcount
    _run(conn, """update lineage.pending_events e set processed_at = now() from {records} f
                    where e.namespace = f.namespace and e.event_id = f.event_id""", staging)
    drop_staging(conn, staging)
    return counts


def _run(conn: psycopg.Connection, statement: str, staging: FieldStaging) -> psycopg.Cursor[Any]:
    """Execute ``statement`` with ``{records}`` and ``{sets}`` naming the staging tables."""
    return conn.execute(sql.SQL(statement).format(records=_table(staging.records),
                                                  sets=_table(staging.sets)))


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
    programs (CDAP's program id parts and ``lastExecutedTimeInSeconds``, the latest run time). A
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
                   'program', p.program, 'lastExecutedTimeInSeconds', extract(epoch from x.last_run)::bigint)
               ) as programs
        from (select {cols}, program_key, max(run_at) as last_run from per_run group by {cols}, program_key) x
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

    def paths(self, keys: Sequence[FieldKey]) -> list[dict[str, Any]]:
        """Per field in ``keys`` and operation set, the set's path with every run that recorded
        it in the window (the core merges the sets that share a path)."""
        with self.conn.cursor(row_factory=dict_row) as cursor:
            set_json_loads(orjson.loads, cursor)  # path documents are large: parse them fast
            rows = cursor.execute(_PATHS, self._arrays(keys)).fetchall()
        # Every field of a set has the set's runs: one list shared, not one copy per field.
        shared = {(row["dataset_key"], row["set_fingerprint"]): (row["runs"], row["programs"])
                  for row in rows if row["runs"] is not None}
        set_operations = {row["set_fingerprint"]: {op["id"]: op for op in row["set_operations"]}
                          for row in rows if row["set_operations"] is not None}
        unmatched = []
        for row in rows:
            set_fingerprint = row.pop("set_fingerprint")
            row["runs"], row["programs"] = shared[(row.pop("dataset_key"), set_fingerprint)]
            path, ids = row["path"], row.pop("operation_ids")
            del row["set_operations"]
            known = set_operations[set_fingerprint]
            if all(op_id in known for op_id in ids):
                path["operations"] = path_operations(known, ids, path["field"])
                if path_fingerprint(path["field"], path_origins(path), path["operations"]) == row["path_fingerprint"]:
                    continue
            unmatched.append((row, set_fingerprint))  # a set stored by an older derivation: read the path
        for row, set_fingerprint in unmatched:
            stored = self.conn.execute(_PATH_OPERATIONS, (set_fingerprint, row["field"])).fetchone()
            row["path"]["operations"] = orjson.loads(stored[0]) if stored else []
        return rows

    def flows(self, key: FieldKey) -> list[dict[str, Any]]:
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


def flows(conn: psycopg.Connection, key: FieldKey, start: datetime, end: datetime) -> list[dict[str, Any]]:
    """Per operation set with a run in [start, end) that reads the source field ``key``: its flow
    (``SourceFieldFlow.to_dict()``), the set's destination and descriptions, runs and programs."""
    with conn.cursor(row_factory=dict_row) as cursor:
        set_json_loads(orjson.loads, cursor)
        return cursor.execute(_FLOWS, {"namespace": key.namespace, "dataset": key.dataset, "field": key.field,
                                       "start": start, "end": end}).fetchall()


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
        where starts_with(x.source_field, %(prefix)s)
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
                   prefix: str = "") -> dict[tuple[str, str], dict[str, bool]]:
    """(namespace, dataset) -> each field ever recorded with lineage (written to it, or read from
    it and written or dropped) -> whether it has lineage in [start, end); one query for all."""
    found: dict[tuple[str, str], dict[str, bool]] = {key: {} for key in datasets}
    rows = conn.execute(_LINEAGE_FIELDS, {
        "namespaces": [ns for ns, _ in datasets], "datasets": [ds for _, ds in datasets], "prefix": prefix,
        "start": start, "end": end}).fetchall()
    for namespace, dataset, field, has_lineage in rows:
        found.setdefault((namespace, dataset), {})[field] = has_lineage
    return found

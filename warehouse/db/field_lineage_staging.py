"""What the field lineage job stores (one transaction per chunk of records): operation sets by
fingerprint (with their warnings), their per-field paths, the source field -> destination
field index for impact, each source field's flow (where it goes: written, dropped, nowhere), its
composed column lineage by kind (``lineage.field_edges``, what tag propagation walks),
and one row per run and destination; and the pending records it takes, chunk by chunk. The
API's queries over these tables are ``warehouse.db.field_lineage_store``."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql
from psycopg.types.json import Jsonb

from lineage.errors import InvalidFieldOperationsError
from lineage.model.column_lineage import field_edges
from lineage.model.field_paths import DERIVATION, normalize, stored_record
from warehouse.db import entity_keys

STAGING_SCHEMA = "lineage_field_staging"  # not the compaction's: it drops its own schema whole
STALE_STAGING_SECONDS = 86_400  # a staging table this old was left by a job that crashed
_PENDING = "kind = 'field_operations' and processed_at is null"
_KEY = "(event_time, namespace, event_id)"  # the order records are taken in, chunk by chunk
_COLUMNS = {
    "records": ("namespace", "event_id", "fingerprint", "destination_namespace", "destination_type", "destination",
                "descriptions", "reason"),
    "sets": ("fingerprint", "operations", "paths", "flows", "warnings", "edges"),
}
_TYPES = {"operations": "jsonb", "paths": "jsonb", "flows": "jsonb", "warnings": "jsonb", "edges": "jsonb"}


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


def count_pending(conn: psycopg.Connection, upto: int) -> int:
    """How many compacted field operation records are not processed yet, counted up to ``upto``."""
    row = conn.execute(f"select count(*) from (select 1 from lineage.pending_events where {_PENDING} limit %s) p",
                       (upto,)).fetchone()
    return int(row[0]) if row else 0


# The key of a path or flow document: the SHA-256 of its jsonb text, which is canonical (equal
# documents, equal texts), as migration 0044 computed it for the documents stored before.
_DOCUMENT_KEY = "sha256(convert_to(({document})::text, 'UTF8'))"


@dataclass(frozen=True)
class _Documents:
    """One kind of field lineage document (migration 0044): its table, the rows naming it, and
    the column and staged array holding it."""

    kind: str
    table: str
    rows: str
    column: str
    staged: str


DOCUMENTS = (_Documents("path", "field_path_documents", "field_path_rows", "path", "paths"),
             _Documents("flow", "field_flow_documents", "field_source_flow_rows", "flow", "flows"))


def named_documents(sets: str) -> str:
    """A query of the documents (``kind``, ``document_key``) the rows of the operation sets that
    the query ``sets`` selects (their fingerprints) name."""
    return "\nunion\n".join(f"select '{documents.kind}' as kind, document_key from lineage.{documents.rows} "
                            f"where set_fingerprint in ({sets})" for documents in DOCUMENTS)


def remove_unnamed_documents(conn: psycopg.Connection, candidates: str) -> dict[str, int]:
    """Remove the documents listed in the temporary table ``candidates`` (``kind``,
    ``document_key``) that no row names any more; the rows removed per document table. Under the
    field lineage lock: a job re-using such a document commits first, new ones wait."""
    removed = {}
    for documents in DOCUMENTS:
        removed[documents.table] = conn.execute(sql.SQL(
            """delete from lineage.{table} d using pg_temp.{candidates} c
               where c.kind = %s and d.document_key = c.document_key
                 and not exists (select from lineage.{rows} r where r.document_key = d.document_key)""").format(
            table=sql.Identifier(documents.table), candidates=sql.Identifier(candidates),
            rows=sql.Identifier(documents.rows)), (documents.kind,)).rowcount
    return removed

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
    # Each distinct path and flow document once (migration 0044), keyed by the SHA-256 of its text;
    # the rows name them. The documents a set derived again named before: removed below once no
    # row names them (a new derivation's paths replace its older ones).
    _run(conn, "drop table if exists pg_temp.replaced_documents", staging)
    _run(conn, "create temp table replaced_documents on commit drop as "
         + named_documents("select fingerprint from {sets}"), staging)
    # a set derived again: its rows the new derivation does not give (a field, a source field it no
    # longer has) go, as its edges and sources do below
    _run(conn, """
        delete from lineage.field_path_rows r using {sets} n
        where r.set_fingerprint = n.fingerprint
          and not exists (select from jsonb_array_elements(n.paths) as p(path) where p.path->>'field' = r.field)""",
         staging)
    _run(conn, """
        delete from lineage.field_source_flow_rows r using {sets} n
        where r.set_fingerprint = n.fingerprint
          and not exists (select from jsonb_array_elements(n.flows) as x(flow)
                          where x.flow->>'namespace' = r.source_namespace and x.flow->>'type' = r.source_type
                            and x.flow->>'name' = r.source and x.flow->>'field' = r.source_field)""", staging)
    for documents in DOCUMENTS:
        _run(conn, f"""
            insert into lineage.{documents.table} (document_key, {documents.column})
            select distinct on (1) {_DOCUMENT_KEY.format(document="d.document")}, d.document
            from {{sets}} n cross join lateral jsonb_array_elements(n.{documents.staged}) as d(document)
            order by 1
            on conflict do nothing""", staging)
    counts["paths_added"] = _run(conn, f"""
        insert into lineage.field_path_rows as f (set_fingerprint, field, path_fingerprint, document_key)
        select n.fingerprint, p.path->>'field', p.path->>'fingerprint', {_DOCUMENT_KEY.format(document="p.path")}
        from {{sets}} n cross join lateral jsonb_array_elements(n.paths) as p(path)
        on conflict (set_fingerprint, field) do update set path_fingerprint = excluded.path_fingerprint,
                                                          document_key = excluded.document_key
        where f.document_key <> excluded.document_key""", staging).rowcount
    _run(conn, f"""
        insert into lineage.field_source_flow_rows as f (source_namespace, source_type, source, source_field,
                                                         set_fingerprint, flow_fingerprint, document_key)
        select x.flow->>'namespace', x.flow->>'type', x.flow->>'name', x.flow->>'field', n.fingerprint,
               x.flow->>'fingerprint', {_DOCUMENT_KEY.format(document="x.flow")}
        from {{sets}} n cross join lateral jsonb_array_elements(n.flows) as x(flow)
        on conflict (source_namespace, source, source_field, source_type, set_fingerprint)
        do update set flow_fingerprint = excluded.flow_fingerprint, document_key = excluded.document_key""",
         staging)
    remove_unnamed_documents(conn, "replaced_documents")
    _run(conn, "drop table pg_temp.replaced_documents", staging)
    _run(conn, "delete from lineage.field_edges e using {sets} n where e.set_fingerprint = n.fingerprint", staging)
    _run(conn, """
        insert into lineage.field_edges (set_fingerprint, source_namespace, source_type, source, source_field, field,
                                         kind, subtype, masking, operations, field_key, field_details, dataset_key)
        select n.fingerprint, x.edge->>'namespace', x.edge->>'type', x.edge->>'name', x.edge->>'field',
               x.edge->>'to', x.edge->>'kind', x.edge->>'subtype', (x.edge->>'masking')::boolean,
               array(select jsonb_array_elements_text(x.edge->'operations')), x.edge->>'field_key',
               x.edge->'field_details', x.edge->>'dataset_key'
        from {sets} n cross join lateral jsonb_array_elements(n.edges) as x(edge)
        on conflict do nothing""", staging)
    _run(conn, "delete from lineage.field_path_sources x using {sets} n where x.set_fingerprint = n.fingerprint",
         staging)
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
                      -- of a namespace that exists (a read of one that does not is no dataset of it)
                      and exists (select from lineage.namespaces ns where ns.namespace = x.flow->>'namespace')
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


def backfill_edges(conn: psycopg.Connection, batch: int = 500) -> int:
    """Give the operation sets stored before field edges existed (derivation 2) their edges,
    from their stored operations (their records may be gone: pending records expire), and mark
    them derived by this derivation; in the open transaction. The number of sets backfilled."""
    done = 0
    while rows := conn.execute(
            """select s.fingerprint, s.destination_namespace, s.destination_type, s.destination, s.operations,
                      array(select p.field from lineage.field_paths p where p.set_fingerprint = s.fingerprint
                            order by p.field)
               from lineage.field_operation_sets s where s.derived_with = 2 order by s.fingerprint limit %s""",
            (batch,)).fetchall():
        for fingerprint, namespace, dataset_type, name, operations, destination_fields in rows:
            record = stored_record({"namespace": namespace, "type": dataset_type, "name": name}, operations)
            # a record without writes (CDAP's shape) names its destination fields itself: the set's paths do
            record["destination_fields"] = destination_fields
            try:
                edges = field_edges(normalize(record, namespace))
            except InvalidFieldOperationsError:  # stored by an older rule this one refuses: no edges
                edges = []
            with conn.cursor() as cursor:
                cursor.executemany(
                    """insert into lineage.field_edges (set_fingerprint, source_namespace, source_type, source,
                           source_field, field, kind, subtype, masking, operations, field_key, field_details,
                           dataset_key)
                       values (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) on conflict do nothing""",
                    [(fingerprint, edge["namespace"], edge["type"], edge["name"], edge["field"], edge["to"],
                      edge["kind"], edge["subtype"], edge["masking"], edge["operations"], edge["field_key"],
                      Jsonb(edge["field_details"]), edge["dataset_key"]) for edge in edges])
            conn.execute("update lineage.field_operation_sets set derived_with = %s where fingerprint = %s",
                         (DERIVATION, fingerprint))
        done += len(rows)
    return done

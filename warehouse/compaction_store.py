"""The warehouse side of a compaction: staging tables, the one-transaction merge, the ledger.

A compaction holds an advisory lock for its whole length, so two never interleave. Staging
tables are created before Spark copies into them and dropped by the merge's transaction; a
crash before the merge leaves only staging tables, which the next compaction drops.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg import sql

from lineage.errors import LineageError

log = logging.getLogger(__name__)
STAGING_SCHEMA = "lineage_staging"
_COMPACTION_LOCK = 7_265_402


class CompactionBusyError(LineageError):
    """Another compaction holds the warehouse lock."""


@dataclass(frozen=True)
class StagingTables:
    lines: str
    files: str


@dataclass(frozen=True)
class CompactionSummary:
    """What one compaction did; the DAG logs it and passes it through XCom."""

    batch_id: str
    files: int
    events_read: int
    events_compacted: int
    duplicates: int
    quarantined: int
    runs_touched: int
    accesses_added: int
    pending_kept: int

    def as_dict(self) -> dict[str, int | str]:
        return asdict(self)

    def render(self) -> str:
        return (
            f"compaction {self.batch_id}: {self.files} new files, {self.events_read} events read, "
            f"{self.events_compacted} compacted, {self.duplicates} duplicates ignored, "
            f"{self.quarantined} quarantined; {self.runs_touched} runs updated, "
            f"{self.accesses_added} new dataset accesses, {self.pending_kept} field/metadata events kept"
        )


def acquire_lock(conn: psycopg.Connection) -> None:
    """Take the compaction lock on ``conn`` (session level) or raise CompactionBusyError."""
    got = conn.execute("select pg_try_advisory_lock(%s)", (_COMPACTION_LOCK,)).fetchone()
    if not got or not got[0]:
        raise CompactionBusyError("another compaction is running against this warehouse; try again when it ends")


def release_lock(conn: psycopg.Connection) -> None:
    conn.execute("select pg_advisory_unlock(%s)", (_COMPACTION_LOCK,))


def compacted_paths(conn: psycopg.Connection, paths: Sequence[str]) -> set[str]:
    """Which of ``paths`` the manifest already holds."""
    rows = conn.execute(
        "select file_path from lineage.compacted_files where file_path = any(%s)", (list(paths),)
    ).fetchall()
    return {row[0] for row in rows}


def prepare_staging(conn: psycopg.Connection, batch_id: str) -> StagingTables:
    """Drop leftovers of crashed compactions and create this batch's staging tables."""
    conn.execute(sql.SQL("drop schema if exists {} cascade").format(sql.Identifier(STAGING_SCHEMA)))
    conn.execute(sql.SQL("create schema {}").format(sql.Identifier(STAGING_SCHEMA)))
    suffix = "".join(ch for ch in batch_id.lower() if ch.isalnum())[:40]
    tables = StagingTables(lines=f"{STAGING_SCHEMA}.lines_{suffix}", files=f"{STAGING_SCHEMA}.files_{suffix}")
    # One row per non-blank log line: a valid event's columns (lineage.events.STAGED_COLUMNS),
    # or a rejected line's reason and raw text.
    conn.execute(
        f"""create unlogged table {tables.lines} (
              event_id text, kind text, event_time_us bigint, namespace text, application text,
              program_type text, program text, run_id text, status text, dataset_namespace text,
              dataset_type text, dataset text, access text, component text, payload text,
              source_file text, line_number bigint, reason text, raw_text text)"""  # type: ignore[arg-type]
    )
    conn.execute(f"create unlogged table {tables.files} (file_path text, size_bytes bigint)")  # type: ignore[arg-type]
    return tables


def merge_batch(
    conn: psycopg.Connection,
    tables: StagingTables,
    *,
    batch_id: str,
    dag_run_id: str | None,
    interval_end: datetime | None,
    started_at: datetime,
    events_read: int,
    event_id_retention_days: int,
) -> CompactionSummary:
    """Merge the staged batch into the warehouse in one transaction and record it.

    Rejected lines go to the quarantine; of the valid events, only the first delivery of each
    (namespace, event_id) is kept, and events whose id the ledger already holds (re-deliveries
    from earlier batches) are dropped; everything left is new and is merged by kind.
    """
    params: dict[str, Any] = {"batch": batch_id}
    events = tables.lines
    event_time = "to_timestamp(event_time_us / 1e6)"
    with conn.transaction():
        conn.execute(f"analyze {events}")  # type: ignore[arg-type]
        _timed(conn, "count lines per file", f"""
            create temp table file_lines on commit drop as
            select source_file, count(*) as lines from {events} group by source_file""")
        quarantined = _timed(conn, "quarantine", f"""
            insert into lineage.quarantine (batch_id, source_file, line_number, reason, raw_text)
            select %(batch)s, source_file, line_number, reason, raw_text from {events} where reason is not null
            on conflict (source_file, line_number) do nothing""", params)
        _timed(conn, "set quarantined lines aside", f"delete from {events} where reason is not null")
        repeated = conn.execute(
            f"select exists (select from {events} group by namespace, event_id having count(*) > 1)"  # type: ignore[arg-type]
        ).fetchone()
        if repeated and repeated[0]:  # rare: skip the sort when every id is delivered once
            _timed(conn, "drop repeated deliveries within the batch", f"""
                delete from {events} s using (
                    select ctid, row_number() over (partition by namespace, event_id
                                                    order by source_file, line_number) as delivery
                    from {events}) repeated
                where s.ctid = repeated.ctid and repeated.delivery > 1""")
        _timed(conn, "drop events compacted by earlier batches",
               f"""delete from {events} s using lineage.event_ids e
                   where e.namespace = s.namespace and e.event_id = s.event_id""")
        compacted = _timed(conn, "record event ids",
                           f"""insert into lineage.event_ids (namespace, event_id, event_time, batch_id)
                               select namespace, event_id, {event_time}, %(batch)s from {events}""", params)
        _timed(conn, "namespaces",
               f"""insert into lineage.namespaces (namespace)
                   select namespace from {events}
                   union select dataset_namespace from {events} where dataset_namespace is not null
                   on conflict do nothing""")
        _timed(conn, "programs", f"""
            insert into lineage.programs (namespace, application, program_type, program)
            select distinct namespace, application, program_type, program from {events}
            on conflict do nothing""")
        _timed(conn, "datasets", f"""
            insert into lineage.datasets (namespace, dataset_type, dataset)
            select distinct dataset_namespace, dataset_type, dataset from {events} where kind = 'dataset_access'
            on conflict do nothing""")
        runs_touched = _timed(conn, "runs", f"""
            insert into lineage.runs as r (namespace, program_key, run_id, started_at, stopped_at, status,
                                           first_batch_id, last_batch_id)
            select e.namespace, p.program_key, e.run_id,
                   min({event_time}) filter (where kind = 'run_start'),
                   max({event_time}) filter (where kind = 'run_end'),
                   coalesce((array_agg(status order by event_time_us desc) filter (where kind = 'run_end'))[1],
                            'running'),
                   %(batch)s, %(batch)s
            from {events} e
            join lineage.programs p using (namespace, application, program_type, program)
            group by e.namespace, p.program_key, e.run_id
            on conflict (namespace, program_key, run_id) do update set
                started_at = least(r.started_at, excluded.started_at),
                stopped_at = greatest(r.stopped_at, excluded.stopped_at),
                status = case when excluded.stopped_at is not null
                               and (r.stopped_at is null or excluded.stopped_at >= r.stopped_at)
                              then excluded.status else r.status end,
                last_batch_id = excluded.last_batch_id""", params)
        accesses_added = _timed(conn, "dataset accesses", f"""
            insert into lineage.dataset_accesses as a (namespace, dataset_key, run_key, access, component,
                                                       accessed_at, batch_id)
            select e.dataset_namespace, d.dataset_key, r.run_key, e.access, coalesce(e.component, ''),
                   min({event_time}), %(batch)s
            from {events} e
            join lineage.datasets d
              on d.namespace = e.dataset_namespace and d.dataset_type = e.dataset_type and d.dataset = e.dataset
            join lineage.programs p
              on p.namespace = e.namespace and p.application = e.application
             and p.program_type = e.program_type and p.program = e.program
            join lineage.runs r
              on r.namespace = e.namespace and r.program_key = p.program_key and r.run_id = e.run_id
            where e.kind = 'dataset_access'
            group by e.dataset_namespace, d.dataset_key, r.run_key, e.access, coalesce(e.component, '')
            on conflict (namespace, dataset_key, run_key, access, component)
            do update set accessed_at = least(a.accessed_at, excluded.accessed_at)
            where excluded.accessed_at < a.accessed_at""", params)
        pending_kept = _timed(conn, "field operation and metadata events", f"""
            insert into lineage.pending_events (namespace, event_id, kind, event_time, application,
                program_type, program, run_id, payload, batch_id)
            select namespace, event_id, kind, {event_time}, application, program_type, program, run_id,
                   payload::jsonb, %(batch)s
            from {events} where kind in ('field_operations', 'metadata_change')
            on conflict do nothing""", params)
        files = _count(conn, f"select count(*) from {tables.files}")
        duplicates = events_read - quarantined - compacted
        conn.execute(
            """insert into lineage.compaction_batches (batch_id, dag_run_id, interval_end, started_at, files,
                   events_read, events_compacted, duplicates, quarantined, runs_touched, accesses_added)
               values (%(batch)s, %(dag_run)s, %(interval_end)s, %(started)s, %(files)s, %(read)s,
                       %(compacted)s, %(duplicates)s, %(quarantined)s, %(runs)s, %(accesses)s)""",
            {
                **params, "dag_run": dag_run_id, "interval_end": interval_end, "started": started_at,
                "files": files, "read": events_read, "compacted": compacted, "duplicates": duplicates,
                "quarantined": quarantined, "runs": runs_touched, "accesses": accesses_added,
            },
        )
        _timed(conn, "manifest", f"""
            insert into lineage.compacted_files (file_path, batch_id, size_bytes, lines)
            select f.file_path, %(batch)s, f.size_bytes, coalesce(counted.lines, 0)
            from {tables.files} f left join file_lines counted on counted.source_file = f.file_path""", params)
        _timed(conn, "expire old event ids",
               "delete from lineage.event_ids where event_time < now() - make_interval(days => %(days)s)",
               {"days": event_id_retention_days})
        conn.execute(sql.SQL("drop schema {} cascade").format(sql.Identifier(STAGING_SCHEMA)))
    return CompactionSummary(
        batch_id=batch_id,
        files=files,
        events_read=events_read,
        events_compacted=compacted,
        duplicates=duplicates,
        quarantined=quarantined,
        runs_touched=runs_touched,
        accesses_added=accesses_added,
        pending_kept=pending_kept,
    )


def _timed(conn: psycopg.Connection, label: str, query: str, params: dict[str, Any] | None = None) -> int:
    """Execute one merge statement, log its duration, return its row count."""
    started = time.perf_counter()
    rowcount = conn.execute(query, params).rowcount  # type: ignore[arg-type]
    log.info("merge: %s: %d rows in %.1fs", label, rowcount, time.perf_counter() - started)
    return rowcount


def _count(conn: psycopg.Connection, query: str) -> int:
    row = conn.execute(query).fetchone()  # type: ignore[arg-type]
    return int(row[0]) if row else 0

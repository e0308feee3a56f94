"""The warehouse side of a compaction: staging tables, the one-transaction merge, the ledger.

A ``BatchMerge`` opens the batch's one transaction first and takes the compaction lock inside
it (a transaction-level advisory lock), so two compactions never interleave, and the lock is
released by the commit, the rollback or the end of a crashed driver's connection. Holding it in
a transaction rather than a session keeps it correct behind a pooler in transaction mode
(PgBouncer), where a session's statements may each run on another server connection. Spark
COPYs the parsed lines of each chunk of files into its own staging table; the ``BatchMerge``
merges each chunk as soon as it is staged (while Spark stages the next), then records the batch
and commits once. A crash anywhere rolls the whole batch back; leftover staging tables are
dropped by the next compaction.
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

from lineage.errors import CompactionBusyError
from lineage.failpoints import failpoint
from lineage.model.events import PARSED_COLUMNS, RUNNING
from warehouse.db import entity_keys

log = logging.getLogger(__name__)
STAGING_SCHEMA = "lineage_staging"
_COMPACTION_LOCK = 7_265_402
_PARTS_LOCK = 7_265_403  # kept OpenLineage events' parts: compactions shared, their removal alone


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
    late_files: int = 0  # files older than the run's own lookback window (late, or left by a pause)
    # Whether the listing covered the hour partitions older than the lookback (on a local or HDFS root
    # every scheduled run; on an object store a sweep or ``--late``), so no late file was left behind.
    late_checked: bool = True
    # processed field operation and metadata records past LINEAGE_PENDING_RETENTION_DAYS, deleted
    pending_expired: int = 0

    def as_dict(self) -> dict[str, int | str]:
        return asdict(self)

    def render(self) -> str:
        late = (f"{self.late_files} late files taken (hour partitions older than the lookback)" if self.late_checked
                else f"{self.late_files} late files; hour partitions older than the lookback not listed this run "
                     "(the scheduled compaction lists them; `lineage compact --late` now)")
        return (
            f"compaction {self.batch_id}: {self.files} new files, {self.events_read} events read, "
            f"{self.events_compacted} compacted, {self.duplicates} duplicates ignored, "
            f"{self.quarantined} quarantined; {self.runs_touched} runs updated, "
            f"{self.accesses_added} new dataset accesses, {self.pending_kept} field/metadata events kept"
            f"{f' ({self.pending_expired} processed ones expired)' if self.pending_expired else ''}; {late}"
        )


def take_lock(conn: psycopg.Connection) -> None:
    """Take the compaction lock for ``conn``'s open transaction or raise CompactionBusyError;
    and the kept events' parts lock, shared (``lock_kept_event_parts``)."""
    got = conn.execute("select pg_try_advisory_xact_lock(%s)", (_COMPACTION_LOCK,)).fetchone()
    if not got or not got[0]:
        raise CompactionBusyError("another compaction is running against this warehouse; try again when it ends")
    conn.execute("select pg_advisory_xact_lock_shared(%s)", (_PARTS_LOCK,))


def lock_kept_event_parts(conn: psycopg.Connection) -> None:
    """Wait until no compaction is running, and keep new ones waiting until ``conn``'s open
    transaction ends: a compaction re-uses the parts of kept OpenLineage events (migration 0041)
    before it commits the events naming them, so what removes parts no event names must not
    run meanwhile (it would not see those events)."""
    conn.execute("select pg_advisory_xact_lock(%s)", (_PARTS_LOCK,))


def listed_until(conn: psycopg.Connection) -> datetime | None:
    """The latest interval end a compaction listed up to (None before the first)."""
    row = conn.execute("select listed_until from lineage.compaction_coverage").fetchone()
    return row[0] if row else None


def record_coverage(conn: psycopg.Connection, interval_end: datetime) -> None:
    """Remember that the log was listed up to ``interval_end`` (never moves back)."""
    conn.execute(
        """insert into lineage.compaction_coverage (listed_until) values (%s)
           on conflict (singleton) do update
           set listed_until = greatest(compaction_coverage.listed_until, excluded.listed_until), updated_at = now()""",
        (interval_end,))


_PATHS_PER_QUERY = 5_000


def compacted_paths(conn: psycopg.Connection, paths: Sequence[str]) -> set[str]:
    """Which of ``paths`` the manifest already holds (asked 5,000 paths at a time)."""
    found: set[str] = set()
    for start in range(0, len(paths), _PATHS_PER_QUERY):
        rows = conn.execute("select file_path from lineage.compacted_files where file_path = any(%s)",
                            (list(paths[start:start + _PATHS_PER_QUERY]),)).fetchall()
        found.update(row[0] for row in rows)
    return found


def settled_partitions(conn: psycopg.Connection, paths: Sequence[str]) -> dict[str, int]:
    """The folder time each of ``paths`` (hour partitions) had when it was last found fully
    compacted (migration 0019); partitions never settled are absent."""
    found: dict[str, int] = {}
    for start in range(0, len(paths), _PATHS_PER_QUERY):
        rows = conn.execute("select partition_path, modified_ms from lineage.settled_partitions "
                            "where partition_path = any(%s)", (list(paths[start:start + _PATHS_PER_QUERY]),))
        found.update(rows.fetchall())
    return found


def record_settled(conn: psycopg.Connection, settled: Sequence[tuple[str, int, int]], batch_id: str | None) -> None:
    """Record hour partitions (path, folder time in ms, files) as holding only compacted files."""
    if not settled:
        return
    conn.execute(
        """insert into lineage.settled_partitions as s (partition_path, modified_ms, files, batch_id)
           select path, modified, files, %(batch)s
           from unnest(%(paths)s::text[], %(times)s::bigint[], %(files)s::int[]) as p(path, modified, files)
           on conflict (partition_path) do update set
               modified_ms = excluded.modified_ms, files = excluded.files, batch_id = excluded.batch_id,
               settled_at = now()""",
        {"batch": batch_id, "paths": [item[0] for item in settled], "times": [item[1] for item in settled],
         "files": [item[2] for item in settled]})


def prepare_staging(conn: psycopg.Connection) -> None:
    """Drop the staging tables of crashed compactions; create an empty staging schema."""
    conn.execute(sql.SQL("drop schema if exists {} cascade").format(sql.Identifier(STAGING_SCHEMA)))
    conn.execute(sql.SQL("create schema {}").format(sql.Identifier(STAGING_SCHEMA)))


def create_lines_table(conn: psycopg.Connection, batch_id: str, chunk: int) -> str:
    """A staging table for one chunk's parsed lines, its columns those of
    ``lineage.model.events.PARSED_COLUMNS``: a valid event's staged columns, or a rejected line's
    reason and raw text. Its texts are compressed with LZ4 where the server has it
    (``lz4_available``): a staged payload is written once and read once, and PostgreSQL's default
    compression (pglz) cost 0.8-0.9 s of the server's CPU per COPY of a 2,000-event OpenLineage
    file, LZ4 0.5 s, the table 7% larger."""
    suffix = "".join(ch for ch in batch_id.lower() if ch.isalnum())[:40]
    table = f"lines_{suffix}_{chunk}"
    compressed = " compression lz4" if lz4_available(conn) else ""
    columns = sql.SQL(", ").join(
        sql.SQL("{} {}").format(sql.Identifier(name), sql.SQL(sql_type + (compressed if sql_type == "text" else "")))
        for name, sql_type in PARSED_COLUMNS.items())
    conn.execute(sql.SQL("create unlogged table {} ({})").format(sql.Identifier(STAGING_SCHEMA, table), columns))
    return f"{STAGING_SCHEMA}.{table}"


def lz4_available(conn: psycopg.Connection) -> bool:
    """Whether the server compresses values with LZ4 (PostgreSQL 14 and later built with it, as
    Debian's, the images' and the managed services' are); else its default, pglz."""
    found = conn.execute("select 'lz4' = any(enumvals) from pg_settings "
                         "where name = 'default_toast_compression'").fetchone()
    return bool(found and found[0])


def drop_lines_table(conn: psycopg.Connection, table: str) -> None:
    """Drop a staging table that will not be merged (its chunk could not be read)."""
    conn.execute(sql.SQL("drop table if exists {}").format(sql.Identifier(*table.split("."))))


# exact to the microsecond in any year: to_timestamp takes a double, and so does an interval times a
# number, whose precision is coarser than half a microsecond for some years (1902-1927, before 1870,
# and past 2^53 microseconds from 1970): whole seconds and the microseconds left, each exact
_EVENT_TIME = ("(timestamptz 'epoch' + (event_time_us / 1000000) * interval '1 second'"
               " + mod(event_time_us, 1000000) * interval '1 microsecond')")
_EVENT_KEY = "md5(namespace || '/' || event_id)::uuid"  # the ledger's key; see migration 0001
_LINE_KEY = "md5(namespace || '/' || line_id)::uuid"  # an OpenLineage line's (its envelope's id)


@dataclass(frozen=True)
class MergeStep:
    """One named statement of a chunk's merge. ``statement`` reads the chunk's staging table as
    ``{events}`` and the batch id as ``%(batch)s``; its row count (``counted``: the count it
    answers) is added to the summary counter ``counts`` when given. ``only_if`` is a query that
    must answer true for the step to run; ``mode`` limits it to one namespace policy
    ("auto_create" or "strict"); ``kinds`` skips it for a chunk holding no event of those kinds
    (a join over the whole chunk that finds nothing still costs seconds on a large chunk)."""

    label: str
    statement: str
    counts: str | None = None
    counted: bool = False  # the statement answers its count itself (one row), not its row count
    only_if: str | None = None
    mode: str | None = None
    kinds: tuple[str, ...] | None = None


# The dataset and the run row of a staged event (after the datasets and runs steps).
_EVENT_DATASET = """join lineage.datasets d
          on d.namespace = e.dataset_namespace and d.dataset_type = e.dataset_type and d.dataset = e.dataset"""
_EVENT_PROGRAM = """join lineage.programs p
          on p.namespace = e.namespace and p.application = e.application
         and p.program_type = e.program_type and p.program = e.program"""
_EVENT_RUN = _EVENT_PROGRAM + """
        join lineage.runs r
          on r.namespace = e.namespace and r.program_key = p.program_key and r.run_id = e.run_id"""

# A program's declaration (migration 0045): its declared accesses, and the JobEvent's run_facets
# marked as one (a declaration of no dataset too).
_DECLARATION_EVENT = """e.run_id is null and (e.kind = 'dataset_access'
                                        or e.kind = 'run_facets' and (e.payload::jsonb->>'declaration')::boolean)"""

_UNKNOWN_NAMESPACE = """(not exists (select from lineage.namespaces ns where ns.namespace = e.namespace)
    or e.dataset_namespace is not null
       and not exists (select from lineage.namespaces ns where ns.namespace = e.dataset_namespace))"""

# The merge of one staged chunk, in order. Rejected lines go to the quarantine; of the valid
# events, only the first delivery of each (namespace, event_id) is kept (chunks arrive in file
# order), and events whose id the ledger already holds are dropped; events of unknown
# namespaces are quarantined (or their namespaces created); the rest are merged by kind.
MERGE_STEPS: tuple[MergeStep, ...] = (
    MergeStep("count lines per file",
              "insert into file_lines select source_file, count(*) from {events} group by source_file"),
    MergeStep("quarantine", """
        insert into lineage.quarantine (batch_id, source_file, line_number, reason, raw_text)
        select %(batch)s, source_file, line_number, reason, raw_text from {events} where reason is not null
        on conflict (source_file, line_number) do nothing""", counts="quarantined"),
    MergeStep("set quarantined lines aside", "delete from {events} where reason is not null"),
    # rare: the sort runs only when some id is delivered twice within the chunk
    MergeStep("drop repeated deliveries within the chunk", """
        delete from {events} s using (
            select ctid, row_number() over (partition by namespace, event_id
                                            order by source_file, line_number) as delivery
            from {events}) repeated
        where s.ctid = repeated.ctid and repeated.delivery > 1""", counts="duplicates",
              only_if="select exists (select from {events} group by namespace, event_id having count(*) > 1)"),
    MergeStep("drop events already compacted",
              f"delete from {{events}} s using lineage.event_ids e where e.event_key = {_EVENT_KEY}",
              counts="duplicates"),
    MergeStep("drop OpenLineage lines already compacted",
              f"delete from {{events}} s using lineage.event_ids e where e.event_key = {_LINE_KEY}",
              counts="duplicates", only_if="select exists (select from {events} where line_id is not null)"),
    # A line some of whose events were set aside records its other events' ids, not its own, which
    # is its kept event's (below): that event, sent again, is known by the kept events themselves.
    MergeStep("drop OpenLineage events already kept",
              "delete from {events} s using lineage.openlineage_events o "
              "where s.kind = 'openlineage' and o.event_key = md5(s.event_id)::uuid",
              counts="duplicates", kinds=("openlineage",)),
    MergeStep("namespaces", """
        insert into lineage.namespaces (namespace)
        select namespace from {events}
        union select dataset_namespace from {events} where dataset_namespace is not null
        on conflict do nothing""", mode="auto_create"),
    MergeStep("quarantine events of unknown namespaces", """
        insert into lineage.quarantine (batch_id, source_file, line_number, reason, raw_text)
        select %(batch)s, source_file, line_number,
               format('namespace %%L does not exist (create it with PUT /v3/namespaces/%%s, or set '
                      'LINEAGE_AUTO_CREATE_NAMESPACES=true)', missing, missing),
               jsonb_strip_nulls(to_jsonb(e) - 'reason' - 'raw_text' - 'source_file' - 'line_number')::text
        from {events} e
        cross join lateral (
            select n from unnest(array[e.namespace, e.dataset_namespace]) as n
            where n is not null and not exists (select from lineage.namespaces ns where ns.namespace = n)
            limit 1) as m(missing)
        on conflict (source_file, line_number) do nothing""", counts="quarantined", mode="strict"),
    MergeStep("set events of unknown namespaces aside", f"delete from {{events}} e where {_UNKNOWN_NAMESPACE}",
              mode="strict"),
    # The ledger holds an event's id, or for the events an OpenLineage line stands for, the line's
    # id once (an event of 7 kinds on average: 7x fewer keys). A line some of whose events were set
    # aside above (quarantined: its row is in the quarantine) records the ids of the events kept
    # instead (its own kept event aside: that id is the line's), so a replay of the line is taken
    # and merges only what was set aside (and the kept event again, stored once). Counted: the
    # events compacted.
    MergeStep("record event ids", f"""
        with partial_lines as materialized (
            select distinct e.source_file, e.line_number from {{events}} e
            where e.line_id is not null
              and exists (select from lineage.quarantine q
                          where q.source_file = e.source_file and q.line_number = e.line_number)),
        recorded as (
            insert into lineage.event_ids (event_key, event_time)
            select {_EVENT_KEY}, {_EVENT_TIME} from {{events}} e
            where e.line_id is null
               or e.event_id <> e.line_id and (e.source_file, e.line_number) in (table partial_lines)
            union all
            select {_LINE_KEY}, min({_EVENT_TIME}) from {{events}} e
            where e.line_id is not null and (e.source_file, e.line_number) not in (table partial_lines)
            group by namespace, line_id
            on conflict (event_key) do nothing)
        select count(*) from {{events}}""", counts="compacted", counted=True),
    MergeStep("programs", """
        insert into lineage.programs (namespace, application, program_type, program)
        select distinct namespace, application, program_type, program from {events}
        where application is not null  -- a dataset declared without a run names no program
        on conflict do nothing"""),
    MergeStep("datasets", """
        insert into lineage.datasets (namespace, dataset_type, dataset)
        select distinct dataset_namespace, dataset_type, dataset from {events}
        where kind in ('dataset_access', 'dataset_facets')
        on conflict do nothing"""),
    MergeStep("runs", f"""
        insert into lineage.runs as r (namespace, program_key, run_id, started_at, stopped_at, first_event_at,
                                       status, first_batch_id, last_batch_id)
        select e.namespace, p.program_key, e.run_id,
               min({_EVENT_TIME}) filter (where kind = 'run_start'),
               max({_EVENT_TIME}) filter (where kind = 'run_end'),
               min({_EVENT_TIME}),
               coalesce((array_agg(status order by event_time_us desc) filter (where kind = 'run_end'))[1],
                        '{RUNNING}'),
               %(batch)s, %(batch)s
        from {{events}} e
        join lineage.programs p using (namespace, application, program_type, program)
        where e.run_id is not null  -- a program's declared access is no run
        group by e.namespace, p.program_key, e.run_id
        on conflict (namespace, program_key, run_id) do update set
            started_at = least(r.started_at, excluded.started_at),
            stopped_at = greatest(r.stopped_at, excluded.stopped_at),
            first_event_at = least(r.first_event_at, excluded.first_event_at),
            status = case when excluded.stopped_at is not null
                           and (r.stopped_at is null or excluded.stopped_at >= r.stopped_at)
                          then excluded.status else r.status end,
            last_batch_id = excluded.last_batch_id""", counts="runs_touched"),
    # Fresh statistics: rows just upserted are otherwise invisible to the planner.
    MergeStep("statistics", "analyze lineage.programs, lineage.datasets, lineage.runs"),
    MergeStep("dataset accesses", f"""
        insert into lineage.dataset_accesses as a (namespace, dataset_key, run_key, access, component,
                                                   accessed_at, batch_id)
        select e.dataset_namespace, d.dataset_key, r.run_key, e.access, coalesce(e.component, ''),
               min({_EVENT_TIME}), %(batch)s
        from {{events}} e {_EVENT_DATASET} {_EVENT_RUN}
        where e.kind = 'dataset_access'
        group by e.dataset_namespace, d.dataset_key, r.run_key, e.access, coalesce(e.component, '')
        on conflict (namespace, dataset_key, run_key, access, component)
        do update set accessed_at = least(a.accessed_at, excluded.accessed_at)
        where excluded.accessed_at < a.accessed_at""", counts="accesses_added",
              kinds=("dataset_access",)),
    # Declared lineage (migration 0039): a program's accesses without a run. A program's declaration
    # is its latest (migration 0045): the accesses of its latest declaration in the chunk are kept
    # (declarations older than the latest one already stored add nothing), each with the first
    # declaration holding it since the last one that did not (first_declared_at): a declaration of
    # the chunk between that left it out starts it again, and with none, the kept access keeps its
    # own. Then what the program's latest declaration does not hold goes (next step).
    MergeStep("declared accesses", f"""
        with declarations as (
            select p.program_key, {_EVENT_TIME} as t, d.dataset_key, e.access
            from {{events}} e
            {_EVENT_PROGRAM}
            left join lineage.datasets d
              on e.kind = 'dataset_access' and d.namespace = e.dataset_namespace
             and d.dataset_type = e.dataset_type and d.dataset = e.dataset
            where {_DECLARATION_EVENT}
        ), standing as (  -- not older than the program's latest declaration stored
            select c.* from declarations c left join lineage.program_declarations s using (program_key)
            where s.declared_at is null or c.t >= s.declared_at
        ), times as (
            select distinct program_key, t from standing
        ), latest as (
            select program_key, max(t) as latest from times group by program_key
        ), held as (  -- what the latest declaration holds, and the access kept from before, if any
            select distinct s.program_key, s.dataset_key, s.access, l.latest,
                   kept.first_declared_at as kept_first, kept.declared_at as kept_at
            from standing s join latest l on l.program_key = s.program_key and l.latest = s.t
            left join lineage.declared_accesses kept
              on kept.program_key = s.program_key and kept.dataset_key = s.dataset_key and kept.access = s.access
            where s.dataset_key is not null
        ), gaps as (  -- the last declaration before the latest that left it out (the kept one's moment held it)
            select h.program_key, h.dataset_key, h.access, max(x.t) as gap
            from held h join times x on x.program_key = h.program_key and x.t < h.latest
            where x.t is distinct from h.kept_at
              and not exists (select from standing c where c.program_key = h.program_key and c.t = x.t
                                                       and c.dataset_key = h.dataset_key and c.access = h.access)
            group by h.program_key, h.dataset_key, h.access
        ), starts as (  -- the first declaration after that gap (every one since holds it)
            select h.program_key, h.dataset_key, h.access, h.latest, h.kept_first, g.gap, min(x.t) as since
            from held h left join gaps g using (program_key, dataset_key, access)
            join times x on x.program_key = h.program_key and (g.gap is null or x.t > g.gap)
            group by h.program_key, h.dataset_key, h.access, h.latest, h.kept_first, g.gap
        )
        insert into lineage.declared_accesses as a (program_key, dataset_key, access, first_declared_at,
                                                    declared_at, batch_id)
        select h.program_key, h.dataset_key, h.access,
               case when h.gap is null and h.kept_first is not null then h.kept_first else h.since end,
               h.latest, %(batch)s
        from starts h
        on conflict (program_key, dataset_key, access) do update set
            first_declared_at = excluded.first_declared_at,
            declared_at = greatest(a.declared_at, excluded.declared_at), batch_id = excluded.batch_id""",
              kinds=("dataset_access",)),
    # A declaration is the whole of it (migration 0045): its time is the program's latest when no
    # later one holds, be it of datasets (its accesses) or of none (a JobEvent of no dataset: its
    # run_facets marked declaration); what the program declared before its latest ends.
    MergeStep("declarations", f"""
        with declared as (
            insert into lineage.program_declarations as d (program_key, declared_at)
            select p.program_key, max({_EVENT_TIME})
            from {{events}} e
            {_EVENT_PROGRAM}
            where {_DECLARATION_EVENT}
            group by p.program_key
            on conflict (program_key) do update set declared_at = greatest(d.declared_at, excluded.declared_at)
            returning program_key, declared_at)
        delete from lineage.declared_accesses a using declared l
        where a.program_key = l.program_key and a.declared_at < l.declared_at""",
              kinds=("dataset_access", "run_facets")),
    # What runs and datasets keep beside accesses (migration 0013). In each, the latest event wins
    # (ties broken by content), so any arrival order gives the same rows.
    MergeStep("run parents", f"""
        insert into lineage.run_parents as l (run_key, relation, namespace, application, program_type, program,
                                              run_id, event_time)
        select distinct on (r.run_key, link.relation)
               r.run_key, link.relation, linked.*, {_EVENT_TIME}
        from {{events}} e {_EVENT_RUN}
        cross join lateral jsonb_each(e.payload::jsonb) as link(relation, run)
        cross join lateral jsonb_to_record(link.run)
            as linked(namespace text, application text, program_type text, program text, run_id text)
        where e.kind = 'run_parent'
        order by r.run_key, link.relation, {_EVENT_TIME} desc, row(linked.*)::text desc
        on conflict (run_key, relation) do update set
            namespace = excluded.namespace, application = excluded.application,
            program_type = excluded.program_type, program = excluded.program, run_id = excluded.run_id,
            event_time = excluded.event_time
        where (excluded.event_time, row(excluded.namespace, excluded.application, excluded.program_type,
                                        excluded.program, excluded.run_id)::text)
            > (l.event_time, row(l.namespace, l.application, l.program_type, l.program, l.run_id)::text)""",
              kinds=("run_parent",)),
    MergeStep("run facets", f"""
        insert into lineage.run_facets as f (run_key, facet_of, name, facet, event_time, batch_id)
        select distinct on (r.run_key, kept.facet_of, kept.name)
               r.run_key, kept.facet_of, kept.name, kept.facet, {_EVENT_TIME}, %(batch)s
        from {{events}} e {_EVENT_RUN}
        cross join lateral (select e.payload::jsonb as payload offset 0) parsed  -- once, not per use
        cross join lateral (select 'run', key, value from jsonb_each(parsed.payload -> 'run')
                            union all
                            select 'job', key, value from jsonb_each(parsed.payload -> 'job'))
            as kept(facet_of, name, facet)
        where e.kind = 'run_facets'
        order by r.run_key, kept.facet_of, kept.name, {_EVENT_TIME} desc, kept.facet::text desc
        on conflict (run_key, facet_of, name) do update set
            facet = excluded.facet, event_time = excluded.event_time, batch_id = excluded.batch_id
        where (excluded.event_time, excluded.facet::text) > (f.event_time, f.facet::text)""",
              kinds=("run_facets",)),
    # A program's job type (migration 0040): its jobType job facet, the latest event's.
    MergeStep("program job types", f"""
        update lineage.programs p set job_type = latest.job_type, job_type_at = latest.event_time
        from (
            select distinct on (q.program_key) q.program_key, typed.job_type, {_EVENT_TIME} as event_time
            from {{events}} e
            join lineage.programs q
              on q.namespace = e.namespace and q.application = e.application
             and q.program_type = e.program_type and q.program = e.program
            cross join lateral (select lineage.job_type(e.payload::jsonb -> 'job' -> 'jobType') as job_type) typed
            where e.kind = 'run_facets' and typed.job_type is not null
            order by q.program_key, e.event_time_us desc, typed.job_type desc
        ) as latest
        where p.program_key = latest.program_key  -- the later event wins, ties by content, in any arrival order
          and (p.job_type_at is null or (latest.event_time, latest.job_type) > (p.job_type_at, p.job_type))""",
              kinds=("run_facets",)),
    # Each kept event as its skeleton in columns, its parts and its set of namespaces once
    # (lineage.openlineage.kept_parts, migrations 0041 and 0046).
    MergeStep("openlineage events", f"""
        with new_events as materialized (
            select e.event_id, r.run_key, r.namespace, {_EVENT_TIME} as event_time, kept.payload,
                   array(select jsonb_array_elements_text(kept.payload -> 'namespaces')) as namespaces
            from {{events}} e {_EVENT_RUN}
            cross join lateral (select e.payload::jsonb as payload offset 0) kept  -- parsed once (offset 0:
            where e.kind = 'openlineage'),                                          -- not inlined into each use)
        parts as (
            insert into lineage.openlineage_parts (part_id, namespace, part)
            select p.key::uuid, n.namespace, p.value
            from new_events n cross join lateral jsonb_each(n.payload -> 'parts') as p
            on conflict (part_id) do nothing),
        new_lists as (
            insert into lineage.namespace_lists (list_id, namespaces)
            select distinct md5(namespaces::text)::uuid, namespaces from new_events
            on conflict (list_id) do nothing
            returning list_key, list_id),
        lists as (  -- the lists added now, and those there before (the statement sees only these)
            select list_key, list_id from new_lists
            union all
            select list_key, list_id from lineage.namespace_lists
            where list_id in (select md5(namespaces::text)::uuid from new_events))
        insert into lineage.openlineage_events (event_key, run_key, event_time, namespace_list, body, event_type,
                                                run_facets, rest)
        select md5(n.event_id)::uuid, n.run_key, n.event_time, l.list_key, c.body, c.event_type, c.run_facets, c.rest
        from new_events n
        join lists l on l.list_id = md5(n.namespaces::text)::uuid
        cross join lateral lineage.kept_columns(n.payload -> 'event') c
        on conflict (event_key) do nothing""",
              kinds=("openlineage",)),
    MergeStep("run warnings", f"""
        insert into lineage.run_warnings as w (run_key, warning, first_seen_at)
        select r.run_key, warning, min({_EVENT_TIME})
        from {{events}} e {_EVENT_RUN}
        cross join lateral jsonb_array_elements_text(e.payload::jsonb -> 'warnings') as warning
        where e.kind = 'run_facets'
        group by r.run_key, warning
        on conflict (run_key, warning) do update set first_seen_at = excluded.first_seen_at
        where excluded.first_seen_at < w.first_seen_at""",
              kinds=("run_facets",)),
    MergeStep("dataset facets", f"""
        insert into lineage.dataset_facets as f (dataset_key, name, facet, event_time, batch_id)
        select distinct on (d.dataset_key, kept.name) d.dataset_key, kept.name, kept.facet, {_EVENT_TIME}, %(batch)s
        from {{events}} e {_EVENT_DATASET}
        cross join lateral jsonb_each(e.payload::jsonb -> 'facets') as kept(name, facet)
        where e.kind = 'dataset_facets'
        order by d.dataset_key, kept.name, {_EVENT_TIME} desc, kept.facet::text desc
        on conflict (dataset_key, name) do update set
            facet = excluded.facet, event_time = excluded.event_time, batch_id = excluded.batch_id
        where (excluded.event_time, excluded.facet::text) > (f.event_time, f.facet::text)""",
              kinds=("dataset_facets",)),
    MergeStep("dataset aliases", f"""
        insert into lineage.dataset_aliases as a (namespace, alias, alias_type, dataset_key, event_time, batch_id)
        select distinct on (coalesce(alias.namespace, e.namespace), alias.name)
               coalesce(alias.namespace, e.namespace), alias.name, coalesce(alias.type, 'unknown'), d.dataset_key,
               {_EVENT_TIME}, %(batch)s
        from {{events}} e {_EVENT_DATASET}
        cross join lateral jsonb_to_recordset(e.payload::jsonb -> 'aliases')
            as alias(namespace text, name text, type text)
        where e.kind = 'dataset_facets'
        order by coalesce(alias.namespace, e.namespace), alias.name, {_EVENT_TIME} desc, d.dataset desc
        on conflict (namespace, alias) do update set
            alias_type = excluded.alias_type, dataset_key = excluded.dataset_key, event_time = excluded.event_time,
            batch_id = excluded.batch_id
        where excluded.event_time > a.event_time
           or excluded.event_time = a.event_time and excluded.dataset_key <> a.dataset_key
              and (select dataset from lineage.datasets where dataset_key = excluded.dataset_key)
                > (select dataset from lineage.datasets where dataset_key = a.dataset_key)""",
              kinds=("dataset_facets",)),
    # The version checked: on a dataset the checking run only read, the one there when the run began
    # (run_at); else the one there at the check (the event's time: on an output, the run's own write).
    MergeStep("incidents from failed checks", f"""
        insert into lineage.dataset_incidents (namespace, dataset_type, dataset, bad_from, bad_until, reason, source,
                                               created_by, run_key)
        select distinct on (r.run_key, d.dataset_key) d.namespace, d.dataset_type, d.dataset, version.bad_from,
               version.bad_until, lineage.failed_checks_reason(e.payload::jsonb -> 'failed_assertions'),
               'openlineage', 'openlineage', r.run_key
        from {{events}} e {_EVENT_DATASET} {_EVENT_RUN}
        cross join lateral lineage.checked_version(d.dataset_key, case
            when exists (select from lineage.dataset_accesses w where w.run_key = r.run_key
                         and w.dataset_key = d.dataset_key and w.access in ('write', 'read_write'))
            then {_EVENT_TIME} else least(coalesce(r.run_at, {_EVENT_TIME}), {_EVENT_TIME}) end) version
        where e.kind = 'dataset_facets' and jsonb_typeof(e.payload::jsonb -> 'failed_assertions') = 'array'
          and jsonb_array_length(e.payload::jsonb -> 'failed_assertions') > 0
        order by r.run_key, d.dataset_key, {_EVENT_TIME}
        on conflict (run_key, namespace, dataset_type, dataset) where run_key is not null do nothing""",
              kinds=("dataset_facets",)),
    MergeStep("field operation and metadata events", f"""
        insert into lineage.pending_events (namespace, event_id, kind, event_time, application,
            program_type, program, run_id, payload, batch_id)
        select namespace, event_id, kind, {_EVENT_TIME}, application, program_type, program, run_id,
               payload::jsonb, %(batch)s
        from {{events}} where kind in ('field_operations', 'metadata_change')
        on conflict do nothing""", counts="pending_kept",
              kinds=("field_operations", "metadata_change")),
)


_FILES_PER_STATEMENT = 10_000


def record_files(conn: psycopg.Connection, batch_id: str, files: Sequence[tuple[str, int]]) -> None:
    """Put ``files`` (path, size) in the manifest with their line counts from ``file_lines``, one
    statement per 10,000 files (a statement per file cost a scan of ``file_lines`` each: quadratic
    in the files of a batch, 30 s for 12,594 small files)."""
    for start in range(0, len(files), _FILES_PER_STATEMENT):
        piece = files[start:start + _FILES_PER_STATEMENT]
        conn.execute(
            """insert into lineage.compacted_files (file_path, batch_id, size_bytes, lines)
               select f.path, %(batch)s, f.size, coalesce(l.lines, 0)
               from unnest(%(paths)s::text[], %(sizes)s::bigint[]) as f(path, size)
               left join (select source_file, sum(lines) as lines from file_lines group by source_file) l
                 on l.source_file = f.path""",
            {"batch": batch_id, "paths": [path for path, _ in piece], "sizes": [size for _, size in piece]})


class BatchMerge:
    """One compaction batch merged in one transaction, chunk by chunk (``MERGE_STEPS`` each);
    events of a namespace that does not exist are quarantined with that reason, unless
    ``auto_create_namespaces`` creates it (the *System Applications (CDAP 6.0)* design).

    Opening it opens the transaction and takes the compaction lock in it (CompactionBusyError
    when another compaction holds it), so create it before listing the files to compact: the
    listing then sees every batch committed before."""

    def __init__(self, conn: psycopg.Connection, batch_id: str, *, auto_create_namespaces: bool = False) -> None:
        self._conn = conn
        self._mode = "auto_create" if auto_create_namespaces else "strict"
        self._params: dict[str, Any] = {"batch": batch_id}
        self.batch_id = batch_id
        self.counts = dict.fromkeys(("quarantined", "compacted", "duplicates", "runs_touched", "accesses_added",
                                     "pending_kept"), 0)
        self._transaction = conn.transaction()
        self._transaction.__enter__()
        try:
            take_lock(conn)
        except BaseException as error:
            self.abort(error)
            raise
        # A bulk merge joins whole staging tables to whole entity tables: hash joins always win,
        # but multi-column join estimates can be off by 10^4 and tempt the planner into nested
        # loops (measured 13.8 s vs 4.4 s for 534k accesses). Local to this transaction.
        conn.execute("set local enable_nestloop = off")
        # With nested loops off, a lateral function scan (jsonb_each, unnest) costs as a disabled
        # node, 10^10, so every statement holding one passed the JIT thresholds and spent 150-360
        # ms compiling itself for a few thousand rows (auto_explain: 363 of run parents' 402 ms).
        conn.execute("set local jit = off")
        conn.execute("set local work_mem = '256MB'")
        conn.execute("create temp table file_lines (source_file text, lines bigint) on commit drop")

    def merge_chunk(self, events: str) -> None:
        """Merge one staged chunk (a table from ``create_lines_table``) into the open transaction."""
        table = sql.Identifier(*events.split("."))
        self._conn.execute(sql.SQL("analyze {}").format(table))
        found_kinds = self._conn.execute(sql.SQL("select array_agg(distinct kind) from {}").format(table)).fetchone()
        staged_kinds = set(found_kinds[0] or []) if found_kinds else set()
        for step in MERGE_STEPS:
            if step.mode is not None and step.mode != self._mode:
                continue
            if step.kinds is not None and staged_kinds.isdisjoint(step.kinds):
                continue
            if step.only_if is not None:
                found = self._conn.execute(sql.SQL(step.only_if).format(events=table)).fetchone()
                if not (found and found[0]):
                    continue
            count = _timed(self._conn, step.label, sql.SQL(step.statement).format(events=table), self._params,
                           counted=step.counted)
            if step.counts is not None:
                self.counts[step.counts] += count
            if step.label == "datasets":
                entity_keys.fill_missing(self._conn)  # keys of the programs and datasets just inserted
        self._conn.execute(sql.SQL("drop table {}").format(table))

    def quarantine_file(self, path: str, reason: str) -> None:
        """Quarantine a whole file Spark cannot read (line 0, the reason), in the open transaction."""
        self._conn.execute(
            """insert into lineage.quarantine (batch_id, source_file, line_number, reason, raw_text)
               values (%(batch)s, %(path)s, 0, %(reason)s, '') on conflict (source_file, line_number) do nothing""",
            {**self._params, "path": path, "reason": reason[:4096]})
        self.counts["quarantined"] += 1

    def finish(
        self,
        files: Sequence[tuple[str, int]],
        *,
        dag_run_id: str | None,
        interval_end: datetime | None,
        started_at: datetime,
        events_read: int,
        event_id_retention_days: int,
        pending_retention_days: int = 0,
        late_files: int = 0,
        late_checked: bool = True,
        settled: Sequence[tuple[str, int, int]] = (),
    ) -> CompactionSummary:
        """Record the batch and its files (path, size) in the manifest, and the hour partitions
        this batch leaves fully compacted (``settled``: path, folder time, files; see
        ``record_settled``); expire old ids and the pending records processed more than
        ``pending_retention_days`` ago, commit."""
        conn, params, counts = self._conn, self._params, self.counts
        # the events dropped as delivered before, counted as they are dropped (a line can have
        # several events set aside for one quarantine row: read - quarantined - compacted over-counts)
        duplicates = counts["duplicates"]
        conn.execute(
            """insert into lineage.compaction_batches (batch_id, dag_run_id, interval_end, started_at, files,
                   events_read, events_compacted, duplicates, quarantined, runs_touched, accesses_added, late_files)
               values (%(batch)s, %(dag_run)s, %(interval_end)s, %(started)s, %(files)s, %(read)s,
                       %(compacted)s, %(duplicates)s, %(quarantined)s, %(runs)s, %(accesses)s, %(late)s)""",
            {
                **params, "dag_run": dag_run_id, "interval_end": interval_end, "started": started_at,
                "files": len(files), "read": events_read, "compacted": counts["compacted"],
                "duplicates": duplicates, "quarantined": counts["quarantined"], "runs": counts["runs_touched"],
                "accesses": counts["accesses_added"], "late": late_files,
            },
        )
        if interval_end is not None:
            record_coverage(conn, interval_end)
        record_files(conn, self.batch_id, files)
        record_settled(conn, settled, self.batch_id)
        _timed(conn, "expire old event ids",
               "delete from lineage.event_ids where event_time < now() - make_interval(days => %(days)s)",
               {"days": event_id_retention_days})
        expired = _timed(conn, "expire processed pending records",
                         "delete from lineage.pending_events "
                         "where processed_at < now() - make_interval(days => %(days)s)",
                         {"days": pending_retention_days})
        failpoint("compaction.committing")  # everything written, nothing committed
        self._transaction.__exit__(None, None, None)
        return CompactionSummary(
            batch_id=self.batch_id, files=len(files), events_read=events_read, events_compacted=counts["compacted"],
            duplicates=duplicates, quarantined=counts["quarantined"], runs_touched=counts["runs_touched"],
            accesses_added=counts["accesses_added"], pending_kept=counts["pending_kept"], late_files=late_files,
            late_checked=late_checked, pending_expired=expired,
        )

    def finish_empty(self, interval_end: datetime, settled: Sequence[tuple[str, int, int]] = ()) -> None:
        """Nothing new to compact: record that the log was listed up to ``interval_end`` and the
        partitions found fully compacted (``settled``, see ``record_settled``), commit."""
        record_coverage(self._conn, interval_end)
        record_settled(self._conn, settled, None)
        self._transaction.__exit__(None, None, None)

    def abort(self, error: BaseException) -> None:
        """Roll the whole batch back."""
        self._transaction.__exit__(type(error), error, error.__traceback__)


def _timed(conn: psycopg.Connection, label: str, query: sql.Composed | str,
           params: dict[str, Any] | None = None, *, counted: bool = False) -> int:
    """Execute one merge statement, log its duration, return its row count (``counted``: the
    count it answers)."""
    started = time.perf_counter()
    cursor = conn.execute(query, params)
    answered = cursor.fetchone() if counted else None
    rowcount = int(answered[0]) if answered else cursor.rowcount
    log.info("merge: %s: %d rows in %.1fs", label, rowcount, time.perf_counter() - started)
    return rowcount

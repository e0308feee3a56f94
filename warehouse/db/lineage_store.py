"""Lineage reads: the time-windowed walk's queries, a run's accesses, a program's runs.

The walk is CDAP's (the *Metadata and Data Discovery* design), set at a time
(``warehouse.service.lineage_graph.walk_lineage`` walks):
each half-step is one query over the whole frontier (never one query per node, as CDAP's
scan-per-node BFS does) on the ``lineage_marts.lineage_walk`` mart, whose rows bucket runs by
start day so that a window only reads its own days' buckets; the exact window rule is then
checked on the runs' times.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
from psycopg.rows import class_row, kwargs_row

from lineage.errors import MartNotBuiltError
from lineage.model.metadata_entity import dataset_entity
from warehouse.db import entity_keys, namespace_store, schema_store
from warehouse.db.run_store import RecordedLinks, RunRow, linked_runs
from warehouse.service.lineage_diff import compare, diff_response, schema_change
from warehouse.service.lineage_graph import DataRef, ProgramRef, Relation, RunSpan, Walked, walk_lineage
from warehouse.service.run_rows import DatasetAccess, LinkedRun
from warehouse.service.timespec import epoch_seconds, visible_window

WALK_MART = "lineage_marts.lineage_walk"


def in_window(started: str, stopped: str) -> str:
    """SQL for the *Metadata and Data Discovery* design's scan condition: a run belongs to
    [%(start)s, %(end)s) when it started
    before end and had not stopped before start (a running run has no stop). The one home of
    that rule: the walk applies it to the mart's run times and bucket bounds, ``run_in_window``
    to rows of ``lineage.runs``."""
    return f"({started} < %(end)s and coalesce({stopped}, 'infinity'::timestamptz) >= %(start)s)"


def run_in_window(run: str) -> str:
    """The window rule on the row ``run`` of ``lineage.runs``, at the run's time ``run_at``: its
    start, or else its earliest event (migration 0020), so a run known only from its end (an
    OpenLineage COMPLETE or FAIL without START) is in the windows around its end. Every windowed
    answer on runs uses it; the walk's mart is built from the same ``run_at``."""
    return in_window(f"{run}.run_at", f"{run}.stopped_at")


# A bucket row is in the window when any of its runs is: all of them are when the bucket's
# latest start and earliest stop satisfy the rule; otherwise its runs are checked one by one.
_ANY_RUN_IN_WINDOW = f"""({in_window("w.latest_start", "w.earliest_stop")}
    or ({in_window("w.earliest_start", "w.latest_stop")}
        and exists (select 1 from unnest(w.run_starts, w.run_stops) as run(started, stopped)
                    where {in_window("run.started", "run.stopped")})))"""


def _bucket_rows(key: str, columns: str, condition: str = "true") -> str:
    """Mart rows of the frontier %(keys)s on ``key`` whose buckets can hold runs of the window:
    the days from the day before start to end's day, and the long/running bucket."""
    return f"""
        select {columns} from {WALK_MART} w
        where w.{key} = any(%(keys)s) and w.bucket between %(first_day)s and %(last_day)s and {condition}
        union all
        select {columns} from {WALK_MART} w
        where w.{key} = any(%(keys)s) and w.bucket = '-infinity'::date and {condition}"""


# Declared lineage (a program's accesses without a run, migration 0039) is in every window that
# ends after the access was first declared (declared since the namespace's incarnation): the
# program's latest declaration holds until it declares again. The diff leaves it out (runs only).
_DECLARED_IN_WINDOW = """%(with_declared)s and a.first_declared_at < %(end)s
    and a.declared_at >= %(declared_since)s"""

# One BFS half-step over the whole frontier: data -> programs, or programs -> data, by runs in the
# window or by declaration.
_NEIGHBOURS = {
    key: f"""select {other} from ({_bucket_rows(key, f'w.{other}', _ANY_RUN_IN_WINDOW)}) n
             union
             select a.{other} from lineage.declared_accesses a
             where a.{key} = any(%(keys)s) and {_DECLARED_IN_WINDOW}"""
    for key, other in (("dataset_key", "program_key"), ("program_key", "dataset_key"))
}


def _named_relations() -> str:
    """The end of both relation queries: the CTE ``relations`` (runtime relations) beside the
    programs' declared accesses, one row per (data, program, access), ``declared`` when declared
    (a relation only declared has no runs), with the names of its data and program."""
    return f"""
    , declared as (
        select a.program_key, a.dataset_key, a.access from lineage.declared_accesses a
        where a.program_key = any(%(keys)s) and {_DECLARED_IN_WINDOW}
    )
    select d.namespace as data_namespace, d.dataset_type, d.dataset,
           p.namespace as program_namespace, p.application, p.program_type, p.program,
           access, coalesce(r.runs, '{{}}') as runs, coalesce(r.components, '{{}}') as components,
           coalesce(r.run_count, 0) as run_count, r.first_run, r.last_run, r.latest_run,
           x.program_key is not null as declared
    from relations r
    full join declared x using (program_key, dataset_key, access)
    join lineage.datasets d using (dataset_key)
    join lineage.programs p using (program_key)"""


def _relations_sql() -> str:
    """Every relation of the programs %(keys)s in the window, with every run id and its runs counted
    (how many, the first and last run's time, the newest run)."""
    return f"""
    with hits as (
        select w.program_key, w.dataset_key, w.access, w.component, run.run_id, run.started
        from ({_bucket_rows("program_key", "w.*")}) w
        cross join lateral unnest(w.run_ids, w.run_starts, w.run_stops) as run(run_id, started, stopped)
        where {in_window("run.started", "run.stopped")}
    ),
    relations as (
        select program_key, dataset_key, access,
               array_agg(distinct run_id) as runs,
               coalesce(array_agg(distinct component) filter (where component <> ''), '{{}}') as components,
               count(distinct run_id) as run_count, min(started) as first_run, max(started) as last_run,
               (array_agg(run_id order by started desc, run_id desc))[1] as latest_run
        from hits group by program_key, dataset_key, access
    ){_named_relations()}"""


# Runs counted without their ids. A mart row whose runs are all in the window (its latest start
# and earliest stop satisfy the rule) gives its count, first, last and newest run without being
# unnested, when no other row of its relation can hold the same run: a run is in one day bucket,
# so only a relation with a '-infinity' row (long, running or start-less runs, also listed under
# their day) or with rows of several components can count a run twice; those, and the rows
# partly in the window, are counted run by run. A 30-day window so reads a row per bucket, not
# every run.
_RELATIONS_COUNTED = f"""
    with w as (
        select w.program_key, w.dataset_key, w.access, w.component, w.bucket, w.run_ids, w.run_starts,
               w.run_stops, w.earliest_start, w.latest_start,
               {in_window("w.latest_start", "w.earliest_stop")} as whole
        from ({_bucket_rows("program_key", "w.*")}) w
    ),
    shapes as (
        select program_key, dataset_key, access,
               bool_or(bucket = '-infinity'::date) or count(distinct component) > 1 as overlapping
        from w group by program_key, dataset_key, access
    ),
    rows as (
        select w.*, w.whole and not s.overlapping as counted_whole
        from w join shapes s using (program_key, dataset_key, access)
    ),
    parts as (
        select program_key, dataset_key, access, component, cardinality(run_ids)::bigint as run_count,
               earliest_start as first_run, latest_start as last_run, run_ids[cardinality(run_ids)] as latest_run
        from rows where counted_whole
        union all
        select program_key, dataset_key, access, min(component), count(distinct run.run_id),
               min(run.started), max(run.started),
               (array_agg(run.run_id order by run.started desc, run.run_id desc))[1]
        from rows cross join lateral unnest(rows.run_ids, rows.run_starts, rows.run_stops)
             as run(run_id, started, stopped)
        where not counted_whole and {in_window("run.started", "run.stopped")}
        group by program_key, dataset_key, access, component
    ),
    relations as (
        select program_key, dataset_key, access, '{{}}'::text[] as runs,
               coalesce(array_agg(distinct component) filter (where component <> ''), '{{}}') as components,
               sum(run_count)::bigint as run_count, min(first_run) as first_run, max(last_run) as last_run,
               (array_agg(latest_run order by last_run desc, latest_run desc))[1] as latest_run
        from parts group by program_key, dataset_key, access
    ){_named_relations()}"""

_RELATIONS = {True: _relations_sql(), False: _RELATIONS_COUNTED}


def dataset_named(conn: psycopg.Connection, data: DataRef) -> DataRef:
    """The dataset a lookup of ``data`` finds: ``data`` itself when a dataset of that name exists or
    no dataset has it as an alias (OpenLineage's symlinks), else the dataset the alias names."""
    if data.type != "dataset":
        return data
    found = conn.execute(
        """select d.namespace, d.dataset_type, d.dataset
           from lineage.dataset_aliases a join lineage.datasets d using (dataset_key)
           where a.namespace = %(namespace)s and a.alias = %(name)s
             and not exists (select from lineage.datasets own where own.namespace = %(namespace)s
                             and own.dataset_type = 'dataset' and own.dataset = %(name)s)""",
        {"namespace": data.namespace, "name": data.name}).fetchone()
    return data if found is None else DataRef(*found)


class LineageQueries:
    """The dataset-lineage walk's queries (``warehouse.service.lineage_graph.LineageQueries``) for the
    window [start, end): one query per call, over the whole frontier it is given."""

    def __init__(self, conn: psycopg.Connection, start: datetime, end: datetime, *, run_ids: bool = True,
                 declared: bool = True, declared_since: datetime | None = None) -> None:
        """``run_ids`` False: relations carry their runs counted only (``Relation.span``), no ids;
        ``declared`` False: runs only, no declared lineage; ``declared_since``: no declaration
        before it (the namespace's incarnation)."""
        self.conn, self.run_ids = conn, run_ids
        self.window: dict[str, Any] = {
            "start": start, "end": end, "with_declared": declared,
            "declared_since": declared_since or datetime.min.replace(tzinfo=UTC),
            "first_day": (start - timedelta(days=1)).astimezone(UTC).date(), "last_day": end.astimezone(UTC).date(),
        }

    def dataset_key(self, data: DataRef) -> int | None:
        return entity_keys.dataset_key(self.conn, data)

    def programs_of(self, data_keys: Sequence[int]) -> list[int]:
        return self._neighbours("dataset_key", data_keys)

    def data_of(self, program_keys: Sequence[int]) -> list[int]:
        return self._neighbours("program_key", program_keys)

    def relations(self, program_keys: Sequence[int]) -> list[Relation]:
        with _mart(), self.conn.cursor(row_factory=kwargs_row(_relation)) as cursor:
            return cursor.execute(_RELATIONS[self.run_ids], {**self.window, "keys": sorted(program_keys)}).fetchall()

    def _neighbours(self, key: str, keys: Sequence[int]) -> list[int]:
        with _mart():
            rows = self.conn.execute(_NEIGHBOURS[key], {**self.window, "keys": sorted(keys)}).fetchall()
        return sorted(row[0] for row in rows)


def walk(conn: psycopg.Connection, origin: DataRef, window: tuple[datetime, datetime], levels: int, *,
         run_ids: bool = True, declared: bool = True) -> Walked:
    """The design's walk from ``origin`` in ``window``, without what predates the namespace's
    incarnation (its runs await cleanup); ``run_ids`` False: runs counted only; ``declared``
    False: runs only (no declared lineage)."""
    since = namespace_store.visible_since(conn, origin.namespace)
    visible = visible_window(window, since)
    queries = LineageQueries(conn, *visible, run_ids=run_ids, declared=declared, declared_since=since)
    return walk_lineage(queries, origin, levels)


def diff(conn: psycopg.Connection, origin: DataRef, window: tuple[datetime, datetime],
         base: tuple[datetime, datetime], levels: int, *, changed_only: bool = False,
         shown: Callable[[list[Relation]], list[Relation]] = list) -> dict[str, Any]:
    """What changed in ``origin``'s lineage from ``base`` to ``window`` (``lineage_diff``): both
    walks (runs counted), as ``shown`` presents them to the caller (one call over both sides, so
    that a hidden node has one alias), compared, with the schema changes of the datasets shown
    (the version in force at the end of each window)."""
    current, current_cut = walk(conn, origin, window, levels, run_ids=False, declared=False)
    before, base_cut = walk(conn, origin, base, levels, run_ids=False, declared=False)
    seen = shown(current + before)
    changes = compare(seen[:len(current)], seen[len(current):])
    datasets = {change.data.id: change.data for change in changes if change.data.type in ("dataset", "stream")}
    versions = schema_store.schemas_at(conn, [dataset_entity(d.namespace, d.type, d.name) for d in datasets.values()],
                                       (base[1], window[1]))
    schemas = {}
    for key, data in datasets.items():
        change = schema_change(*versions.get(dataset_entity(data.namespace, data.type, data.name).render(),
                                             (None, None)))
        if change is not None:
            schemas[key] = change
    windows = {"start": epoch_seconds(window[0]), "end": epoch_seconds(window[1]),
               "baseStart": epoch_seconds(base[0]), "baseEnd": epoch_seconds(base[1]), "levels": levels}
    return {**diff_response(windows, changes, changed_only=changed_only, schemas=schemas),
            "truncated": {"current": current_cut, "base": base_cut}, "nodes": seen}


def with_job_types(conn: psycopg.Connection, answer: dict[str, Any]) -> dict[str, Any]:
    """``answer`` with each of its programs' job type (an OpenLineage job's jobType facet as one
    word: ``airflow_task``, ``dbt_model``; migration 0040), by the ids the warehouse stores."""
    programs = answer["programs"]
    if programs:
        for program_id, job_type in conn.execute(
                "select program_id, job_type from lineage.programs where program_id = any(%s) and job_type is not null",
                (list(programs),)).fetchall():
            programs[program_id]["jobType"] = job_type
    return answer


@contextmanager
def _mart() -> Iterator[None]:
    try:
        yield
    except psycopg.errors.UndefinedTable as error:
        raise MartNotBuiltError.of(WALK_MART) from error


def _relation(*, data_namespace: str, dataset_type: str, dataset: str, program_namespace: str, application: str,
              program_type: str, program: str, access: str, runs: list[str], components: list[str],
              run_count: int, first_run: datetime | None, last_run: datetime | None, latest_run: str | None,
              declared: bool) -> Relation:
    """A row of ``_RELATIONS``, by its columns."""
    return Relation(data=DataRef(data_namespace, dataset_type, dataset),
                    program=ProgramRef(program_namespace, application, program_type, program),
                    access=access, runs=tuple(runs), components=tuple(components),
                    span=RunSpan(run_count, epoch_seconds(first_run), epoch_seconds(last_run), latest_run),
                    declared=declared)


@dataclass(frozen=True, slots=True)
class RunWithAccesses:
    """A run with what it read and wrote, in order of first access."""

    run_id: str
    status: str
    started_at: datetime | None
    stopped_at: datetime | None
    accesses: tuple[DatasetAccess, ...]


def run_accesses(
    conn: psycopg.Connection, namespace: str, application: str, program_type: str, program: str, run_id: str
) -> RunWithAccesses | None:
    """A run with what it read and wrote (and when), or None when unknown."""
    with conn.cursor(row_factory=class_row(RunRow)) as cursor:
        run = cursor.execute(
            """select run_key, run_id, status, started_at, stopped_at from lineage.run_details
               where namespace = %s and application = %s and program_type = %s and program = %s and run_id = %s""",
            (namespace, application, program_type, program, run_id),
        ).fetchone()
    if run is None:
        return None
    with conn.cursor(row_factory=class_row(DatasetAccess)) as cursor:
        accesses = cursor.execute(
            """select d.namespace, d.dataset_type as type, d.dataset as name, a.access,
                      nullif(a.component, '') as component, a.accessed_at
               from lineage.dataset_accesses a join lineage.datasets d using (dataset_key)
               where a.run_key = %s order by a.accessed_at, d.dataset, a.access""",
            (run.run_key,),
        ).fetchall()
    return RunWithAccesses(run.run_id, run.status, run.started_at, run.stopped_at, tuple(accesses))


@dataclass(frozen=True, slots=True)
class ProgramRunRow:
    """A run of a program, with its recorded parent run (None: none recorded)."""

    run_id: str
    status: str
    started_at: datetime | None
    stopped_at: datetime | None
    parent: LinkedRun | None


def program_runs(
    conn: psycopg.Connection, namespace: str, application: str, program_type: str, program: str,
    start: datetime, end: datetime,
) -> list[ProgramRunRow] | None:
    """The program's runs in the window, newest first (by their time: the start, or else the
    earliest event), each with its parent run (or None); None when the program is unknown."""
    found = conn.execute(
        """select program_key from lineage.programs
           where namespace = %s and application = %s and program_type = %s and program = %s""",
        (namespace, application, program_type, program),
    ).fetchone()
    if found is None:
        return None
    with conn.cursor(row_factory=class_row(RunRow)) as cursor:
        runs = cursor.execute(
            f"""select run_key, run_id, status, started_at, stopped_at from lineage.runs r
                where program_key = %(program)s and {run_in_window("r")}
                order by run_at desc, run_id""",
            {"program": found[0], "start": start, "end": end},
        ).fetchall()
    parents = linked_runs(conn, [run.run_key for run in runs])
    return [ProgramRunRow(run.run_id, run.status, run.started_at, run.stopped_at,
                          parents.get(run.run_key, RecordedLinks()).parent) for run in runs]

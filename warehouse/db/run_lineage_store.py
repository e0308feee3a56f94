"""Run-level lineage reads: for a frontier of runs, the runs one step upstream or downstream,
through the datasets they read or wrote (``warehouse.service.run_lineage`` walks and shapes).

When a write happened is the end of the run that made it (``stopped_at``), or, while the run has
not ended, the time of its access. A read happened at the reading run's time (``run_at``: its
start, or else its earliest event). So:

- upstream, for each dataset a run read, the run whose write to it came last at or before the
  run's time (the version it read);
- downstream, for each dataset a run wrote, the runs whose time falls at or after that write and
  before the next write to it replaced it (the runs that read that version).

A run's ``read_write`` access is both a read and a write; ``unknown`` is neither. Each query
answers for the whole frontier at once, and reads a dataset's accesses around the moment it
asks about (migration 0027's indexes), not all of them: a run that ended within a day of its
start wrote within a day of its access, so only runs longer than a day (or without a start, or
running) can be far from it in time, and those are few and indexed apart. Where no write lies
within a day of the moment, every write of the dataset is read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import psycopg
from psycopg.rows import class_row

from lineage.ids import DataRef, ProgramRef
from warehouse.db.connection import without_jit
from warehouse.service.blast_radius import FieldStep, LatestWrite
from warehouse.service.run_hierarchy import RunRef
from warehouse.service.run_lineage import RunNode, RunStep

_WRITES = "('write', 'read_write')"
_READS = "('read', 'read_write')"
_WRITTEN = "coalesce({run}.stopped_at, {access}.accessed_at)"
_DAY = "interval '1 day'"
# A finished run longer than a day or without a start (runs_long_by_stop), and any run a moment
# cannot bound: those and the running ones (runs_long_or_running_by_time); migration 0027.
_LONG = "{run}.started_at is null or {run}.stopped_at - {run}.started_at > {day}"
_LONG_FINISHED = "({run}.stopped_at is not null and (" + _LONG + "))"
_LONG_OR_RUNNING = "({run}.stopped_at is null or " + _LONG + ")"


def _writes_of(pair: str, condition: str, order: str) -> str:
    """The first write of ``pair``'s dataset (by another run than ``pair.run_key``) meeting
    ``condition`` in ``order``: its run and when it happened (``written``)."""
    written = _WRITTEN.format(run="w", access="wa")
    return f"""(select w.run_key, {written} as written
                from lineage.dataset_accesses wa join lineage.runs w on w.run_key = wa.run_key
                where wa.dataset_key = {pair}.dataset_key and wa.access in {_WRITES} and wa.run_key <> {pair}.run_key
                  and {condition.format(written=written)}
                order by {written} {order}, w.run_key {order} limit 1)"""


# A run that is not long (it ended within a day of its start) wrote at most a day after it
# accessed: the write a read saw, if it came within a day before the read, is among the writes
# accessed within two days before it, or was made by a long finished run (few; by their end).
# Otherwise (no write within the day before) every write of the dataset is looked at.
_UPSTREAM = f"""
    with reads as (
        select reader.run_key, reader.run_at as read_at, a.dataset_key
        from lineage.runs reader
        join lineage.dataset_accesses a on a.run_key = reader.run_key and a.access in {_READS}
        where reader.run_key = any(%(runs)s)
        group by reader.run_key, reader.run_at, a.dataset_key
    ),
    near as (
        select reads.*, n.run_key as writer, n.written
        from reads left join lateral {_writes_of(
            "reads", "wa.accessed_at > reads.read_at - 2 * " + _DAY + " and wa.accessed_at <= reads.read_at "
            "and {written} <= reads.read_at", "desc")} n on true
    ),
    candidates as (
        select near.run_key, near.dataset_key, near.writer, near.written
        from near where near.written >= near.read_at - {_DAY}
        union all
        select near.run_key, near.dataset_key, long.run_key, long.written
        from near cross join lateral (
            select w.run_key, w.stopped_at as written
            from lineage.runs w
            where {_LONG_FINISHED.format(run="w", day=_DAY)} and w.run_key <> near.run_key
              and w.stopped_at > near.written and w.stopped_at <= near.read_at
              and exists (select 1 from lineage.dataset_accesses wa where wa.dataset_key = near.dataset_key
                          and wa.run_key = w.run_key and wa.access in {_WRITES})
        ) long
        where near.written >= near.read_at - {_DAY}
        union all
        select near.run_key, near.dataset_key, far.run_key, far.written
        from near left join lateral {_writes_of("near", "{written} <= near.read_at", "desc")} far on true
        where near.written is null or near.written < near.read_at - {_DAY}
    )
    select distinct on (run_key, dataset_key) run_key as from_run, dataset_key, writer as to_run
    from candidates
    order by run_key, dataset_key, written desc nulls last, writer desc"""

# The next write after a run's write, found the same way (writes accessed within a day of it,
# long finished runs by their end, else every later write); then its readers: the runs whose time
# falls between the two writes, found by their accesses (a run that is not long accessed within
# a day of its time) and, apart, the long or running runs of that time.
_DOWNSTREAM = f"""
    with writes as (
        select writer.run_key, a.dataset_key, min({_WRITTEN.format(run="writer", access="a")}) as written
        from lineage.runs writer
        join lineage.dataset_accesses a on a.run_key = writer.run_key and a.access in {_WRITES}
        where writer.run_key = any(%(runs)s)
        group by writer.run_key, a.dataset_key
    ),
    near as (
        select writes.*, n.written as near_next
        from writes left join lateral {_writes_of(
            "writes", "wa.accessed_at > writes.written - " + _DAY + " and wa.accessed_at <= writes.written + " + _DAY +
            " and {written} > writes.written", "asc")} n on true
    ),
    nexts as (
        select near.run_key, near.dataset_key, near.written, case
            when near.near_next <= near.written + {_DAY} then least(near.near_next, (
                select min(w.stopped_at) from lineage.runs w
                where {_LONG_FINISHED.format(run="w", day=_DAY)} and w.run_key <> near.run_key
                  and w.stopped_at > near.written and w.stopped_at < near.near_next
                  and exists (select 1 from lineage.dataset_accesses wa where wa.dataset_key = near.dataset_key
                              and wa.run_key = w.run_key and wa.access in {_WRITES})))
            else (select far.written from {_writes_of("near", "{written} > near.written", "asc")} far)
            end as replaced
        from near
    ),
    readers as (
        select nexts.run_key, nexts.dataset_key, r.run_key as reader
        from nexts
        join lineage.dataset_accesses ra on ra.dataset_key = nexts.dataset_key and ra.access in {_READS}
             and ra.accessed_at >= nexts.written
             and ra.accessed_at < coalesce(nexts.replaced + {_DAY}, 'infinity'::timestamptz)
        join lineage.runs r on r.run_key = ra.run_key
        where r.run_key <> nexts.run_key and r.run_at >= nexts.written
          and r.run_at < coalesce(nexts.replaced, 'infinity'::timestamptz)
        union
        select nexts.run_key, nexts.dataset_key, r.run_key
        from nexts
        join lineage.runs r on {_LONG_OR_RUNNING.format(run="r", day=_DAY)}
             and r.run_at >= nexts.written and r.run_at < coalesce(nexts.replaced, 'infinity'::timestamptz)
        where r.run_key <> nexts.run_key
          -- a subquery per candidate (few), not a semi-join, which PostgreSQL plans as a hash of
          -- every read access of the warehouse once the frontier holds a few dozen runs
          and (select true from lineage.dataset_accesses ra where ra.dataset_key = nexts.dataset_key
               and ra.run_key = r.run_key and ra.access in {_READS} limit 1)
    )
    select nexts.run_key as from_run, nexts.dataset_key, readers.reader as to_run
    from nexts left join readers using (run_key, dataset_key)
    group by nexts.run_key, nexts.dataset_key, readers.reader"""


# The writes of a dataset that happened in ranges: a run that is not long wrote at most a day
# after it accessed, so its access lies within the day before the range; long finished runs apart,
# by their end.
_WRITES_IN = f"""
    with bad as (select * from unnest(%(starts)s::timestamptz[], %(ends)s::timestamptz[]) as bad(bad_from, bad_until)),
    candidates as (
        select a.run_key, {_WRITTEN.format(run="r", access="a")} as written
        from bad
        join lineage.dataset_accesses a on a.dataset_key = %(dataset)s and a.access in {_WRITES}
             and a.accessed_at >= bad.bad_from - {_DAY} and a.accessed_at < bad.bad_until
        join lineage.runs r on r.run_key = a.run_key
        where {_WRITTEN.format(run="r", access="a")} >= bad.bad_from
          and {_WRITTEN.format(run="r", access="a")} < bad.bad_until
        union all
        select w.run_key, w.stopped_at
        from bad cross join lateral (  -- few: by their end first (offset 0)
            select w.run_key, w.stopped_at from lineage.runs w
            where {_LONG_FINISHED.format(run="w", day=_DAY)} and w.stopped_at >= bad.bad_from
              and w.stopped_at < bad.bad_until offset 0) w
        where exists (select 1 from lineage.dataset_accesses wa where wa.dataset_key = %(dataset)s
                      and wa.run_key = w.run_key and wa.access in {_WRITES})
    )
    select run_key from candidates group by run_key order by min(written), run_key"""

# A dataset's latest write: no write accessed more than a day before its latest write access can
# have happened later, unless a long run made it (by their end).
_LATEST_WRITES = f"""
    select distinct on (d.dataset_key) d.namespace, d.dataset_type, d.dataset, c.run_key, c.written
    from unnest(%(namespaces)s::text[], %(types)s::text[], %(names)s::text[]) as k(namespace, dataset_type, dataset)
    join lineage.datasets d on (d.namespace, d.dataset_type, d.dataset) = (k.namespace, k.dataset_type, k.dataset)
    cross join lateral (select max(la.accessed_at) as accessed_at from lineage.dataset_accesses la
                        where la.dataset_key = d.dataset_key and la.access in {_WRITES}) last
    cross join lateral (
        select a.run_key, {_WRITTEN.format(run="r", access="a")} as written
        from lineage.dataset_accesses a join lineage.runs r on r.run_key = a.run_key
        where a.dataset_key = d.dataset_key and a.access in {_WRITES} and a.accessed_at >= last.accessed_at - {_DAY}
        union all
        select w.run_key, w.stopped_at
        from (select w.run_key, w.stopped_at from lineage.runs w  -- few: by their end first (offset 0)
              where {_LONG_FINISHED.format(run="w", day=_DAY)} and w.stopped_at >= last.accessed_at offset 0) w
        where exists (select 1 from lineage.dataset_accesses wa where wa.dataset_key = d.dataset_key
                      and wa.run_key = w.run_key and wa.access in {_WRITES})
    ) c
    order by d.dataset_key, c.written desc, c.run_key desc"""


@dataclass(frozen=True, slots=True)
class _Step:
    from_run: int
    dataset_key: int
    to_run: int | None


class RunLineageQueries:
    """``warehouse.service.run_lineage.RunLineageQueries`` on the warehouse: one query per call."""

    def __init__(self, conn: psycopg.Connection) -> None:
        self.conn = conn

    def run_key(self, namespace: str, application: str, program_type: str, program: str, run_id: str
                ) -> int | None:
        found = self.conn.execute(
            """select r.run_key from lineage.runs r join lineage.programs p using (program_key)
               where p.namespace = %s and p.application = %s and p.program_type = %s and p.program = %s
                 and r.run_id = %s""", (namespace, application, program_type, program, run_id)).fetchone()
        return None if found is None else int(found[0])

    def upstream(self, runs: Sequence[int]) -> list[RunStep]:
        return self._steps(_UPSTREAM, runs)

    def downstream(self, runs: Sequence[int]) -> list[RunStep]:
        return self._steps(_DOWNSTREAM, runs)

    def _steps(self, sql: str, runs: Sequence[int]) -> list[RunStep]:
        with without_jit(self.conn), self.conn.cursor(row_factory=class_row(_Step)) as cursor:
            rows = cursor.execute(sql, {"runs": list(runs)}).fetchall()
        datasets = self._datasets(sorted({row.dataset_key for row in rows}))
        return sorted((RunStep(row.from_run, datasets[row.dataset_key], row.to_run) for row in rows),
                      key=lambda step: (step.from_run, step.dataset.id, step.to_run or 0))

    def _datasets(self, keys: list[int]) -> dict[int, DataRef]:
        rows = self.conn.execute(
            "select dataset_key, namespace, dataset_type, dataset from lineage.datasets where dataset_key = any(%s)",
            (keys,)).fetchall()
        return {key: DataRef(namespace, kind, name) for key, namespace, kind, name in rows}

    def writes_in(self, dataset_key: int, ranges: Sequence[tuple[datetime, datetime]]) -> list[int]:
        """The runs whose write of the dataset happened in one of ``ranges`` ([start, end)), in
        time order."""
        with without_jit(self.conn):
            rows = self.conn.execute(_WRITES_IN, {"dataset": dataset_key, "starts": [start for start, _ in ranges],
                                                  "ends": [end for _, end in ranges]}).fetchall()
        return [row[0] for row in rows]

    def latest_writes(self, datasets: Sequence[DataRef]) -> dict[DataRef, LatestWrite]:
        """Each dataset's latest write: by which run, when."""
        with without_jit(self.conn):
            rows = self.conn.execute(_LATEST_WRITES, {"namespaces": [d.namespace for d in datasets],
                                                      "types": [d.type for d in datasets],
                                                      "names": [d.name for d in datasets]}).fetchall()
        return {DataRef(row[0], row[1], row[2]): LatestWrite(row[3], row[4]) for row in rows}

    def field_steps(self, runs: Sequence[int]) -> list[FieldStep]:
        """The field lineage edges the runs recorded (each kind of each edge once per run)."""
        rows = self.conn.execute(
            """select distinct f.run_key, e.source_namespace, e.source_type, e.source, e.source_field,
                      s.destination_namespace, s.destination_type, s.destination, e.field, e.kind
               from lineage.field_lineage_runs f
               join lineage.field_operation_sets s on s.fingerprint = f.set_fingerprint
               join lineage.field_edges e on e.set_fingerprint = f.set_fingerprint
               where f.run_key = any(%s)""", (list(runs),)).fetchall()
        return [FieldStep(row[0], DataRef(*row[1:4]), row[4], DataRef(*row[5:8]), row[8], row[9]) for row in rows]

    def runs(self, keys: Sequence[int]) -> dict[int, RunNode]:
        with self.conn.cursor(row_factory=class_row(_RunRow)) as cursor:
            rows = cursor.execute(
                """select r.run_key, p.namespace, p.application, p.program_type, p.program, r.run_id, r.status,
                          r.started_at, r.stopped_at, r.run_at
                   from lineage.runs r join lineage.programs p using (program_key)
                   where r.run_key = any(%s)""", (list(keys),)).fetchall()
        return {row.run_key: row.node() for row in rows}


@dataclass(frozen=True, slots=True)
class _RunRow:
    run_key: int
    namespace: str
    application: str
    program_type: str
    program: str
    run_id: str
    status: str
    started_at: datetime | None
    stopped_at: datetime | None
    run_at: datetime | None

    def node(self) -> RunNode:
        return RunNode(self.run_key, RunRef(ProgramRef(self.namespace, self.application, self.program_type,
                                                       self.program), self.run_id),
                       self.status, self.started_at, self.stopped_at, self.run_at)


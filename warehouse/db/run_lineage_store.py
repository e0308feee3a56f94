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
answers for the whole frontier at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import psycopg
from psycopg.rows import class_row

from lineage.ids import DataRef, ProgramRef
from warehouse.service.run_hierarchy import RunRef
from warehouse.service.run_lineage import RunNode, RunStep

_WRITES = "('write', 'read_write')"
_READS = "('read', 'read_write')"
_WRITTEN = "coalesce({run}.stopped_at, {access}.accessed_at)"

_UPSTREAM = f"""
    select reader.run_key as from_run, a.dataset_key, writer.run_key as to_run
    from lineage.runs reader
    join lineage.dataset_accesses a on a.run_key = reader.run_key and a.access in {_READS}
    left join lateral (
        select w.run_key
        from lineage.dataset_accesses wa join lineage.runs w on w.run_key = wa.run_key
        where wa.dataset_key = a.dataset_key and wa.access in {_WRITES} and wa.run_key <> reader.run_key
          and {_WRITTEN.format(run="w", access="wa")} <= reader.run_at
        order by {_WRITTEN.format(run="w", access="wa")} desc, w.run_key desc
        limit 1
    ) writer on true
    where reader.run_key = any(%(runs)s)
    group by reader.run_key, a.dataset_key, writer.run_key"""

_DOWNSTREAM = f"""
    with writes as (
        select writer.run_key, a.dataset_key, min({_WRITTEN.format(run="writer", access="a")}) as written
        from lineage.runs writer
        join lineage.dataset_accesses a on a.run_key = writer.run_key and a.access in {_WRITES}
        where writer.run_key = any(%(runs)s)
        group by writer.run_key, a.dataset_key
    )
    select writes.run_key as from_run, writes.dataset_key, readers.run_key as to_run
    from writes
    left join lateral (
        select min({_WRITTEN.format(run="n", access="na")}) as replaced
        from lineage.dataset_accesses na join lineage.runs n on n.run_key = na.run_key
        where na.dataset_key = writes.dataset_key and na.access in {_WRITES} and na.run_key <> writes.run_key
          and {_WRITTEN.format(run="n", access="na")} > writes.written
    ) next_write on true
    left join lateral (
        select distinct r.run_key
        from lineage.dataset_accesses ra join lineage.runs r on r.run_key = ra.run_key
        where ra.dataset_key = writes.dataset_key and ra.access in {_READS} and ra.run_key <> writes.run_key
          and r.run_at >= writes.written and r.run_at < coalesce(next_write.replaced, 'infinity'::timestamptz)
    ) readers on true"""


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
        with self.conn.cursor(row_factory=class_row(_Step)) as cursor:
            rows = cursor.execute(sql, {"runs": list(runs)}).fetchall()
        datasets = self._datasets(sorted({row.dataset_key for row in rows}))
        return sorted((RunStep(row.from_run, datasets[row.dataset_key], row.to_run) for row in rows),
                      key=lambda step: (step.from_run, step.dataset.id, step.to_run or 0))

    def _datasets(self, keys: list[int]) -> dict[int, DataRef]:
        rows = self.conn.execute(
            "select dataset_key, namespace, dataset_type, dataset from lineage.datasets where dataset_key = any(%s)",
            (keys,)).fetchall()
        return {key: DataRef(namespace, kind, name) for key, namespace, kind, name in rows}

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


"""Run reads beyond accesses: a run with its parent, root, children, kept facets and warnings,
and the recorded links of many runs at once (for lineage roll-up).

A linked run is stored by its identity (program and run id, ``lineage.run_parents``), so a
parent is linked whether or not its own events ever arrived; ``recorded`` says whether the
warehouse has the run itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import class_row, dict_row

from warehouse.service.lineage_graph import ProgramRef
from warehouse.service.run_hierarchy import RunLinks, RunRef
from warehouse.service.run_rows import ChildRun, LinkedRun

MAX_CHILDREN = 1000
_RUN_OF_PROGRAM = """
    select r.run_key, r.run_id, r.status, r.started_at, r.stopped_at
    from lineage.runs r join lineage.programs p using (program_key)
    where p.namespace = %(namespace)s and p.application = %(application)s and p.program_type = %(program_type)s
      and p.program = %(program)s and r.run_id = %(run_id)s"""
# The runs linked to the runs of %(keys)s, by relation.
_LINKED = """
    select l.run_key, l.relation, l.namespace, l.application, l.program_type, l.program, l.run_id,
           exists (select from lineage.runs r join lineage.programs p using (program_key)
                   where p.namespace = l.namespace and p.application = l.application
                     and p.program_type = l.program_type and p.program = l.program and r.run_id = l.run_id)
               as recorded
    from lineage.run_parents l where l.run_key = any(%(keys)s)"""


@dataclass(frozen=True, slots=True)
class RecordedLinks:
    """A run's recorded parent and root (either may be None), as shown in the run answers."""

    parent: LinkedRun | None = None
    root: LinkedRun | None = None


@dataclass(frozen=True, slots=True)
class RunRow:
    """A recorded run: its key, id, status and times (the columns of ``lineage.runs`` the run answers read)."""

    run_key: int
    run_id: str
    status: str
    started_at: datetime | None
    stopped_at: datetime | None


@dataclass(frozen=True, slots=True, kw_only=True)
class RunDetail:
    """A run with its place in a hierarchy, the facets its events carried (latest per name, as
    sent: free-form JSON) and the warnings they were accepted with. A run known only as the
    parent or root of others is not ``recorded``: no status, times, facets or warnings."""

    run_id: str
    recorded: bool
    status: str | None
    started_at: datetime | None
    stopped_at: datetime | None
    parent: LinkedRun | None = None
    root: LinkedRun | None = None
    children: tuple[ChildRun, ...] = ()  # oldest first, up to MAX_CHILDREN
    child_count: int = 0  # all of them
    run_facets: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> facet
    job_facets: dict[str, dict[str, Any]] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()


def _ref(row: dict[str, Any]) -> RunRef:
    return RunRef(ProgramRef(row["namespace"], row["application"], row["program_type"], row["program"]),
                  row["run_id"])


def run_links(conn: psycopg.Connection, runs: Sequence[RunRef]) -> dict[RunRef, RunLinks]:
    """The recorded parent and root of each of ``runs`` that has any, in one query."""
    columns: list[list[str]] = [[], [], [], [], []]
    for run in runs:
        for column, value in zip(columns, (run.program.namespace, run.program.application, run.program.type,
                                           run.program.name, run.run_id), strict=True):
            column.append(value)
    with conn.cursor(row_factory=dict_row) as cursor:
        rows = cursor.execute(
            """select a.namespace as run_namespace, a.application as run_application,
                      a.program_type as run_program_type, a.program as run_program, a.run_id as run_run_id,
                      l.relation, l.namespace, l.application, l.program_type, l.program, l.run_id
               from unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::text[])
                    as a(namespace, application, program_type, program, run_id)
               join lineage.programs p using (namespace, application, program_type, program)
               join lineage.runs r on r.program_key = p.program_key and r.run_id = a.run_id
               join lineage.run_parents l on l.run_key = r.run_key""", columns).fetchall()
    found: dict[RunRef, dict[str, RunRef]] = {}
    for row in rows:
        run = RunRef(ProgramRef(row["run_namespace"], row["run_application"], row["run_program_type"],
                                row["run_program"]), row["run_run_id"])
        found.setdefault(run, {})[row["relation"]] = _ref(row)
    return {run: RunLinks(parent=links.get("parent"), root=links.get("root")) for run, links in found.items()}


def linked_runs(conn: psycopg.Connection, run_keys: Sequence[int]) -> dict[int, RecordedLinks]:
    """The recorded parent and root of each of ``run_keys`` that has any."""
    with conn.cursor(row_factory=dict_row) as cursor:
        rows = cursor.execute(_LINKED, {"keys": list(run_keys)}).fetchall()
    found: dict[int, dict[str, LinkedRun]] = {}
    for row in rows:
        found.setdefault(row["run_key"], {})[row["relation"]] = LinkedRun(_ref(row), row["recorded"])
    return {key: RecordedLinks(parent=links.get("parent"), root=links.get("root")) for key, links in found.items()}


def run_detail(conn: psycopg.Connection, namespace: str, application: str, program_type: str, program: str,
               run_id: str) -> RunDetail | None:
    """The run with its parent, root, children (up to MAX_CHILDREN, oldest first), kept facets and
    warnings; None when the warehouse knows neither the run nor any run naming it as parent or root."""
    named = {"namespace": namespace, "application": application, "program_type": program_type,
             "program": program, "run_id": run_id}
    with conn.cursor(row_factory=class_row(RunRow)) as runs:
        run = runs.execute(_RUN_OF_PROGRAM, named).fetchone()
    with conn.cursor(row_factory=dict_row) as cursor:
        children = cursor.execute(
            """select p.namespace, p.application, p.program_type, p.program, r.run_id, true as recorded,
                      r.status, r.started_at, count(*) over () as total
               from lineage.run_parents l
               join lineage.runs r using (run_key) join lineage.programs p using (program_key)
               where (l.namespace, l.application, l.program_type, l.program, l.run_id, l.relation)
                     = (%(namespace)s, %(application)s, %(program_type)s, %(program)s, %(run_id)s, 'parent')
               order by r.run_at nulls last, p.program, r.run_id limit %(limit)s""",
            {**named, "limit": MAX_CHILDREN}).fetchall()
        if run is None and not children:
            return None
        linked = tuple(ChildRun(_ref(child), child["recorded"], child["status"], child["started_at"])
                       for child in children)
        child_count = children[0]["total"] if children else 0
        if run is None:
            return RunDetail(run_id=run_id, recorded=False, status=None, started_at=None, stopped_at=None,
                             children=linked, child_count=child_count)
        links = linked_runs(conn, [run.run_key]).get(run.run_key, RecordedLinks())
        facets: dict[str, dict[str, dict[str, Any]]] = {"run": {}, "job": {}}
        for row in cursor.execute("select facet_of, name, facet from lineage.run_facets where run_key = %s "
                                  "order by facet_of, name", (run.run_key,)).fetchall():
            facets[row["facet_of"]][row["name"]] = row["facet"]
        warnings = tuple(row["warning"] for row in cursor.execute(
            "select warning from lineage.run_warnings where run_key = %s order by first_seen_at, warning",
            (run.run_key,)).fetchall())
    return RunDetail(run_id=run_id, recorded=True, status=run.status, started_at=run.started_at,
                     stopped_at=run.stopped_at, parent=links.parent, root=links.root, run_facets=facets["run"],
                     job_facets=facets["job"], warnings=warnings, children=linked, child_count=child_count)

"""Run reads beyond accesses: a run with its parent, root, children, kept facets and warnings,
and the recorded links of many runs at once (for lineage roll-up).

A linked run is stored by its identity (program and run id, ``lineage.run_parents``), so a
parent is linked whether or not its own events ever arrived; ``recorded`` says whether the
warehouse has the run itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import dict_row

from warehouse.service.lineage_graph import ProgramRef
from warehouse.service.run_hierarchy import RunLinks, RunRef

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


def epoch_seconds(row: dict[str, Any]) -> dict[str, Any]:
    """Datetimes as epoch seconds, the API's time unit."""
    return {key: int(value.timestamp()) if isinstance(value, datetime) else value for key, value in row.items()}


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


def linked_runs(conn: psycopg.Connection, run_keys: Sequence[int]) -> dict[int, dict[str, dict[str, Any]]]:
    """For each of ``run_keys`` with links: ``{relation: {namespace, application, type, program,
    run_id, recorded}}``."""
    with conn.cursor(row_factory=dict_row) as cursor:
        rows = cursor.execute(_LINKED, {"keys": list(run_keys)}).fetchall()
    found: dict[int, dict[str, dict[str, Any]]] = {}
    for row in rows:
        found.setdefault(row["run_key"], {})[row["relation"]] = _shown(row)
    return found


def _shown(row: dict[str, Any]) -> dict[str, Any]:
    return {"namespace": row["namespace"], "application": row["application"], "type": row["program_type"],
            "program": row["program"], "run_id": row["run_id"], "recorded": row["recorded"]}


def run_detail(conn: psycopg.Connection, namespace: str, application: str, program_type: str, program: str,
               run_id: str) -> dict[str, Any] | None:
    """The run with its parent, root, children (up to MAX_CHILDREN, oldest first), kept facets and
    warnings; None when the warehouse knows neither the run nor any run naming it as parent or root."""
    named = {"namespace": namespace, "application": application, "program_type": program_type,
             "program": program, "run_id": run_id}
    with conn.cursor(row_factory=dict_row) as cursor:
        run = cursor.execute(_RUN_OF_PROGRAM, named).fetchone()
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
        detail: dict[str, Any] = {
            "run_id": run_id, "recorded": run is not None, "status": run and run["status"],
            "started_at": run and run["started_at"], "stopped_at": run and run["stopped_at"],
            "parent": None, "root": None, "facets": {"run": {}, "job": {}}, "warnings": [],
            "children": [epoch_seconds({**_shown(child), "status": child["status"],
                                        "started_at": child["started_at"]}) for child in children],
            "childCount": children[0]["total"] if children else 0,
        }
        if run is None:
            return epoch_seconds(detail)
        detail.update(linked_runs(conn, [run["run_key"]]).get(run["run_key"], {}))
        for row in cursor.execute("select facet_of, name, facet from lineage.run_facets where run_key = %s "
                                  "order by facet_of, name", (run["run_key"],)).fetchall():
            detail["facets"][row["facet_of"]][row["name"]] = row["facet"]
        detail["warnings"] = [row["warning"] for row in cursor.execute(
            "select warning from lineage.run_warnings where run_key = %s order by first_seen_at, warning",
            (run["run_key"],)).fetchall()]
    return epoch_seconds(detail)

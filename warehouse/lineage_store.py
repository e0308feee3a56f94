"""Lineage reads: the time-windowed walk, a run's accesses, a program's runs.

The walk is breadth-first and set-at-a-time: each level is two queries over the whole
frontier (never one query per node, as CDAP's scan-per-node BFS does).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import dict_row

from lineage.lineage_graph import Access, DataRef, ProgramRef


def in_window(started: str = "r.started_at") -> str:
    """SQL for seed 001's scan condition on run ``r``: it belongs to [%(start)s, %(end)s) when it
    started before end and had not stopped before start (a running run has no stop)."""
    return f"{started} < %(end)s and (r.stopped_at is null or r.stopped_at >= %(start)s)"


# A run whose start was never recorded is placed at its first access.
IN_WINDOW = in_window("coalesce(r.started_at, a.accessed_at)")

_ACCESS_ROWS = f"""
    select a.dataset_key, d.namespace as data_namespace, d.dataset_type, d.dataset,
           p.namespace as program_namespace, p.application, p.program_type, p.program,
           r.run_id, a.access, a.component
    from lineage.dataset_accesses a
    join lineage.datasets d using (dataset_key)
    join lineage.runs r using (run_key)
    join lineage.programs p using (program_key)
    where a.run_key = any(%(runs)s) and {IN_WINDOW}"""


def namespace_exists(conn: psycopg.Connection, namespace: str) -> bool:
    return conn.execute("select 1 from lineage.namespaces where namespace = %s", (namespace,)).fetchone() is not None


def walk_lineage(
    conn: psycopg.Connection, data: DataRef, start: datetime, end: datetime, levels: int
) -> list[Access]:
    """Every access on the walk from ``data`` up to ``levels`` levels, in the window."""
    found = conn.execute(
        "select dataset_key from lineage.datasets where namespace = %s and dataset_type = %s and dataset = %s",
        (data.namespace, data.type, data.name),
    ).fetchone()
    if found is None:
        return []
    window = {"start": start, "end": end}
    visited_data: set[int] = {found[0]}
    frontier: set[int] = {found[0]}
    visited_runs: set[int] = set()
    accesses: list[Access] = []
    for _ in range(levels):
        runs = {row[0] for row in conn.execute(
            f"""select distinct a.run_key from lineage.dataset_accesses a join lineage.runs r using (run_key)
                where a.dataset_key = any(%(frontier)s) and {IN_WINDOW}""",
            {**window, "frontier": list(frontier)},
        ).fetchall()} - visited_runs
        if not runs:
            break
        visited_runs |= runs
        with conn.cursor(row_factory=dict_row) as cursor:
            rows = cursor.execute(_ACCESS_ROWS, {**window, "runs": list(runs)}).fetchall()  # type: ignore[arg-type]
        accesses.extend(_access(row) for row in rows)
        frontier = {row["dataset_key"] for row in rows} - visited_data
        visited_data |= frontier
        if not frontier:
            break
    return accesses


def _access(row: dict[str, Any]) -> Access:
    return Access(
        data=DataRef(row["data_namespace"], row["dataset_type"], row["dataset"]),
        program=ProgramRef(row["program_namespace"], row["application"], row["program_type"], row["program"]),
        run_id=row["run_id"],
        access=row["access"],
        component=row["component"],
    )


def run_accesses(
    conn: psycopg.Connection, namespace: str, application: str, program_type: str, program: str, run_id: str
) -> dict[str, Any] | None:
    """A run with what it read and wrote (and when), or None when unknown."""
    with conn.cursor(row_factory=dict_row) as cursor:
        run = cursor.execute(
            """select run_key, run_id, status, started_at, stopped_at from lineage.run_details
               where namespace = %s and application = %s and program_type = %s and program = %s and run_id = %s""",
            (namespace, application, program_type, program, run_id),
        ).fetchone()
        if run is None:
            return None
        accesses = cursor.execute(
            """select d.namespace, d.dataset_type as type, d.dataset as name, a.access,
                      nullif(a.component, '') as component, a.accessed_at
               from lineage.dataset_accesses a join lineage.datasets d using (dataset_key)
               where a.run_key = %s order by a.accessed_at, d.dataset, a.access""",
            (run.pop("run_key"),),
        ).fetchall()
    return {**_times(run), "accesses": [_times(access) for access in accesses]}


def program_runs(
    conn: psycopg.Connection, namespace: str, application: str, program_type: str, program: str,
    start: datetime, end: datetime,
) -> list[dict[str, Any]] | None:
    """The program's runs in the window, newest first; None when the program is unknown."""
    with conn.cursor(row_factory=dict_row) as cursor:
        found = cursor.execute(
            """select program_key from lineage.programs
               where namespace = %s and application = %s and program_type = %s and program = %s""",
            (namespace, application, program_type, program),
        ).fetchone()
        if found is None:
            return None
        runs = cursor.execute(
            f"""select run_id, status, started_at, stopped_at from lineage.runs r
                where program_key = %(program)s and {in_window()}
                order by started_at desc, run_id""",  # type: ignore[arg-type]
            {"program": found["program_key"], "start": start, "end": end},
        ).fetchall()
    return [_times(run) for run in runs]


def _times(row: dict[str, Any]) -> dict[str, Any]:
    """Datetimes as epoch seconds, the API's time unit."""
    return {key: int(value.timestamp()) if isinstance(value, datetime) else value for key, value in row.items()}

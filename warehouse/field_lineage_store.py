"""Field lineage in the warehouse: what the field lineage job stores, and the API's queries
(``lineage.field_lineage_response`` walks and renders their rows).

Writes (one transaction per job run): operation sets by fingerprint, their per-field paths,
the source field -> destination field index for impact, and one row per run and destination.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import dict_row

from lineage.field_lineage_response import FieldKey
from warehouse import entity_keys
from warehouse.lineage_store import in_window

_FINGERPRINTED_COLUMNS = ("namespace", "event_id", "fingerprint", "destination_namespace", "destination_type",
                          "destination", "descriptions", "reason")


def fetch_pending(conn: psycopg.Connection, limit: int) -> list[tuple[str, str, str]]:
    """Up to ``limit`` compacted field operation records not processed yet: (namespace, event_id, payload)."""
    return conn.execute(
        """select namespace, event_id, payload::text from lineage.pending_events
           where kind = 'field_operations' and processed_at is null order by event_time limit %s""",
        (limit,),
    ).fetchall()


def known_fingerprints(conn: psycopg.Connection) -> list[str]:
    return [row[0] for row in conn.execute("select fingerprint from lineage.field_operation_sets").fetchall()]


def store_results(conn: psycopg.Connection, fingerprinted: Sequence[dict[str, Any]],
                  new_sets: Sequence[dict[str, Any]]) -> dict[str, int]:
    """Store one job run's results in the open transaction; returns counts by kind."""
    conn.execute(f"""create temp table field_records ({', '.join(f'{c} text' for c in _FINGERPRINTED_COLUMNS)})
                     on commit drop""")
    with conn.cursor().copy(f"copy field_records ({', '.join(_FINGERPRINTED_COLUMNS)}) from stdin") as copy:
        for row in fingerprinted:
            copy.write_row([row.get(column) for column in _FINGERPRINTED_COLUMNS])
    conn.execute("create temp table new_sets (fingerprint text, operations jsonb, paths jsonb) on commit drop")
    with conn.cursor().copy("copy new_sets from stdin") as copy:
        for row in new_sets:
            copy.write_row([row["fingerprint"], row["operations"], row["paths"]])
    # Statistics for the two temp tables: without them the planner guesses a few rows and
    # picks nested loops that take minutes at 20k records (measured: 3.7 min for one chunk).
    conn.execute("analyze field_records")
    conn.execute("analyze new_sets")
    counts = {}
    conn.execute("""insert into lineage.datasets (namespace, dataset_type, dataset)
                    select distinct destination_namespace, destination_type, destination from field_records
                    where reason is null on conflict do nothing""")
    counts["sets_added"] = len(new_sets)
    conn.execute("""
        insert into lineage.field_operation_sets as s (fingerprint, destination_namespace, destination_type,
            destination, operations, descriptions, described_at)
        select distinct on (f.fingerprint) f.fingerprint, f.destination_namespace, f.destination_type, f.destination,
               coalesce(n.operations, '[]'), f.descriptions::jsonb, e.event_time
        from field_records f
        join lineage.pending_events e on e.namespace = f.namespace and e.event_id = f.event_id
        left join new_sets n on n.fingerprint = f.fingerprint
        where f.reason is null
        order by f.fingerprint, e.event_time desc
        on conflict (fingerprint) do update set descriptions = excluded.descriptions,
                                                described_at = excluded.described_at
        where excluded.described_at > s.described_at""")
    counts["paths_added"] = conn.execute("""
        insert into lineage.field_paths (set_fingerprint, field, path_fingerprint, path)
        select n.fingerprint, p.path->>'field', p.path->>'fingerprint', p.path
        from new_sets n cross join lateral jsonb_array_elements(n.paths) as p(path)
        on conflict do nothing""").rowcount
    conn.execute("""
        insert into lineage.field_path_sources (source_namespace, source_type, source, source_field,
                                                set_fingerprint, field)
        select distinct s.source->>'namespace', s.source->>'type', s.source->>'name', s.source->>'field',
               n.fingerprint, p.path->>'field'
        from new_sets n cross join lateral jsonb_array_elements(n.paths) as p(path)
        cross join lateral jsonb_array_elements(p.path->'sources') as s(source)
        on conflict do nothing""")
    conn.execute("""insert into lineage.datasets (namespace, dataset_type, dataset)
                    select distinct s.source->>'namespace', s.source->>'type', s.source->>'name'
                    from new_sets n cross join lateral jsonb_array_elements(n.paths) as p(path)
                    cross join lateral jsonb_array_elements(p.path->'sources') as s(source)
                    on conflict do nothing""")
    entity_keys.fill_missing(conn)  # keys of the datasets just inserted
    counts["runs_recorded"] = conn.execute("""
        insert into lineage.field_lineage_runs (dataset_key, run_key, set_fingerprint, recorded_at)
        select d.dataset_key, r.run_key, f.fingerprint, min(e.event_time)
        from field_records f
        join lineage.pending_events e on e.namespace = f.namespace and e.event_id = f.event_id
        join lineage.programs p on p.namespace = e.namespace and p.application = e.application
                               and p.program_type = e.program_type and p.program = e.program
        join lineage.runs r on r.namespace = e.namespace and r.program_key = p.program_key and r.run_id = e.run_id
        join lineage.datasets d on d.namespace = f.destination_namespace and d.dataset_type = f.destination_type
                               and d.dataset = f.destination
        where f.reason is null
        group by d.dataset_key, r.run_key, f.fingerprint
        on conflict do nothing""").rowcount
    counts["quarantined"] = conn.execute("""
        insert into lineage.quarantine (batch_id, source_file, line_number, reason, raw_text)
        select 'field-lineage', 'pending_events/' || f.namespace || '/' || f.event_id, 1, f.reason, e.payload::text
        from field_records f
        join lineage.pending_events e on e.namespace = f.namespace and e.event_id = f.event_id
        where f.reason is not null
        on conflict do nothing""").rowcount
    conn.execute("""update lineage.pending_events e set processed_at = now() from field_records f
                    where e.namespace = f.namespace and e.event_id = f.event_id""")
    return counts


def dataset_exists(conn: psycopg.Connection, namespace: str, dataset: str) -> bool:
    return conn.execute("select 1 from lineage.datasets where namespace = %s and dataset = %s",
                        (namespace, dataset)).fetchone() is not None


def field_known(conn: psycopg.Connection, namespace: str, dataset: str, field: str) -> bool:
    return conn.execute(
        """select 1 from lineage.field_operation_sets s join lineage.field_paths p on p.set_fingerprint = s.fingerprint
           where s.destination_namespace = %s and s.destination = %s and p.field = %s limit 1""",
        (namespace, dataset, field)).fetchone() is not None


# For a set of fields: per (field, operation set), the runs that recorded it in the window; then
# the set's path for that field. Runs are aggregated before the (large) path documents join,
# and the core merges the sets that share a path fingerprint.
_PATHS = f"""
    with keys as (
        select * from unnest(%(namespaces)s::text[], %(datasets)s::text[], %(fields)s::text[])
            as k(namespace, dataset, field)
    ),
    per_set as (
        select k.namespace, k.dataset, k.field, f.set_fingerprint, array_agg(r.run_id) as runs,
               min(r.started_at) as first_seen, max(r.started_at) as last_seen
        from keys k
        join lineage.datasets d on d.namespace = k.namespace and d.dataset = k.dataset
        join lineage.field_lineage_runs f on f.dataset_key = d.dataset_key
        join lineage.runs r on r.run_key = f.run_key
        where {in_window("r.started_at", "r.stopped_at")}
          and exists (select 1 from lineage.field_paths p
                      where p.set_fingerprint = f.set_fingerprint and p.field = k.field)
        group by k.namespace, k.dataset, k.field, f.set_fingerprint
    )
    select ps.namespace, ps.dataset, ps.field, p.path_fingerprint, p.path, s.descriptions, s.described_at,
           ps.runs, ps.first_seen, ps.last_seen
    from per_set ps
    join lineage.field_paths p on p.set_fingerprint = ps.set_fingerprint and p.field = ps.field
    join lineage.field_operation_sets s on s.fingerprint = ps.set_fingerprint
    order by ps.namespace, ps.dataset, ps.field, ps.first_seen, p.path_fingerprint"""

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
                    and {in_window("r.started_at", "r.stopped_at")})
    order by 1, 2, 3"""


class FieldLineageQueries:
    """Field lineage's queries (``lineage.field_lineage_response.FieldLineageQueries``) for the
    window [start, end): one query per call, over the whole set of fields it is given."""

    def __init__(self, conn: psycopg.Connection, start: datetime, end: datetime) -> None:
        self.conn, self.start, self.end = conn, start, end

    def paths(self, keys: Sequence[FieldKey]) -> list[dict[str, Any]]:
        """Per field in ``keys`` and operation set, the set's path with every run that recorded
        it in the window (the core merges the sets that share a path)."""
        with self.conn.cursor(row_factory=dict_row) as cursor:
            return cursor.execute(_PATHS, self._arrays(keys)).fetchall()

    def fed_by(self, keys: Sequence[FieldKey]) -> list[FieldKey]:
        """Destination fields whose paths start at any source field in ``keys``, run in the window."""
        return [FieldKey(*row) for row in self.conn.execute(_FED_BY, self._arrays(keys)).fetchall()]

    def _arrays(self, keys: Sequence[FieldKey]) -> dict[str, Any]:
        return {"namespaces": [k.namespace for k in keys], "datasets": [k.dataset for k in keys],
                "fields": [k.field for k in keys], "start": self.start, "end": self.end}


def dataset_fields(conn: psycopg.Connection, namespace: str, dataset: str, start: datetime, end: datetime,
                   prefix: str) -> list[dict[str, Any]]:
    """Every field ever written with lineage to the dataset, and whether it has lineage in the window."""
    with conn.cursor(row_factory=dict_row) as cursor:
        return cursor.execute(
            f"""select p.field as name, bool_or({in_window("r.started_at", "r.stopped_at")}) is true as has_lineage
                from lineage.field_operation_sets s
                join lineage.field_paths p on p.set_fingerprint = s.fingerprint
                left join lineage.field_lineage_runs f on f.set_fingerprint = s.fingerprint
                left join lineage.runs r on r.run_key = f.run_key
                where s.destination_namespace = %(namespace)s and s.destination = %(dataset)s
                  and starts_with(p.field, %(prefix)s)
                group by p.field order by p.field""",
            {"namespace": namespace, "dataset": dataset, "prefix": prefix, "start": start, "end": end}).fetchall()

"""Stored entity keys and node ids: the core renders each row's entity key, grant key and node
id once, and the warehouse keeps them with the row, so SQL, dbt and the pages read them instead
of re-deriving the rules (``lineage.model.metadata_entity`` renders keys, ``warehouse.service.authorization``
picks grant keys, ``lineage.ids`` renders ids).

Bulk merges insert datasets and programs set-at-a-time in SQL; ``fill_missing`` then renders
the keys and ids of the rows just inserted, in the same transaction. Metadata rows get their
grant key when written (``warehouse.db.metadata_store``); ``backfill`` fills rows written before
migration 0011 once, with that migration, and ``backfill_ids`` the ids of rows written before
migration 0021.
"""

from __future__ import annotations

from collections.abc import Sequence

import orjson
import psycopg

from lineage.ids import DataRef, ProgramRef
from lineage.model.metadata_entity import application_entity, dataset_entity, entity, program_entity
from warehouse.service.authorization import grant_key


def dataset_keys(conn: psycopg.Connection, refs: Sequence[DataRef]) -> dict[DataRef, int]:
    """The surrogate keys of the datasets ``refs`` that exist."""
    if not refs:
        return {}
    rows = conn.execute("""
        select d.dataset_key, d.namespace, d.dataset_type, d.dataset
        from unnest(%s::text[], %s::text[], %s::text[]) as k(namespace, dataset_type, dataset)
        join lineage.datasets d using (namespace, dataset_type, dataset)""",
                        ([r.namespace for r in refs], [r.type for r in refs], [r.name for r in refs])).fetchall()
    return {DataRef(namespace, dataset_type, name): key for key, namespace, dataset_type, name in rows}


def dataset_key(conn: psycopg.Connection, ref: DataRef) -> int | None:
    """The surrogate key of dataset ``ref``, None when it does not exist."""
    row = conn.execute("select dataset_key from lineage.datasets where (namespace, dataset_type, dataset) = "
                       "(%s, %s, %s)", (ref.namespace, ref.type, ref.name)).fetchone()
    return None if row is None else int(row[0])


def _details(parts: tuple[tuple[str, str], ...]) -> str:
    return orjson.dumps([{"key": key, "value": value} for key, value in parts]).decode()


def fill_missing(conn: psycopg.Connection) -> int:
    """Render and store the keys and ids of datasets and programs that have none yet; returns how
    many rows got keys."""
    with conn.transaction():  # a savepoint inside the caller's transaction
        filled = _fill_missing(conn)
        _fill_ids(conn)
        return filled


def _fill_missing(conn: psycopg.Connection) -> int:
    datasets = conn.execute("""select dataset_key, namespace, dataset_type, dataset from lineage.datasets
                               where entity_key is null""").fetchall()
    programs = conn.execute("""select program_key, namespace, application, program_type, program
                               from lineage.programs where entity_key is null""").fetchall()
    dataset_rows = []
    for key, namespace, dataset_type, name in datasets:
        subject = dataset_entity(namespace, dataset_type, name)
        dataset_rows.append((key, subject.render(), _details(subject.parts)))
    _set_columns(conn, "datasets", "dataset_key", [("entity_key", "text"), ("entity", "jsonb")], dataset_rows)
    program_rows = []
    for key, namespace, application, program_type, name in programs:
        subject = program_entity(namespace, application, program_type, name)
        app = application_entity(namespace, application)
        program_rows.append((key, subject.render(), _details(subject.parts), app.render(), _details(app.parts)))
    _set_columns(conn, "programs", "program_key", [("entity_key", "text"), ("entity", "jsonb"),
                                                   ("application_key", "text"), ("application_entity", "jsonb")],
                 program_rows)
    return len(datasets) + len(programs)


def _fill_ids(conn: psycopg.Connection) -> None:
    """Store the node ids (``lineage.ids``) of datasets and programs that have none yet."""
    datasets = conn.execute("""select dataset_key, namespace, dataset_type, dataset from lineage.datasets
                               where data_id is null""").fetchall()
    programs = conn.execute("""select program_key, namespace, application, program_type, program
                               from lineage.programs where program_id is null""").fetchall()
    _set_columns(conn, "datasets", "dataset_key", [("data_id", "text")],
                 [(key, DataRef(namespace, dataset_type, name).id) for key, namespace, dataset_type, name in datasets])
    program_refs = [(key, ProgramRef(namespace, application, program_type, name))
                    for key, namespace, application, program_type, name in programs]
    _set_columns(conn, "programs", "program_key", [("program_id", "text"), ("run_id_prefix", "text")],
                 [(key, program.id, program.run_id_prefix) for key, program in program_refs])


def _set_columns(conn: psycopg.Connection, table: str, key: str, columns: list[tuple[str, str]],
                 rows: Sequence[tuple[object, ...]]) -> None:
    """Set ``columns`` (name, SQL type) of ``lineage.<table>`` from ``rows`` (its ``key``, then the
    columns' values): one COPY into a temporary table, one update. ``table``, ``key`` and the
    columns are this module's constants, never input."""
    if not rows:
        return
    staged = f"{table}_set_columns"
    conn.execute(f"create temp table {staged} ({key} bigint, "
                 f"{', '.join(f'{name} {kind}' for name, kind in columns)}) on commit drop")
    with conn.cursor().copy(f"copy {staged} from stdin") as copy:
        for row in rows:
            copy.write_row(row)
    conn.execute(f"update lineage.{table} t set {', '.join(f'{name} = s.{name}' for name, _ in columns)} "
                 f"from {staged} s where t.{key} = s.{key}")
    conn.execute(f"drop table {staged}")


def backfill_ids(conn: psycopg.Connection) -> None:
    """The node ids of every dataset and program written without them (run with migration 0021)."""
    with conn.transaction():
        _fill_ids(conn)


def backfill(conn: psycopg.Connection) -> None:
    """Keys of every row written without them: datasets and programs, and the grant keys of
    metadata rows (run with migration 0011 for rows written before it, and by loaders that
    bulk-insert metadata in SQL)."""
    with conn.transaction():
        _fill_missing(conn)
        _fill_grant_keys(conn)


def _fill_grant_keys(conn: psycopg.Connection) -> None:
    entities = conn.execute("""select distinct entity_key, entity_type, entity from lineage.metadata
                               where grant_key is null""").fetchall()
    conn.execute("create temp table metadata_grant_keys (entity_key text, grant_key text) on commit drop")
    with conn.cursor().copy("copy metadata_grant_keys from stdin") as copy:
        for key, entity_type, details in entities:
            found = grant_key(entity([(part["key"], part["value"]) for part in details], entity_type))
            if found is not None:
                copy.write_row((key, found))
    conn.execute("""update lineage.metadata m set grant_key = k.grant_key from metadata_grant_keys k
                    where m.entity_key = k.entity_key""")
    conn.execute("drop table metadata_grant_keys")

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

import orjson
import psycopg

from lineage.ids import DataRef, ProgramRef
from lineage.model.metadata_entity import application_entity, dataset_entity, entity, program_entity
from warehouse.service.authorization import grant_key


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
    if datasets:
        conn.execute("create temp table dataset_keys (dataset_key bigint, entity_key text, entity jsonb) "
                     "on commit drop")
        with conn.cursor().copy("copy dataset_keys from stdin") as copy:
            for key, namespace, dataset_type, name in datasets:
                subject = dataset_entity(namespace, dataset_type, name)
                copy.write_row((key, subject.render(), _details(subject.parts)))
        conn.execute("""update lineage.datasets d set entity_key = k.entity_key, entity = k.entity
                        from dataset_keys k where d.dataset_key = k.dataset_key""")
        conn.execute("drop table dataset_keys")
    if programs:
        conn.execute("create temp table program_keys (program_key bigint, entity_key text, entity jsonb, "
                     "application_key text, application_entity jsonb) on commit drop")
        with conn.cursor().copy("copy program_keys from stdin") as copy:
            for key, namespace, application, program_type, name in programs:
                subject = program_entity(namespace, application, program_type, name)
                app = application_entity(namespace, application)
                copy.write_row((key, subject.render(), _details(subject.parts), app.render(), _details(app.parts)))
        conn.execute("""update lineage.programs p set entity_key = k.entity_key, entity = k.entity,
                               application_key = k.application_key, application_entity = k.application_entity
                        from program_keys k where p.program_key = k.program_key""")
        conn.execute("drop table program_keys")
    return len(datasets) + len(programs)


def _fill_ids(conn: psycopg.Connection) -> None:
    """Store the node ids (``lineage.ids``) of datasets and programs that have none yet."""
    datasets = conn.execute("""select dataset_key, namespace, dataset_type, dataset from lineage.datasets
                               where data_id is null""").fetchall()
    programs = conn.execute("""select program_key, namespace, application, program_type, program
                               from lineage.programs where program_id is null""").fetchall()
    if datasets:
        conn.execute("create temp table dataset_ids (dataset_key bigint, data_id text) on commit drop")
        with conn.cursor().copy("copy dataset_ids from stdin") as copy:
            for key, namespace, dataset_type, name in datasets:
                copy.write_row((key, DataRef(namespace, dataset_type, name).id))
        conn.execute("""update lineage.datasets d set data_id = i.data_id
                        from dataset_ids i where d.dataset_key = i.dataset_key""")
        conn.execute("drop table dataset_ids")
    if programs:
        conn.execute("create temp table program_ids (program_key bigint, program_id text, run_id_prefix text) "
                     "on commit drop")
        with conn.cursor().copy("copy program_ids from stdin") as copy:
            for key, namespace, application, program_type, name in programs:
                program = ProgramRef(namespace, application, program_type, name)
                copy.write_row((key, program.id, program.run_id_prefix))
        conn.execute("""update lineage.programs p set program_id = i.program_id, run_id_prefix = i.run_id_prefix
                        from program_ids i where p.program_key = i.program_key""")
        conn.execute("drop table program_ids")


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

"""How the field lineage job's executors share a chunk of pending records, and how its staging
tables merge (``warehouse.db.field_lineage_staging``), on real PostgreSQL without Spark."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson
import psycopg
import pytest

from lineage.model.column_lineage import field_edges
from lineage.model.field_paths import DERIVATION, field_paths, normalize
from warehouse.db.connection import connect
from warehouse.db.field_lineage_staging import (
    STAGING_SCHEMA,
    backfill_edges,
    chunk_ranges,
    create_staging,
    read_pending,
    staging_columns,
    store_results,
)
from warehouse.db.migrate import MIGRATIONS_DIR
from warehouse.service.field_flows import source_field_flows

RECORD = {"destination": {"name": "orders"}, "operations": [
    {"name": "read", "inputs": [{"source": {"name": "raw"}}], "outputs": ["amount"]},
    {"type": "write", "name": "write", "inputs": [{"field": "amount"}]}]}


@pytest.fixture
def conn(warehouse_db: str) -> Iterator[psycopg.Connection]:
    with connect(warehouse_db) as connection:
        yield connection


def _add_pending(conn: psycopg.Connection, count: int, same_time: bool = False) -> None:
    for number in range(count):
        minute = 0 if same_time else number
        conn.execute("""insert into lineage.pending_events (namespace, event_id, kind, event_time, application,
                                                            program_type, program, run_id, payload, batch_id)
                        values ('default', %s, 'field_operations', %s, 'app', 'spark', 'load', %s, %s, 'b1')""",
                     (f"event-{number:03d}", f"2026-11-21T05:{minute:02d}:00.123456Z", f"run-{number}",
                      orjson.dumps(RECORD).decode()))
    conn.commit()


def _read_all(conn: psycopg.Connection, limit: int, parts: int) -> list[list[str]]:
    return [[row[1] for rows in read_pending(conn, part, 3) for row in rows]
            for part in chunk_ranges(conn, limit, parts)]


@pytest.mark.parametrize("same_time", [False, True])
def test_chunk_ranges_split_the_next_records_into_disjoint_ranges(conn: psycopg.Connection, same_time: bool) -> None:
    _add_pending(conn, 10, same_time)
    ranges = _read_all(conn, 7, 3)
    assert [len(ids) for ids in ranges] == [3, 2, 2]
    assert [event_id for ids in ranges for event_id in ids] == [f"event-{n:03d}" for n in range(7)]
    conn.execute("update lineage.pending_events set processed_at = now() where event_id < 'event-007'")
    assert _read_all(conn, 7, 3) == [["event-007"], ["event-008"], ["event-009"]]
    conn.execute("update lineage.pending_events set processed_at = now()")
    assert chunk_ranges(conn, 7, 3) == []


def _staged_rows(event_ids: list[str]) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    record = normalize(RECORD, "default")
    records = [("default", event_id, record.fingerprint, "default", "dataset", "orders",
                orjson.dumps(record.descriptions()).decode(), None) for event_id in event_ids]
    paths = orjson.dumps([path.to_dict() for path in field_paths(record)]).decode()
    flows = orjson.dumps([flow.to_dict() for flow in source_field_flows(record)]).decode()
    operations = orjson.dumps([op.identity() for op in record.operations]).decode()
    edges = orjson.dumps(field_edges(record)).decode()
    return records, [(record.fingerprint, operations, paths, flows, "[]", edges)]


def test_store_results_merges_rows_a_retried_task_staged_twice(conn: psycopg.Connection) -> None:
    _add_pending(conn, 2)
    staging = create_staging(conn)
    records, sets = _staged_rows(["event-000", "event-001"])
    for table, rows, kind in ((staging.records, records, "records"), (staging.sets, sets, "sets")):
        with conn.cursor().copy(f"copy {table} ({', '.join(staging_columns(kind))}) from stdin") as copy:
            for row in [*rows, *rows]:  # the second attempt of a task whose first one committed
                copy.write_row(row)
    counts = store_results(conn, staging)
    conn.commit()

    assert counts["sets_added"] == 1
    assert conn.execute("select count(*), min(field) from lineage.field_paths").fetchone() == (1, "amount")
    assert conn.execute("select count(*) from lineage.field_edges").fetchone() == (len(field_edges(normalize(
        RECORD, "default"))),)  # the set's composed column lineage, once
    assert conn.execute("select count(*) from lineage.pending_events where processed_at is null").fetchone() == (0,)
    assert conn.execute("select count(*) from pg_tables where schemaname = %s", (STAGING_SCHEMA,)).fetchone() == (0,)


def test_sets_stored_before_field_edges_get_them_from_their_stored_operations(conn: psycopg.Connection) -> None:
    """An upgraded warehouse: a set derived by derivation 2 (no edges) whose records have expired."""
    record = normalize(RECORD, "default")
    conn.execute(
        """insert into lineage.field_operation_sets (fingerprint, destination_namespace, destination_type,
               destination, operations, descriptions, described_at, derived_with)
           values (%s, 'default', 'dataset', 'orders', %s, '{}', now(), 2)""",
        (record.fingerprint, orjson.dumps([op.identity() for op in record.operations]).decode()))
    assert backfill_edges(conn) == 1
    stored = conn.execute("select source, source_field, field, kind, subtype, masking, operations "
                          "from lineage.field_edges order by 1, 2, 3").fetchall()
    assert stored == [(edge["name"], edge["field"], edge["to"], edge["kind"], edge["subtype"], edge["masking"],
                       edge["operations"]) for edge in field_edges(record)] != []
    assert conn.execute("select derived_with from lineage.field_operation_sets").fetchone() == (DERIVATION,)
    assert backfill_edges(conn) == 0  # once


DESCRIBED_IDENTITY = {"destination": {"name": "out"}, "operations": [  # as the mapping makes of an exported facet
    {"name": "read", "inputs": [{"source": {"name": "src"}}], "outputs": ["a"]},
    {"id": "field:b", "type": "transform", "name": "identity", "outputs": ["b"],
     "inputs": [{"field": "a", "transformation": {"type": "DIRECT", "subtype": "IDENTITY", "description": "parse"}}]},
    {"type": "write", "name": "write", "inputs": [{"field": "b"}]}]}


def test_migration_0033_derives_again_the_sets_naming_a_described_identity_step(conn: psycopg.Connection) -> None:
    """An upgraded warehouse: a set holding an IDENTITY step with a description, derived (by
    derivation 3) with edges that do not name it, and a set without one."""
    for record in (DESCRIBED_IDENTITY, RECORD):
        checked = normalize(record, "default")
        conn.execute(
            """insert into lineage.field_operation_sets (fingerprint, destination_namespace, destination_type,
                   destination, operations, descriptions, described_at, derived_with)
               values (%s, 'default', 'dataset', %s, %s, '{}', now(), 3)""",
            (checked.fingerprint, record["destination"]["name"],
             orjson.dumps([op.identity() for op in checked.operations]).decode()))
    described = normalize(DESCRIBED_IDENTITY, "default").fingerprint
    conn.execute("""insert into lineage.field_edges (set_fingerprint, source_namespace, source_type, source,
                        source_field, field, kind, subtype, masking, operations, field_key, field_details, dataset_key)
                    values (%s, 'default', 'dataset', 'src', 'a', 'b', 'DIRECT', 'IDENTITY', false, '{}', 'k', '[]',
                            'd')""", (described,))
    conn.execute((MIGRATIONS_DIR / "0033_identity_steps_named.sql").read_text())
    assert dict(conn.execute("select destination, derived_with from lineage.field_operation_sets").fetchall()) == {
        "out": 2, "orders": DERIVATION}
    assert backfill_edges(conn) == 1
    assert conn.execute("select source_field, field, subtype, operations from lineage.field_edges "
                        "where set_fingerprint = %s", (described,)).fetchall() == [("a", "b", "IDENTITY", ["parse"])]


WRITE_LESS = {"destination": {"name": "contacts"}, "destination_fields": ["email_out"], "operations": [  # CDAP's shape
    {"name": "read", "inputs": [{"source": {"name": "crm"}}], "outputs": ["email"]},
    {"name": "lower", "inputs": [{"field": "email"}], "outputs": ["email_out"]}]}


def test_migration_0037_gives_write_less_sets_the_edges_the_0031_backfill_lost(conn: psycopg.Connection) -> None:
    """An upgraded warehouse: a set of a record without writes (its destination fields listed),
    with its path stored and no edges (what migration 0031's backfill left), and one with edges."""
    checked = normalize(WRITE_LESS, "default")
    kept = normalize(RECORD, "default")
    for record, name in ((checked, "contacts"), (kept, "orders")):
        conn.execute(
            """insert into lineage.field_operation_sets (fingerprint, destination_namespace, destination_type,
                   destination, operations, descriptions, described_at, derived_with)
               values (%s, 'default', 'dataset', %s, %s, '{}', now(), %s)""",
            (record.fingerprint, name, orjson.dumps([op.identity() for op in record.operations]).decode(),
             DERIVATION))
        for path in field_paths(record):
            document = conn.execute("""insert into lineage.field_path_documents (document_key, path)
                                       select sha256(convert_to(%(path)s::jsonb::text, 'UTF8')), %(path)s::jsonb
                                       on conflict do nothing returning document_key""",
                                    {"path": orjson.dumps(path.to_dict()).decode()}).fetchone()
            assert document is not None
            conn.execute("""insert into lineage.field_path_rows (set_fingerprint, field, path_fingerprint, document_key)
                            values (%s, %s, %s, %s)""", (record.fingerprint, path.field, path.fingerprint, document[0]))
    conn.execute("""insert into lineage.field_edges (set_fingerprint, source_namespace, source_type, source,
                        source_field, field, kind, subtype, masking, operations, field_key, field_details, dataset_key)
                    values (%s, 'default', 'dataset', 'raw', 'amount', 'amount', 'DIRECT', 'IDENTITY', false, '{}',
                            'k', '[]', 'd')""", (kept.fingerprint,))
    conn.execute((MIGRATIONS_DIR / "0037_write_less_sets_edges.sql").read_text())
    assert dict(conn.execute("select destination, derived_with from lineage.field_operation_sets").fetchall()) == {
        "contacts": 2, "orders": DERIVATION}
    assert backfill_edges(conn) == 1
    assert conn.execute("select source, source_field, field, operations from lineage.field_edges "
                        "where set_fingerprint = %s", (checked.fingerprint,)).fetchall() == [
        (edge["name"], edge["field"], edge["to"], edge["operations"]) for edge in field_edges(checked)] != []

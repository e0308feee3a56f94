"""Each distinct field path and source flow is stored once (migration 0044, issue 30 item 8): the
rows of two operation sets holding the same path name one document; the views read as the tables
did; the namespace cleanup removes the documents no row names; a warehouse derived before the
migration reads the same after it. On real PostgreSQL, through the compaction and the field
lineage job (in process)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import psycopg
import pytest

from lineage.settings import Settings
from spark_jobs.compaction.job import run_compaction
from spark_jobs.field_lineage.job import run_field_lineage
from tests.airflow_support import libpq
from tests.factories import write_log
from tests.plugin.test_field_lineage_api import CHANGED_OPERATIONS, END, SEED_OPERATIONS, profiles, run
from tests.warehouse.test_field_lineage_staging import _add_pending, _staged_rows
from tests.warehouse.test_openlineage_kept_events import migrated_before
from warehouse.db.field_lineage_staging import create_staging, staging_columns, store_results
from warehouse.db.migrate import apply_migrations
from warehouse.db.namespace_store import delete_namespace
from warehouse.pipeline import namespace_cleanup
from warehouse.pipeline.namespace_cleanup import clean_pending

# The same pipeline before and after a change of one operation: two operation sets whose paths
# are the same but for the changed fields.
LOG = [*run("ETLMapReduce", "r1", 1, [profiles(SEED_OPERATIONS)]),
       *run("ETLMapReduce", "r3", 3, [profiles(CHANGED_OPERATIONS)])]
PATHS = "select set_fingerprint, field, path_fingerprint, path::text from lineage.field_paths order by 1, 2"
FLOWS = ("select source_namespace, source_type, source, source_field, set_fingerprint, flow_fingerprint, flow::text "
         "from lineage.field_source_flows order by 1, 2, 3, 4, 5")


def derived(url: str, log_root: Path) -> None:
    write_log(log_root, LOG)
    settings = Settings.from_env({**os.environ, "LINEAGE_LOG_ROOT": str(log_root), "LINEAGE_DATABASE_URL": url,
                                  "LINEAGE_AUTO_CREATE_NAMESPACES": "true"})
    run_compaction(None, interval_end=END, settings=settings)
    run_field_lineage(None, settings)


def counts(conn: psycopg.Connection[Any]) -> dict[str, int]:
    return {table: int(conn.execute(f"select count(*) from lineage.{table}").fetchone()[0])  # type: ignore[index]
            for table in ("field_path_rows", "field_path_documents", "field_source_flow_rows", "field_flow_documents")}


def test_a_path_two_sets_hold_is_one_document_and_the_views_read_it_for_both(warehouse_db: str,
                                                                                tmp_path: Path) -> None:
    derived(warehouse_db, tmp_path / "raw-events")
    with psycopg.connect(libpq(warehouse_db)) as conn:
        stored = counts(conn)
        sets = conn.execute("select count(*) from lineage.field_operation_sets").fetchone()
        shared = conn.execute("""select count(*) from (select path_fingerprint from lineage.field_paths
                                 group by 1 having count(*) > 1) s""").fetchone()
        distinct = conn.execute("""select count(distinct path::text), count(distinct path_fingerprint)
                                   from lineage.field_paths""").fetchone()
        keyed = conn.execute("""select bool_and(document_key = sha256(convert_to(path::text, 'UTF8')))
                                from lineage.field_path_documents""").fetchone()
        paths = conn.execute(PATHS).fetchall()
    assert sets == (2,) and shared is not None and shared[0] > 0
    assert stored["field_path_documents"] == distinct[0] == distinct[1] < stored["field_path_rows"] == len(paths)  # type: ignore[index]
    assert stored["field_flow_documents"] < stored["field_source_flow_rows"]
    assert keyed == (True,)
    assert all(path is not None for *_, path in paths)


def test_the_cleanup_removes_the_documents_no_row_names_and_keeps_the_shared_ones(
        warehouse_db: str, tmp_path: Path) -> None:
    derived(warehouse_db, tmp_path / "raw-events")
    with psycopg.connect(libpq(warehouse_db)) as conn:
        conn.execute("""insert into lineage.field_path_documents (document_key, path)
                        values (sha256('elsewhere'), '{"field": "elsewhere"}')""")  # no removed set names it
        conn.commit()
        before = counts(conn)
        delete_namespace(conn, "myns", "admin")
        conn.commit()
    [summary] = clean_pending(warehouse_db)
    with psycopg.connect(libpq(warehouse_db)) as conn:
        after = counts(conn)
    assert after == {**dict.fromkeys(after, 0), "field_path_documents": 1}  # only the one no removed set named
    assert summary.removed["field_paths"] == before["field_path_rows"]
    assert summary.removed["field_path_documents"] == before["field_path_documents"] - 1
    assert summary.removed["field_flow_documents"] == before["field_flow_documents"]


def test_a_warehouse_derived_before_the_migration_reads_the_same_after_it(
        warehouse_db: str, empty_db: str, tmp_path: Path) -> None:
    """The paths and flows a warehouse derived, stored as before 0044 (whole, in the tables),
    read the same through the views after it; a view dbt built over a table goes with it."""
    derived(warehouse_db, tmp_path / "raw-events")
    with psycopg.connect(libpq(warehouse_db)) as conn:
        paths, flows = conn.execute(PATHS).fetchall(), conn.execute(FLOWS).fetchall()
    (tmp_path / "migrations").mkdir()
    migrated_before(empty_db, tmp_path / "migrations", "0044")
    with psycopg.connect(libpq(empty_db)) as conn:
        with conn.cursor() as cursor:
            cursor.executemany("""insert into lineage.field_operation_sets (fingerprint, destination_namespace,
                                      destination_type, destination, operations, descriptions, described_at)
                                  values (%s, 'myns', 'dataset', 'mytableds', '[]', '{}', now())
                                  on conflict do nothing""", [(row[0],) for row in paths])
            cursor.executemany("insert into lineage.field_paths values (%s, %s, %s, %s)", paths)
            cursor.executemany("""insert into lineage.field_source_flows (source_namespace, source_type, source,
                                      source_field, set_fingerprint, flow_fingerprint, flow)
                                  values (%s, %s, %s, %s, %s, %s, %s)""", flows)
        conn.execute("create schema staging_of_dbt")  # a view dbt built over the table, and others over it
        conn.execute("create view staging_of_dbt.stg_paths as select * from lineage.field_paths")
        conn.execute("""create view staging_of_dbt.both as select p.field from staging_of_dbt.stg_paths p
                        join lineage.field_source_flows f using (set_fingerprint)""")
        conn.execute("create materialized view staging_of_dbt.flows as select * from lineage.field_source_flows")
        conn.commit()
    assert [m.version for m in apply_migrations(empty_db)][:1] == [44]
    with psycopg.connect(libpq(empty_db)) as conn:
        assert conn.execute(PATHS).fetchall() == paths and paths
        assert conn.execute(FLOWS).fetchall() == flows and flows
        stored = counts(conn)
        gone = conn.execute("""select to_regclass('staging_of_dbt.stg_paths'), to_regclass('staging_of_dbt.both'),
                                      to_regclass('staging_of_dbt.flows')""").fetchone()
    assert stored["field_path_documents"] < stored["field_path_rows"] == len(paths)
    assert stored["field_flow_documents"] < stored["field_source_flow_rows"] == len(flows)
    assert gone == (None, None, None)  # dbt's next build makes its views again, over the new views


def store(conn: psycopg.Connection[Any], event_ids: list[str]) -> None:
    """The field lineage job's merge of what its tasks staged for ``event_ids`` (one record's set)."""
    staging = create_staging(conn)
    records, sets = _staged_rows(event_ids)
    for table, rows, kind in ((staging.records, records, "records"), (staging.sets, sets, "sets")):
        with conn.cursor().copy(f"copy {table} ({', '.join(staging_columns(kind))}) from stdin") as copy:
            for row in rows:
                copy.write_row(row)
    store_results(conn, staging)
    conn.commit()


def test_a_set_derived_again_leaves_no_document_behind(warehouse_db: str) -> None:
    """Paths derived again (a new derivation of a stored set) replace the set's rows; the documents
    only the old rows named go, those another set still names stay."""
    with psycopg.connect(libpq(warehouse_db)) as conn:
        _add_pending(conn, 2)
        store(conn, ["event-000"])
        [(real,)] = conn.execute("select document_key from lineage.field_path_rows").fetchall()
        conn.execute("""insert into lineage.field_path_documents (document_key, path)
                        values (sha256('older'), '{"field": "amount", "older": true}')""")
        conn.execute("update lineage.field_path_rows set document_key = sha256('older')")  # an older derivation's
        conn.commit()
        store(conn, ["event-001"])  # the same set again: its paths as this derivation gives them
        assert conn.execute("select document_key from lineage.field_path_rows").fetchall() == [(real,)]
        assert conn.execute("select count(*) from lineage.field_path_documents").fetchone() == (1,)


def test_a_cleanup_failing_before_the_documents_go_leaves_them_for_its_retry(
        warehouse_db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before (a review finding): the documents went in a transaction of their own after the rows,
    so a failure between the two left them for ever (the retry found no set naming them). Now they
    go with the rows: a failure undoes both, and the retry removes both."""
    derived(warehouse_db, tmp_path / "raw-events")
    with psycopg.connect(libpq(warehouse_db)) as conn:
        delete_namespace(conn, "myns", "admin")
        conn.commit()
    real = namespace_cleanup._remove_unused_documents

    def failing(conn: Any) -> dict[str, int]:
        raise RuntimeError("the connection dropped")

    monkeypatch.setattr(namespace_cleanup, "_remove_unused_documents", failing)
    with pytest.raises(RuntimeError):
        clean_pending(warehouse_db)
    with psycopg.connect(libpq(warehouse_db)) as conn:
        assert counts(conn)["field_path_rows"] > 0  # undone with the documents
    monkeypatch.setattr(namespace_cleanup, "_remove_unused_documents", real)
    clean_pending(warehouse_db)
    with psycopg.connect(libpq(warehouse_db)) as conn:
        assert counts(conn) == dict.fromkeys(counts(conn), 0)


def test_a_set_derived_again_without_a_field_loses_its_row_and_document(warehouse_db: str) -> None:
    """Before (a review finding): a set derived again kept the rows of the fields and source fields
    the new derivation no longer gives, served through the views, with their documents."""
    with psycopg.connect(libpq(warehouse_db)) as conn:
        _add_pending(conn, 2)
        store(conn, ["event-000"])
        assert counts(conn)["field_path_rows"] == 1 and counts(conn)["field_source_flow_rows"] > 0
        staging = create_staging(conn)
        records, sets = _staged_rows(["event-001"])
        fingerprint, operations, _, _, warnings, edges = sets[0]
        for table, rows, kind in ((staging.records, records, "records"),
                                  (staging.sets, [(fingerprint, operations, "[]", "[]", warnings, edges)], "sets")):
            with conn.cursor().copy(f"copy {table} ({', '.join(staging_columns(kind))}) from stdin") as copy:
                for row in rows:
                    copy.write_row(row)
        store_results(conn, staging)
        conn.commit()
        assert counts(conn) == dict.fromkeys(counts(conn), 0)
        assert conn.execute("select count(*) from lineage.field_path_sources").fetchone() == (0,)

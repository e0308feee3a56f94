"""The compaction job against real Spark and a real PostgreSQL warehouse."""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest

from spark_jobs.compaction.job import run_compaction
from tests.factories import access, declared_access, event, write_log
from warehouse.db.connection import connect

END = datetime(2026, 11, 21, 6, 0, tzinfo=UTC)
TABLES = ("programs", "datasets", "runs", "dataset_accesses", "pending_events", "quarantine", "compacted_files",
          "compaction_batches", "event_ids", "namespaces", "settled_partitions")


def snapshot(url: str) -> dict[str, list[tuple]]:  # type: ignore[type-arg]
    with connect(url) as conn:
        return {table: sorted(map(tuple, conn.execute(f"select * from lineage.{table}").fetchall()),  # type: ignore[arg-type]
                              key=repr) for table in TABLES}


@pytest.fixture(params=["spark", "in process"])
def session(request, spark):  # type: ignore[no-untyped-def]
    """The shared Spark session, or None: the compaction then parses the (small, local) batch in
    its own process; both must give the same rows."""
    return spark if request.param == "spark" else None


def rows(url: str, query: str) -> list[tuple]:  # type: ignore[type-arg]
    with connect(url) as conn:
        return [tuple(row) for row in conn.execute(query).fetchall()]  # type: ignore[arg-type]


def test_bad_lines_are_quarantined_while_good_ones_of_the_same_file_are_compacted(
    session, warehouse_db: str, log_root: Path, settings_for  # type: ignore[no-untyped-def]
) -> None:
    duplicate = access("purchases", event_id="dup-1")
    path = write_log(log_root, [
        event("run_start", event_id="s-1", event_time="2026-11-21T05:00:00Z"),
        duplicate,
        "{this is not json",
        {k: v for k, v in access("x").items() if k != "namespace"},
        access("history", event_time=12345),
        event("explode"),
        access("d", schema_version=9),
        access("big", producer="p" * 5000),
        duplicate,
        event("run_end", {"status": "completed"}, event_id="e-1", event_time="2026-11-21T05:10:00Z"),
    ])
    summary = run_compaction(session, interval_end=END, settings=settings_for(warehouse_db))

    assert (summary.files, summary.events_read, summary.events_compacted, summary.duplicates, summary.quarantined) == (
        1, 10, 3, 1, 6)
    reasons = rows(warehouse_db, "select line_number, reason from lineage.quarantine order by line_number")
    assert [line for line, _ in reasons] == [3, 4, 5, 6, 7, 8]
    assert reasons[0][1].startswith("malformed JSON")
    assert "must contain ['namespace']" in reasons[1][1]
    assert "event_time must be string" in reasons[2][1]
    assert "kind must be one of" in reasons[3][1]
    assert "unknown schema_version 9" in reasons[4][1]
    assert "producer must be shorter than or equal to 256 characters" in reasons[5][1]
    assert rows(warehouse_db, "select source_file, raw_text from lineage.quarantine where line_number = 3") == [
        (f"file:{path}", "{this is not json")]
    assert rows(warehouse_db, "select dataset, access, run_id from lineage.access_details") == [
        ("purchases", "read", "run-1")]
    assert rows(warehouse_db, "select status, started_at, stopped_at from lineage.runs") == [
        ("completed", datetime(2026, 11, 21, 5, tzinfo=UTC), datetime(2026, 11, 21, 5, 10, tzinfo=UTC))]
    assert rows(warehouse_db, "select lines from lineage.compacted_files") == [(10,)]


def test_an_event_time_far_ahead_of_the_compactions_clock_is_quarantined_not_kept_for_ever(
    spark, warehouse_db: str, log_root: Path, settings_for  # type: ignore[no-untyped-def]
) -> None:
    now = datetime.now(UTC)
    soon = (now + timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M:%SZ")  # within the default 24 h skew
    years_ahead = "2099-01-01T00:00:00Z"
    write_log(log_root, [access("soon", event_time=soon), access("future", event_time=years_ahead)])
    summary = run_compaction(spark, interval_end=now + timedelta(hours=1), settings=settings_for(warehouse_db))

    assert summary.quarantined == 1
    [(reason,)] = rows(warehouse_db, "select reason from lineage.quarantine")
    assert reason.startswith("event_time 2099-01-01T00:00:00Z is ahead of the compaction's clock")
    assert rows(warehouse_db, "select dataset from lineage.access_details") == [("soon",)]
    stricter = settings_for(warehouse_db, LINEAGE_MAX_CLOCK_SKEW_HOURS="1")
    write_log(log_root, [access("soon-again", event_time=soon)])
    assert run_compaction(spark, interval_end=now + timedelta(hours=1), settings=stricter).quarantined == 1


def test_gzip_files_are_read_and_a_poison_file_is_quarantined_whole_while_the_rest_compacts(
    session, warehouse_db: str, log_root: Path, settings_for  # type: ignore[no-untyped-def]
) -> None:
    folder = log_root / "dt=2026-11-21/hour=05"
    write_log(log_root, [access("plain")])
    folder.joinpath("shipped.jsonl.gz").write_bytes(gzip.compress((json.dumps(access("zipped")) + "\n").encode()))
    folder.joinpath("corrupt.jsonl.gz").write_bytes(b"this is not gzip")
    folder.joinpath("truncated.jsonl.gz").write_bytes(gzip.compress(b'{"a": 1}\n' * 100)[:30])
    folder.joinpath("binary.jsonl").write_bytes(b"\xff\xfe binary \x01\x02 junk, not UTF-8\n"
                                                + (json.dumps(access("beside")) + "\n").encode())
    settings = settings_for(warehouse_db)

    summary = run_compaction(session, interval_end=END, settings=settings)

    assert summary.files == 5
    assert sorted(rows(warehouse_db, "select dataset from lineage.access_details")) == [
        ("beside",), ("plain",), ("zipped",)]  # a file's good lines land beside its bad one
    quarantined = dict(rows(warehouse_db, "select regexp_replace(source_file, '.*/', ''), reason "
                                          "from lineage.quarantine"))
    assert set(quarantined) == {"corrupt.jsonl.gz", "truncated.jsonl.gz", "binary.jsonl"}
    assert quarantined["corrupt.jsonl.gz"].startswith("unreadable file: ")
    assert quarantined["truncated.jsonl.gz"].startswith("unreadable file: ")
    assert quarantined["binary.jsonl"] == "the line is not valid UTF-8"
    assert rows(warehouse_db, "select raw_text from lineage.quarantine where line_number = 1") == [
        ("\\xff\\xfe binary \x01\x02 junk, not UTF-8",)]
    again = run_compaction(session, interval_end=END, settings=settings)  # never retried for ever
    assert (again.files, again.quarantined) == (0, 0)


def test_rerunning_the_same_interval_changes_nothing(
    spark, warehouse_db: str, log_root: Path, settings_for  # type: ignore[no-untyped-def]
) -> None:
    write_log(log_root, [event("run_start"), access("purchases"), access("history", "write")])
    settings = settings_for(warehouse_db)
    first = run_compaction(spark, interval_end=END, settings=settings)
    before = snapshot(warehouse_db)
    second = run_compaction(spark, interval_end=END, settings=settings)
    assert first.events_compacted == 3
    assert (second.files, second.events_read, second.events_compacted) == (0, 0, 0)
    assert snapshot(warehouse_db) == before


def test_redelivered_events_in_a_later_file_are_counted_once(
    spark, warehouse_db: str, log_root: Path, settings_for  # type: ignore[no-untyped-def]
) -> None:
    original = access("purchases", event_id="once")
    write_log(log_root, [original])
    # event ids are remembered LINEAGE_EVENT_ID_RETENTION_DAYS back from now: the fixed event time
    # (2026-11-21) must stay inside it whatever day the suite runs (7 days failed from 2026-11-28)
    settings = settings_for(warehouse_db, LINEAGE_EVENT_ID_RETENTION_DAYS="3650")
    run_compaction(spark, interval_end=END, settings=settings)
    write_log(log_root, [original, access("history", event_id="new")])
    later = run_compaction(spark, interval_end=END, settings=settings)
    assert (later.events_read, later.events_compacted, later.duplicates) == (2, 1, 1)
    assert rows(warehouse_db, "select count(*) from lineage.dataset_accesses") == [(2,)]


def test_a_long_run_started_in_one_compaction_is_completed_by_the_next(
    spark, warehouse_db: str, log_root: Path, settings_for  # type: ignore[no-untyped-def]
) -> None:
    settings = settings_for(warehouse_db)
    write_log(log_root, [event("run_start", event_time="2026-11-21T04:00:00Z"), access("purchases")],
              hour="dt=2026-11-21/hour=04")
    run_compaction(spark, interval_end=END, settings=settings)
    assert rows(warehouse_db, "select status, stopped_at from lineage.runs") == [("running", None)]
    write_log(log_root, [event("run_end", {"status": "failed"}, event_time="2026-11-21T05:30:00Z")])
    run_compaction(spark, interval_end=END, settings=settings)
    assert rows(warehouse_db, "select status, started_at, stopped_at from lineage.runs") == [
        ("failed", datetime(2026, 11, 21, 4, tzinfo=UTC), datetime(2026, 11, 21, 5, 30, tzinfo=UTC))]


def test_late_files_are_picked_up_however_old_and_future_ones_wait(
    spark, warehouse_db: str, log_root: Path, settings_for  # type: ignore[no-untyped-def]
) -> None:
    settings = settings_for(warehouse_db, LINEAGE_LOOKBACK_HOURS="3")
    write_log(log_root, [access("late")], hour="dt=2026-11-21/hour=03")
    write_log(log_root, [access("older_than_the_lookback")], hour="dt=2026-11-20/hour=12")
    write_log(log_root, [access("future")], hour="dt=2026-11-21/hour=07")
    write_log(log_root, [access("in_progress")], hour="dt=2026-11-21/hour=05", name=".temp.jsonl")
    summary = run_compaction(spark, interval_end=END, settings=settings)
    assert (summary.files, summary.late_files) == (2, 1)
    assert sorted(rows(warehouse_db, "select dataset from lineage.access_details")) == [
        ("late",), ("older_than_the_lookback",)]


def test_a_paused_schedule_strands_no_file_and_the_summary_counts_the_late_ones(
    spark, warehouse_db: str, log_root: Path, settings_for  # type: ignore[no-untyped-def]
) -> None:
    """Hourly runs with a 3-hour lookback, then a pause of two days (catchup=False: the next run
    is for now, not for each missed hour). Before, files of the paused hours older than the
    lookback were never listed again; now the run reaches back to the previous run."""
    settings = settings_for(warehouse_db, LINEAGE_LOOKBACK_HOURS="3")
    write_log(log_root, [access("before_the_pause")], hour="dt=2026-11-21/hour=05")
    assert run_compaction(spark, interval_end=END, settings=settings).files == 1
    write_log(log_root, [access("during_the_pause")], hour="dt=2026-11-22/hour=01")
    write_log(log_root, [access("just_before")], hour="dt=2026-11-23/hour=05")
    after = run_compaction(spark, interval_end=END + timedelta(days=2), settings=settings)
    assert (after.files, after.late_files) == (2, 1)
    assert "1 late files" in after.render()
    assert sorted(rows(warehouse_db, "select dataset from lineage.access_details")) == [
        ("before_the_pause",), ("during_the_pause",), ("just_before",)]
    assert rows(warehouse_db, "select files, late_files from lineage.compaction_batches order by started_at") == [
        (1, 0), (2, 1)]
    # on schedule again, the listing is back to the lookback (plus one interval)
    assert run_compaction(spark, interval_end=END + timedelta(days=2, hours=1), settings=settings).files == 0


def test_files_written_into_hours_long_gone_are_compacted_by_the_next_scheduled_run(
    spark, warehouse_db: str, log_root: Path, settings_for  # type: ignore[no-untyped-def]
) -> None:
    settings = settings_for(warehouse_db, LINEAGE_LOOKBACK_HOURS="3")
    assert run_compaction(spark, interval_end=END, settings=settings).files == 0
    write_log(log_root, [access("from_a_skewed_clock")], hour="dt=2026-10-01/hour=00")
    scheduled = run_compaction(spark, interval_end=END + timedelta(hours=1), settings=settings)
    assert (scheduled.files, scheduled.late_files, scheduled.late_checked) == (1, 1, True)
    assert run_compaction(spark, interval_end=END + timedelta(hours=1), settings=settings, everything=True).files == 0
    assert rows(warehouse_db, "select dataset from lineage.access_details") == [("from_a_skewed_clock",)]


def test_a_compaction_that_fails_mid_merge_leaves_the_warehouse_as_it_was(
    spark, warehouse_db: str, log_root: Path, settings_for  # type: ignore[no-untyped-def]
) -> None:
    settings = settings_for(warehouse_db)
    write_log(log_root, [access("first")])
    run_compaction(spark, interval_end=END, settings=settings)
    before = snapshot(warehouse_db)
    write_log(log_root, [event("run_start"), access("second"), "{bad"])
    with connect(warehouse_db, autocommit=True) as conn:  # a failure after runs and accesses were merged
        conn.execute("""create function lineage.fail_batch() returns trigger language plpgsql as
                        $$ begin raise exception 'injected failure'; end $$""")
        conn.execute("""create trigger fail_batch before insert on lineage.compaction_batches
                        for each row execute function lineage.fail_batch()""")
    with pytest.raises(psycopg.errors.RaiseException, match="injected failure"):
        run_compaction(spark, interval_end=END, settings=settings)
    assert snapshot(warehouse_db) == before
    with connect(warehouse_db, autocommit=True) as conn:
        conn.execute("drop trigger fail_batch on lineage.compaction_batches")
    retried = run_compaction(spark, interval_end=END, settings=settings)
    assert (retried.files, retried.events_compacted, retried.quarantined) == (1, 2, 1)


def test_field_operations_and_metadata_events_are_kept_for_their_stages(
    spark, warehouse_db: str, log_root: Path, settings_for  # type: ignore[no-untyped-def]
) -> None:
    operations = {"destination": {"name": "mytableds"}, "destination_fields": ["body"],
                  "operations": [{"name": "read", "inputs": [{"source": {"name": "user_data"}}], "outputs": ["body"]}]}
    metadata = {"entity": [["namespace", "default"], ["dataset", "purchases"]], "operation": "add_tags",
                "tags": ["PII"]}
    write_log(log_root, [event("field_operations", operations), event("metadata_change", metadata)])
    summary = run_compaction(spark, interval_end=END, settings=settings_for(warehouse_db))
    assert summary.pending_kept == 2
    kept = dict(rows(warehouse_db, "select kind, payload from lineage.pending_events"))
    assert kept == {"field_operations": operations, "metadata_change": metadata}


def test_staged_lines_and_pending_payloads_are_compressed_with_lz4_on_a_server_that_has_it(
    warehouse_db: str, log_root: Path, settings_for  # type: ignore[no-untyped-def]
) -> None:
    """Written once and read once, they take LZ4's cheaper compression (migration 0048, the staging
    tables); what the compaction stores stays as it was (a large payload, compressed, comes back whole)."""
    from warehouse.db.compaction_store import create_lines_table, lz4_available, prepare_staging

    with connect(warehouse_db, autocommit=True) as conn:
        try:  # the server's own answer, not the code's: Debian's PostgreSQL, the test cluster's, has LZ4
            conn.execute("create temp table lz4_probe (value text compression lz4)")
            lz4 = True
        except (psycopg.errors.FeatureNotSupported, psycopg.errors.SyntaxError):  # no LZ4, or before PostgreSQL 14
            lz4 = False
        assert lz4_available(conn) == lz4
        method = "l" if lz4 else ""  # else the server's default (pglz)
        prepare_staging(conn)
        table = create_lines_table(conn, "lz4-check", 1)
        compression = dict(conn.execute(
            "select attname, attcompression from pg_attribute where attrelid = %s::regclass and attnum > 0 "
            "and not attisdropped", (table,)).fetchall())
        assert compression["payload"] == compression["raw_text"] == compression["namespace"] == method
        assert compression["event_time_us"] == ""  # a number is not compressed
        (pending,) = conn.execute("select attcompression from pg_attribute where attrelid = "
                                  "'lineage.pending_events'::regclass and attname = 'payload'").fetchone()
        assert pending == method
    operations = {"destination": {"name": "wide"}, "destination_fields": [f"column_{i}" for i in range(300)],
                  "operations": [{"name": "read", "inputs": [{"source": {"name": "source"}}],
                                  "outputs": [f"column_{i}" for i in range(300)]}]}
    write_log(log_root, [event("field_operations", operations)])
    run_compaction(None, interval_end=END, settings=settings_for(warehouse_db))
    [(payload, stored)] = rows(warehouse_db, "select payload, pg_column_compression(payload) "
                                             "from lineage.pending_events")
    assert (payload, stored) == (operations, "lz4" if lz4 else "pglz")


def test_processed_records_expire_after_the_retention_and_the_answers_they_made_stay(
    warehouse_db: str, log_root: Path, settings_for  # type: ignore[no-untyped-def]
) -> None:
    from spark_jobs.field_lineage.job import run_field_lineage
    from warehouse.db.program_metadata_store import apply_pending

    def record(name: str) -> dict[str, object]:
        return event("field_operations", {"destination": {"name": name}, "destination_fields": ["body"], "operations": [
            {"name": "read", "inputs": [{"source": {"name": "raw"}}], "outputs": ["body"]}]})

    tag = event("metadata_change", {"entity": [["namespace", "default"], ["dataset", "a"]], "operation": "add_tags",
                                    "tags": ["PII"]})
    first = [record("a"), record("b"), record("c"), tag]
    write_log(log_root, first)
    settings = settings_for(warehouse_db, LINEAGE_PENDING_RETENTION_DAYS="7")
    assert run_compaction(None, interval_end=END, settings=settings).pending_kept == 4
    assert run_field_lineage(None, settings).records == 3
    assert apply_pending(warehouse_db, auto_create_namespaces=False).events == 1
    answers = ("select count(*) from lineage.field_lineage_runs",
               "select string_agg(key, ',') from lineage.metadata where kind = 'tag'")
    before = [rows(warehouse_db, query) for query in answers]
    aged = [first[0]["event_id"], tag["event_id"]]  # processed 8 days ago: past the 7 kept
    with connect(warehouse_db) as conn:
        conn.execute("update lineage.pending_events set processed_at = now() - interval '8 days' "
                     "where event_id = any(%s)", (aged,))

    late = record("d")
    write_log(log_root, [late])
    summary = run_compaction(None, interval_end=END, settings=settings)
    assert (summary.pending_kept, summary.pending_expired) == (1, 2)
    assert "(2 processed ones expired)" in summary.render()
    left = "select event_id, processed_at is not null from lineage.pending_events"
    assert sorted(rows(warehouse_db, left)) == sorted(
        [(first[1]["event_id"], True), (first[2]["event_id"], True), (late["event_id"], False)])
    assert [rows(warehouse_db, query) for query in answers] == before  # what they made is kept

    write_log(log_root, [record("e")])  # 0 days, the default: every processed record goes at the next compaction
    at_once = settings_for(warehouse_db)
    now = run_compaction(None, interval_end=END, settings=at_once)
    assert now.pending_expired == 2
    assert rows(warehouse_db, "select count(*), count(processed_at) from lineage.pending_events") == [(2, 0)]
    assert run_field_lineage(None, settings).records == 2  # the unprocessed ones were left for their stage


def test_hostile_strings_are_stored_verbatim(
    spark, warehouse_db: str, log_root: Path, settings_for  # type: ignore[no-untyped-def]
) -> None:
    hostile = access("d")
    hostile["payload"]["component"] = "'); drop table lineage.runs; -- \"<script>\\,\t\u00e9\u2603"
    nul_in_value = access("nul")
    nul_in_value["payload"]["component"] = "a\u0000b"
    write_log(log_root, [hostile, "\u0000\ufffd not json", nul_in_value])
    summary = run_compaction(spark, interval_end=END, settings=settings_for(warehouse_db))
    assert (summary.events_compacted, summary.quarantined) == (1, 2)
    assert rows(warehouse_db, "select line_number, left(raw_text, 7), reason like '%NUL (U+0000)%' "
                              "from lineage.quarantine order by line_number") == [
        (2, "\\u0000\ufffd", False), (3, '{"schem', True)]
    assert rows(warehouse_db, "select component from lineage.access_details") == [(hostile["payload"]["component"],)]
    assert rows(warehouse_db, "select count(*) from lineage.runs") == [(1,)]
    json.dumps(snapshot(warehouse_db), default=str)


def test_events_of_unknown_namespaces_are_quarantined_unless_auto_creation_is_on(
    spark, warehouse_db: str, log_root: Path, settings_for  # type: ignore[no-untyped-def]
) -> None:
    foreign_dataset = access("x", event_id="e-3")
    foreign_dataset["payload"]["dataset"]["namespace"] = "elsewhere"
    write_log(log_root, [
        access("kept", event_id="e-1"),
        access("lost", namespace="nowhere", event_id="e-2"),
        foreign_dataset,
        event("metadata_change", {"entity": [["namespace", "nowhere"], ["dataset", "d"]], "operation": "add_tags",
                                  "tags": ["t"]}, namespace="nowhere", event_id="e-4"),
    ])
    summary = run_compaction(spark, interval_end=END, settings=settings_for(warehouse_db))
    assert (summary.events_compacted, summary.quarantined, summary.duplicates) == (1, 3, 0)
    reasons = rows(warehouse_db, "select line_number, reason, raw_text from lineage.quarantine order by line_number")
    assert [(line, reason) for line, reason, _ in reasons] == [
        (2, "namespace 'nowhere' does not exist (create it with PUT /v3/namespaces/nowhere, or set "
            "LINEAGE_AUTO_CREATE_NAMESPACES=true)"),
        (3, "namespace 'elsewhere' does not exist (create it with PUT /v3/namespaces/elsewhere, or set "
            "LINEAGE_AUTO_CREATE_NAMESPACES=true)"),
        (4, "namespace 'nowhere' does not exist (create it with PUT /v3/namespaces/nowhere, or set "
            "LINEAGE_AUTO_CREATE_NAMESPACES=true)")]
    assert json.loads(reasons[0][2])["dataset"] == "lost" and json.loads(reasons[0][2])["event_id"] == "e-2"
    assert rows(warehouse_db, "select namespace from lineage.namespaces") == [("default",)]
    assert rows(warehouse_db, "select dataset from lineage.datasets") == [("kept",)]
    assert rows(warehouse_db, "select count(*) from lineage.pending_events") == [(0,)]

    write_log(log_root, [access("welcome", namespace="newcomer")])
    auto = run_compaction(spark, interval_end=END, settings=settings_for(warehouse_db,
                                                                      LINEAGE_AUTO_CREATE_NAMESPACES="true"))
    assert (auto.events_compacted, auto.quarantined) == (1, 0)
    assert rows(warehouse_db, "select namespace from lineage.namespaces order by 1") == [("default",), ("newcomer",)]


def test_declared_accesses_keep_each_program_s_latest_declaration_whatever_the_arrival_order(
    session, warehouse_db: str, log_root: Path, settings_for  # type: ignore[no-untyped-def]
) -> None:
    """A program's accesses without a run (an OpenLineage JobEvent's): no run is made up, and the
    latest declaration (by event time) replaces an earlier one, arriving before or after it."""
    job = {"application": "dbt", "program_type": "openlineage", "program": "orders_model"}
    late = "2026-11-21T05:30:00Z"
    write_log(log_root, [declared_access("orders_v2", "read", job, event_time=late),
                         declared_access("orders_clean", "write", job, event_time=late),
                         access("orders_clean", "read", event_id="r-1")])  # a run reading it
    run_compaction(session, interval_end=END, settings=settings_for(warehouse_db))
    write_log(log_root, [declared_access("orders", "read", job, event_time="2026-11-21T05:00:00Z")])  # older
    run_compaction(session, interval_end=END, settings=settings_for(warehouse_db))
    declared = """select d.dataset, a.access, a.declared_at from lineage.declared_accesses a
                  join lineage.datasets d using (dataset_key) order by 1"""
    at = datetime(2026, 11, 21, 5, 30, tzinfo=UTC)
    assert rows(warehouse_db, declared) == [("orders_clean", "write", at), ("orders_v2", "read", at)]
    assert rows(warehouse_db, """select p.program, count(r.run_key) from lineage.programs p
                                 left join lineage.runs r using (program_key) group by 1 order by 1""") == [
        ("PurchaseHistoryBuilder", 1), ("orders_model", 0)]  # declared: never a run
    assert rows(warehouse_db, "select count(*) from lineage.dataset_accesses") == [(1,)]  # the run's read only
    resent = "2026-11-21T05:40:00Z"  # the same declaration again (a manifest sent on every deploy)
    write_log(log_root, [declared_access("orders_v2", "read", job, event_time=resent),
                         declared_access("orders_clean", "write", job, event_time=resent)])
    run_compaction(session, interval_end=END, settings=settings_for(warehouse_db))
    assert rows(warehouse_db, """select d.dataset, a.first_declared_at, a.declared_at from lineage.declared_accesses a
                                 join lineage.datasets d using (dataset_key) order by 1""") == [
        ("orders_clean", at, at + timedelta(minutes=10)), ("orders_v2", at, at + timedelta(minutes=10))]
    write_log(log_root, [declared_access("orders_v3", "read", job, event_time="2026-11-21T05:45:00Z")])
    run_compaction(session, interval_end=END, settings=settings_for(warehouse_db))
    assert [row[:2] for row in rows(warehouse_db, declared)] == [("orders_v3", "read")]  # replaced whole

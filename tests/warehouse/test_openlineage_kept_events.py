"""Kept OpenLineage events store each distinct part once (issue 30 item 8, migrations 0041 and
0046), on real PostgreSQL through the in-process compaction: a platform sends the same job and
datasets in every event of every run; they are stored once per namespace, every event comes
back whole, a namespace's cleanup removes the parts and namespace sets only its old runs used,
and events kept before each migration are split the same way."""

from __future__ import annotations

import copy
import json
import random
import string
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from psycopg.types.json import Jsonb

from lineage.openlineage import kept_parts
from lineage.transport.openlineage import RawLogConfig, RawLogTransport
from spark_jobs.compaction.job import run_compaction
from tests.warehouse.test_compaction import rows
from warehouse.db import compaction_store, namespace_store
from warehouse.db.connection import connect
from warehouse.db.migrate import MIGRATIONS_DIR, apply_migrations
from warehouse.db.openlineage_export_store import kept_event_key, kept_events
from warehouse.pipeline import namespace_cleanup

START = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)
PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/integration/airflow"
SCHEMA = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
KEYS_IN_TIME_ORDER = "select event_key::text from lineage.openlineage_events order by event_time"
FACET = {"_producer": PRODUCER, "_schemaURL": "https://openlineage.io/spec/facets/1-0-0/SchemaDatasetFacet.json"}


def hourly_events(job_namespace: str, hours: int, start: datetime = START) -> list[dict[str, Any]]:
    """START and COMPLETE of an hourly task: the same job and datasets each time, run facets of
    their own per run (its nominal time), and a custom facet on the output."""
    orders = {"namespace": "postgres://db:5432", "name": "shop.public.orders", "facets": {
        "schema": {**FACET, "fields": [{"name": "id", "type": "integer"}, {"name": "amount", "type": "numeric"}]}}}
    totals = {"namespace": "s3://lake", "name": "marts/totals", "facets": {
        "acme_quality": {**FACET, "rows": 12, "checked": ["id", "amount"]}},
        "outputFacets": {"outputStatistics": {**FACET, "rowCount": 12}}}
    events = []
    for hour in range(hours):
        at = start + timedelta(hours=hour)
        run_id = f"0195f3b1-7a3e-7c6e-9d3f-{at:%m%d%H%M%S}{hour:02d}"
        for state, minutes in (("START", 0), ("COMPLETE", 5)):
            events.append({
                "eventType": state, "eventTime": (at + timedelta(minutes=minutes)).isoformat(),
                "producer": PRODUCER, "schemaURL": SCHEMA,
                "run": {"runId": run_id, "facets": {
                    "nominalTime": {**FACET, "nominalStartTime": at.isoformat()},
                    "processing_engine": {**FACET, "name": "Airflow", "version": "3.1.0"}}},
                "job": {"namespace": job_namespace, "name": "orders_dag.totals", "facets": {
                    "jobType": {**FACET, "integration": "AIRFLOW", "jobType": "TASK", "processingType": "BATCH"}}},
                "inputs": [copy.deepcopy(orders)], "outputs": [copy.deepcopy(totals)]})
    return events


def emit(log_root: Path, events: list[dict[str, Any]]) -> None:
    """The events written to the raw log by the real in-process transport."""
    transport = RawLogTransport(RawLogConfig.from_dict({"log_root": str(log_root)}))
    for event in events:
        transport.emit(event)


def test_each_distinct_part_is_stored_once_and_every_event_comes_back_whole(
    warehouse_db: str, log_root: Path, settings_for  # type: ignore[no-untyped-def]
) -> None:
    sent = hourly_events("default", hours=3)
    emit(log_root, sent)
    run_compaction(None, interval_end=datetime.now(UTC) + timedelta(hours=1), settings=settings_for(warehouse_db))

    with connect(warehouse_db) as conn:
        ids = [row[0] for row in conn.execute(KEYS_IN_TIME_ORDER)]
        back = kept_events(conn, ids)
    assert [back[event_id] for event_id in ids] == sent  # every facet, custom ones included, in its place
    # the job, the input and the output once for the six events, and the body naming them with the
    # producer; the run facets once per run (nominalTime) or once in all (processing_engine)
    assert rows(warehouse_db, "select count(*) from lineage.openlineage_parts "
                              "where part ->> 'name' in ('orders_dag.totals', 'shop.public.orders', 'marts/totals')"
                ) == [(3,)]
    assert rows(warehouse_db, "select count(*) from lineage.openlineage_parts") == [(3 + 1 + 3 + 1,)]
    # what each kept event holds itself: its type, its body's and run facets' part ids, and nothing
    # else: no facet, no dataset, neither the run id nor the time its row holds (the events' times
    # are Python's isoformat, as the row's time renders), and one set of namespaces for all six
    assert rows(warehouse_db, "select event_type, body is not null, jsonb_typeof(run_facets), rest, count(*) "
                              "from lineage.openlineage_events group by 1, 2, 3, 4 order by 1") == [
        ("COMPLETE", True, "object", None, 3), ("START", True, "object", None, 3)]
    assert rows(warehouse_db, "select array_agg(distinct f.key order by f.key), bool_and(f.value::uuid is not null) "
                              "from lineage.openlineage_events cross join lateral jsonb_each_text(run_facets) f"
                ) == [(["nominalTime", "processing_engine"], True)]
    assert rows(warehouse_db, "select l.namespaces, count(*) from lineage.openlineage_events o "
                              "join lineage.namespace_lists l on l.list_key = o.namespace_list group by 1") == [
        (["default"], 6)]


def test_a_time_written_otherwise_is_kept_as_it_came(
    warehouse_db: str, log_root: Path, settings_for  # type: ignore[no-untyped-def]
) -> None:
    """Java producers write ``...Z`` and milliseconds: the text comes back as it was sent; a time
    the row holds exactly comes back from it, to the microsecond, in any year."""
    sent = hourly_events("default", hours=1)
    sent[0]["eventTime"] = "2026-11-23T09:00:00.120Z"
    sent[1]["eventTime"] = "2026-11-23T10:05:00+01:00"
    for moment in ("1915-06-15T12:00:00.000007+00:00", "1600-01-01T00:00:00.000003+00:00"):  # where a double
        sent.append({**copy.deepcopy(sent[0]), "eventType": "RUNNING", "eventTime": moment})  # is coarser than 0.5 us
    emit(log_root, sent)
    run_compaction(None, interval_end=datetime.now(UTC) + timedelta(hours=1), settings=settings_for(warehouse_db))
    with connect(warehouse_db) as conn:
        ids = [row[0] for row in conn.execute(KEYS_IN_TIME_ORDER)]
        back = kept_events(conn, ids)
    assert [back[event_id] for event_id in ids] == sorted(sent, key=lambda e: datetime.fromisoformat(e["eventTime"]))
    assert rows(warehouse_db, "select rest ->> 'eventTime' from lineage.openlineage_events order by event_time"
                ) == [(None,), (None,), ("2026-11-23T09:00:00.120Z",), ("2026-11-23T10:05:00+01:00",)]


def test_a_namespace_cleanup_removes_the_parts_only_its_old_runs_used(
    warehouse_db: str, log_root: Path, settings_for  # type: ignore[no-untyped-def]
) -> None:
    settings = settings_for(warehouse_db)
    with connect(warehouse_db, autocommit=True) as conn:
        for namespace in ("team_a", "team_b"):
            namespace_store.create_namespace(conn, namespace, None)
    emit(log_root, hourly_events("team_a", hours=2) + hourly_events("team_b", hours=2))
    run_compaction(None, interval_end=datetime.now(UTC) + timedelta(hours=1), settings=settings)
    parts_of = "select namespace, count(*) from lineage.openlineage_parts group by 1 order by 1"
    assert rows(warehouse_db, parts_of) == [("team_a", 7), ("team_b", 7)]  # the same content, once per namespace

    with connect(warehouse_db, autocommit=True) as conn:
        assert namespace_store.delete_namespace(conn, "team_a", "admin") is not None
        namespace_store.create_namespace(conn, "team_a", None)
    # a run after the namespace came back: its job, datasets and engine facet are the old runs' parts
    emit(log_root, hourly_events("team_a", hours=1, start=datetime.now(UTC) + timedelta(seconds=1)))
    run_compaction(None, interval_end=datetime.now(UTC) + timedelta(hours=2), settings=settings)
    [summary] = namespace_cleanup.clean_pending(warehouse_db)

    assert summary.removed["openlineage_events"] == 4
    assert summary.removed["openlineage_parts"] == 2  # the old runs' nominal times; the rest is used again
    assert rows(warehouse_db, parts_of) == [("team_a", 6), ("team_b", 7)]
    with connect(warehouse_db) as conn:
        ids = [row[0] for row in conn.execute(KEYS_IN_TIME_ORDER)]
        back = list(kept_events(conn, ids).values())
    assert [event["job"]["namespace"] for event in back] == ["team_b"] * 4 + ["team_a"] * 2
    assert all(event["inputs"][0]["facets"]["schema"]["fields"][1]["name"] == "amount" for event in back)


def migrated_before(database: str, directory: Path, version: str) -> None:
    """``database`` with the migrations before ``version`` applied (copied into ``directory``)."""
    for migration in sorted(MIGRATIONS_DIR.glob("*.sql")):
        if migration.name < version:
            (directory / migration.name).write_text(migration.read_text())
    apply_migrations(database, directory)


def a_run(conn: Any, run_id: str) -> int:
    """A run of ``orders_dag.totals`` in its batch ``b1``, as a compaction would have left it; its key."""
    conn.execute("""insert into lineage.compaction_batches (batch_id, interval_end, started_at, files, events_read,
                        events_compacted, duplicates, quarantined, runs_touched, accesses_added)
                    values ('b1', now(), now(), 1, 1, 1, 0, 0, 1, 0)""")
    [program] = conn.execute("""insert into lineage.programs (namespace, application, program_type, program)
                                values ('default', 'default', 'openlineage', 'orders_dag.totals')
                                returning program_key""").fetchone()
    [run] = conn.execute("""insert into lineage.runs (namespace, program_key, run_id, status, first_batch_id,
                                                      last_batch_id)
                            values ('default', %s, %s, 'completed', 'b1', 'b1') returning run_key""",
                         (program, run_id)).fetchone()
    return int(run)


def test_events_kept_before_the_migration_are_split_and_come_back_the_same(empty_db: str, tmp_path: Path) -> None:
    migrated_before(empty_db, tmp_path, "0041")
    [event] = hourly_events("default", hours=1)[:1]
    event["outputs"][0]["facets"]["acme_quality"]["bytes"] = 10**25  # past what orjson writes
    with connect(empty_db, autocommit=True) as conn:
        run = a_run(conn, "r1")
        conn.execute("""insert into lineage.openlineage_events (event_id, run_key, event_time, namespaces, event,
                                                                 batch_id)
                        values ('ol-1', %s, now(), '{default}', %s, 'b1')""", (run, json.dumps(event)))

    apply_migrations(empty_db)

    with connect(empty_db) as conn:
        assert kept_events(conn, [kept_event_key("ol-1")]) == {kept_event_key("ol-1"): event}
        [(skeleton,)] = conn.execute("select lineage.kept_skeleton(event_type, body, run_facets, rest) "
                                     "from lineage.openlineage_events").fetchall()
    assert set(skeleton) == {"eventType", "eventTime", "run", "_body"}
    assert rows(empty_db, "select count(*) from lineage.openlineage_parts") == [(6,)]


def test_events_kept_before_0042_leave_what_their_row_holds_and_come_back_the_same(
    empty_db: str, tmp_path: Path
) -> None:
    migrated_before(empty_db, tmp_path, "0042")
    events = hourly_events("default", hours=1)
    events[1]["eventTime"] = "2026-11-23T09:05:00Z"  # another text of its row's time: stays
    with connect(empty_db, autocommit=True) as conn:
        run = a_run(conn, events[0]["run"]["runId"])
        for index, event in enumerate(events):
            skeleton, parts = kept_parts.split("default", event)  # as 0041 kept them: whole skeletons
            for key, part in parts.items():
                conn.execute("insert into lineage.openlineage_parts values (%s, 'default', %s) on conflict do nothing",
                             (key, Jsonb(part)))
            conn.execute("""insert into lineage.openlineage_events (event_id, run_key, event_time, namespaces, event,
                                                                     batch_id)
                            values (%s, %s, %s, '{default}', %s, 'b1')""",
                         (f"ol-{index}", run, datetime.fromisoformat(event["eventTime"]),
                          Jsonb(skeleton)))

    apply_migrations(empty_db)

    with connect(empty_db) as conn:
        keys = [kept_event_key("ol-0"), kept_event_key("ol-1")]
        assert kept_events(conn, keys) == {keys[0]: events[0], keys[1]: events[1]}
    assert rows(empty_db, "select event_key::text, coalesce(rest ? 'eventTime', false), "
                          "coalesce((rest -> 'run') ? 'runId', false) "
                          "from lineage.openlineage_events order by event_time") == [
        (keys[0], False, False), (keys[1], True, False)]


ODD_EVENTS = [
    {"eventTime": "2026-11-23T09:00:00Z", "run": {"runId": "r1"}, "job": {"namespace": "default", "name": "j"}},
    {"eventType": "OTHER", "eventTime": "2026-11-23T09:00:00Z", "run": {"runId": "r1", "facets": {}},
     "job": {"namespace": "default", "name": "j"}, "inputs": [], "outputs": None},
    {"eventType": None, "eventTime": "t", "run": {"runId": "r1", "facets": {"odd": 1, "list": [1, {"a": None}]},
                                                 "extra": "kept"},
     "job": {"namespace": "default", "name": "j"}, "_body": "a key of the producer's own", "acme": {"x": [1, 2]},
     "inputs": [{"namespace": "n", "name": "o'; drop table x; --"}, {"namespace": "n", "name": "o'; drop table x; --"}],
     "outputs": [{"namespace": "n", "name": "ünïcode ✓", "facets": {"schema": {"fields": []}}}]},
]


def test_the_part_ids_the_database_lists_are_those_the_split_names(warehouse_db: str) -> None:
    """The cleanup finds the parts an event uses in SQL (``lineage.openlineage_part_ids``); they
    are exactly those ``kept_parts.split`` stored, for odd and hostile events too."""
    with connect(warehouse_db, autocommit=True) as conn:
        for event in ODD_EVENTS:
            skeleton, parts = kept_parts.split("default", event)
            for key, part in parts.items():
                conn.execute("insert into lineage.openlineage_parts values (%s, 'default', %s) on conflict do nothing",
                             (key, Jsonb(part)))
            listed = {str(row[0]) for row in conn.execute("select lineage.openlineage_part_ids(%s)",
                                                            (Jsonb(skeleton),))}
            assert listed == set(parts)
            assert kept_parts.assembled(skeleton, parts) == event


ODD_SKELETONS = [
    {}, {"": 1}, {"eventType": 5}, {"eventType": None}, {"eventType": "START"}, {"_body": "not a part id"},
    {"_body": "0b5a4e6c-1d2f-4a3b-9c8d-7e6f5a4b3c2d", "eventType": "COMPLETE"}, {"_body": None},
    {"run": "x"}, {"run": {}}, {"run": {"facets": None}}, {"run": {"facets": {}}}, {"run": {"facets": []}},
    {"run": {"facets": {"a": "b"}, "runId": "x", "run": {"facets": {"c": "d"}}}}, {"run": {"runId": "x"}},
    {"rest": {"run": 1}, "run": {"facets": {"parent": "0b5a4e6c-1d2f-4a3b-9c8d-7e6f5a4b3c2d"}}},
    {"eventTime": "2026-11-23T09:00:00Z", "acme": [1, {"a": None}], "ü ✓'; --": "x"},
]


def test_a_skeleton_in_columns_comes_back_exactly(warehouse_db: str) -> None:
    """Migration 0046 keeps a skeleton in columns (``lineage.kept_columns``) and puts it back
    (``lineage.kept_skeleton``): the same JSON for what ``split`` makes of odd events and for
    skeletons no split makes (a type that is no string, a body that is no part id, run facets
    that are no object, keys of any text); what has no column stays in ``rest``, null when empty."""
    skeletons = [kept_parts.split("default", event)[0] for event in ODD_EVENTS + hourly_events("default", 1)]
    with connect(warehouse_db) as conn:
        for skeleton in skeletons + ODD_SKELETONS:
            [(back, rest)] = conn.execute(
                "select lineage.kept_skeleton(c.event_type, c.body, c.run_facets, c.rest), c.rest "
                "from lineage.kept_columns(%s) c", (Jsonb(skeleton),)).fetchall()
            assert back == skeleton
            assert rest != {}
        split = conn.execute("select c.* from lineage.kept_columns(%s) c", (Jsonb(skeletons[-1]),)).fetchone()
    complete = hourly_events("default", 1)[-1]
    assert split is not None and split[0] == "COMPLETE" and str(split[1]) == skeletons[-1]["_body"]
    assert set(split[2]) == {"nominalTime", "processing_engine"}
    assert split[3] == {"run": {"runId": complete["run"]["runId"]}, "eventTime": complete["eventTime"]}  # not slimmed


def test_events_kept_before_0046_are_put_in_columns_and_come_back_the_same(empty_db: str, tmp_path: Path) -> None:
    migrated_before(empty_db, tmp_path, "0046")
    events = hourly_events("default", hours=1) + [copy.deepcopy(event) for event in ODD_EVENTS[:2]]
    with connect(empty_db, autocommit=True) as conn:
        run = a_run(conn, events[0]["run"]["runId"])
        for index, event in enumerate(events):
            at = datetime.fromisoformat(events[0]["eventTime"]) + timedelta(minutes=index)
            skeleton, parts = kept_parts.split("default", event, run_id=events[0]["run"]["runId"], event_time=at)
            for key, part in parts.items():
                conn.execute("insert into lineage.openlineage_parts values (%s, 'default', %s) on conflict do nothing",
                             (key, Jsonb(part)))
            conn.execute("""insert into lineage.openlineage_events (event_id, run_key, event_time, namespaces, event)
                            values (%s, %s, %s, %s, %s)""",
                         (f"ol-{index}", run, at, ["default"] if index else ["default", "other"], Jsonb(skeleton)))

    apply_migrations(empty_db)

    keys = [kept_event_key(f"ol-{index}") for index in range(len(events))]
    with connect(empty_db) as conn:
        assert kept_events(conn, keys) == dict(zip(keys, events, strict=True))
    assert rows(empty_db, "select event_key::text from lineage.openlineage_events order by event_time") == [
        (key,) for key in keys]
    assert rows(empty_db, "select l.namespaces, count(*) from lineage.openlineage_events o "
                          "join lineage.namespace_lists l on l.list_key = o.namespace_list group by 1 order by 1") == [
        (["default"], 3), (["default", "other"], 1)]
    assert rows(empty_db, "select count(*) from information_schema.columns where table_schema = 'lineage' "
                          "and table_name = 'openlineage_events' and column_name in ('event_id', 'event', 'namespaces')"
                ) == [(0,)]


def test_a_cleanup_waits_for_a_compaction_re_using_the_parts_it_would_remove(
    warehouse_db: str, log_root: Path, settings_for, monkeypatch: pytest.MonkeyPatch  # type: ignore[no-untyped-def]
) -> None:
    """A compaction merged, not committed, whose new event re-uses a part of a deleted namespace's
    old runs (their engine facet): the cleanup removes the old events, then waits for that
    compaction before removing the parts no event uses; the new event comes back whole."""
    settings = settings_for(warehouse_db)
    with connect(warehouse_db, autocommit=True) as conn:
        namespace_store.create_namespace(conn, "team_a", None)
    emit(log_root, hourly_events("team_a", hours=1))
    run_compaction(None, interval_end=datetime.now(UTC) + timedelta(hours=1), settings=settings)
    with connect(warehouse_db, autocommit=True) as conn:
        namespace_store.delete_namespace(conn, "team_a", "admin")
        namespace_store.create_namespace(conn, "team_a", None)
    [new] = hourly_events("team_a", hours=1, start=datetime.now(UTC) + timedelta(seconds=1))[:1]
    new.update(job={"namespace": "team_a", "name": "other_dag.task"}, inputs=[], outputs=[])
    emit(log_root, [new])

    at_commit, go = threading.Event(), threading.Event()
    real = compaction_store.failpoint

    def paused(name: str) -> None:
        if name == "compaction.committing":
            at_commit.set()
            go.wait(60)
        real(name)

    monkeypatch.setattr(compaction_store, "failpoint", paused)
    compaction = threading.Thread(target=run_compaction, args=(None,), kwargs={
        "interval_end": datetime.now(UTC) + timedelta(hours=2), "settings": settings})
    compaction.start()
    assert at_commit.wait(60)
    cleaned: list[namespace_cleanup.CleanupSummary] = []
    cleanup = threading.Thread(target=lambda: cleaned.extend(namespace_cleanup.clean_pending(warehouse_db)))
    cleanup.start()
    cleanup.join(3)
    assert cleanup.is_alive()  # waiting for the compaction
    go.set()
    compaction.join(60)
    cleanup.join(60)

    assert cleaned[0].removed["openlineage_events"] == 2
    assert cleaned[0].removed["openlineage_parts"] == 5  # all but the engine facet the new event uses
    with connect(warehouse_db) as conn:
        ids = [row[0] for row in conn.execute("select event_key::text from lineage.openlineage_events")]
        assert list(kept_events(conn, ids).values()) == [new]


def test_an_event_touching_many_long_namespace_names_is_kept(
    warehouse_db: str, log_root: Path, settings_for, monkeypatch: pytest.MonkeyPatch  # type: ignore[no-untyped-def]
) -> None:
    """80 inputs in namespaces of 64 characters: a set of namespaces past what one btree entry
    holds (2,704 bytes, compressed) is kept, found by the MD5 of its text (an index on the array
    itself made every compaction of such an event fail: a review finding)."""
    letters = random.Random(5)
    names = [f"t{index:02d}_" + "".join(letters.choices(string.ascii_letters + string.digits, k=60))
             for index in range(80)]
    monkeypatch.setenv("LINEAGE_NAMESPACE_MAP", ",".join(f"s3://bucket{i}={name}" for i, name in enumerate(names)))
    [event] = hourly_events("default", hours=1)[:1]
    event["inputs"] = [{"namespace": f"s3://bucket{index}", "name": "t"} for index in range(80)]
    emit(log_root, [event])
    summary = run_compaction(None, interval_end=datetime.now(UTC) + timedelta(hours=1),
                             settings=settings_for(warehouse_db, LINEAGE_AUTO_CREATE_NAMESPACES="true"))
    assert (summary.quarantined, summary.events_compacted > 0) == (0, True)
    [(touched,)] = rows(warehouse_db, "select l.namespaces from lineage.openlineage_events o "
                                      "join lineage.namespace_lists l on l.list_key = o.namespace_list")
    assert sorted(touched) == sorted(["default", *names]) and len(",".join(touched)) > 2704
    with connect(warehouse_db) as conn:
        assert list(kept_events(conn, [row[0] for row in conn.execute(KEYS_IN_TIME_ORDER)]).values()) == [event]

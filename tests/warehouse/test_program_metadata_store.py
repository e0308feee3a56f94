"""SYSTEM metadata recorded by programs, through the real compaction and the metadata stage,
on real PostgreSQL: later event wins by event time across compactions, change records,
schemas, access-derived properties, quarantine of bad changes."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from lineage.client.run_context import RunContext
from lineage.model.metadata_entity import entity
from spark_jobs.compaction.job import run_compaction
from tests.factories import access, event, move_into_hour, write_log
from warehouse.db import metadata_store, schema_store
from warehouse.db.connection import connect
from warehouse.db.program_metadata_store import apply_program_metadata

END = datetime(2026, 11, 21, 6, 0, tzinfo=UTC)
PURCHASES = entity([("namespace", "default"), ("dataset", "purchases")])
ENTITY = [["namespace", "default"], ["dataset", "purchases"]]


def change(operation: str, moment: str, **payload: Any) -> dict[str, Any]:
    return event("metadata_change", {"entity": ENTITY, "operation": operation, **payload},
                 event_time=f"2026-11-21T05:{moment}Z")


def compact_and_apply(settings: Any, log_root: Path, lines: list[Any]) -> list[int]:
    write_log(log_root, lines)
    run_compaction(None, interval_end=END, settings=settings)
    with connect(settings.database_url) as conn:
        return apply_program_metadata(conn).change_ids


def system(url: str) -> dict[str, Any]:
    with connect(url) as conn:
        return metadata_store.read(conn, PURCHASES, "SYSTEM")["SYSTEM"]


def test_the_later_event_wins_even_when_it_was_compacted_first(
    warehouse_db: str, log_root: Path, settings_for  # type: ignore[no-untyped-def]
) -> None:
    settings = settings_for(warehouse_db)
    first = compact_and_apply(settings, log_root, [
        change("add_properties", "30:00", properties={"owner": "newer", "sla": "1h"}),
        change("add_tags", "31:00", tags=["curated"]),
    ])
    assert len(first) == 2
    late = compact_and_apply(settings, log_root, [  # older events, compacted later
        change("add_properties", "10:00", properties={"owner": "older", "format": "parquet"}),
        change("remove_tags", "11:00"),  # all tags, but older than 'curated'
        change("remove_properties", "40:00", keys=["sla"]),
    ])
    assert system(warehouse_db)["properties"] == {"format": "parquet", "owner": "newer"}
    assert system(warehouse_db)["tags"] == ["curated"]
    with connect(warehouse_db) as conn:
        history = metadata_store.history(conn, PURCHASES, datetime(2026, 1, 1, tzinfo=UTC),
                                         datetime(2100, 1, 1, tzinfo=UTC))
    assert [c.change_id for c in history] == first + late
    assert history[2].additions["properties"] == {"format": "parquet"}  # owner=older lost to the newer event
    assert history[-1].deletions["properties"] == {"sla": "1h"}
    assert {c.updater for c in history} == {
        "namespace=default,application=PurchaseHistory,type=mapreduce,program=PurchaseHistoryBuilder,run=run-1"}
    assert {c.scope for c in history} == {"SYSTEM"}


def test_reapplying_does_nothing_and_bad_changes_are_quarantined_with_the_reason(
    warehouse_db: str, log_root: Path, settings_for  # type: ignore[no-untyped-def]
) -> None:
    settings = settings_for(warehouse_db)
    bad = change("add_tags", "20:00", tags=["ok"])
    bad["payload"]["entity"] = [["dataset", "x"], ["namespace", "default"]]
    ids = compact_and_apply(settings, log_root, [change("add_tags", "20:00", tags=["ok"]), bad])
    assert len(ids) == 1
    with connect(warehouse_db) as conn:
        assert apply_program_metadata(conn).events == 0
        reasons = conn.execute("select reason from lineage.quarantine").fetchall()
    assert len(reasons) == 1 and "'namespace' must be the first key" in reasons[0][0]
    assert system(warehouse_db)["tags"] == ["ok"]


def test_a_reported_schema_and_the_access_log_give_system_metadata(
    warehouse_db: str, log_root: Path, settings_for  # type: ignore[no-untyped-def]
) -> None:
    settings = settings_for(warehouse_db)
    run = {"application": "Etl", "program_type": "spark", "program": "Loader", "run_id": "load-7"}
    with RunContext("default", "Etl", "spark", "Loader", run_id="load-8", log_root=str(log_root)) as ctx:
        ctx.write("purchases", at=datetime(2026, 11, 21, 5, 20, tzinfo=UTC))
        ctx.record_schema("purchases", [("customer", "string"), {"name": "amount", "type": "double",
                                                                 "nullable": False}])
    write_log(log_root, [event("run_start", run=run, event_time="2026-11-21T05:00:00Z"),
                         access("purchases", "read", run=run, event_time="2026-11-21T05:01:00Z")])
    move_into_hour(log_root, ctx.files)
    run_compaction(None, interval_end=END, settings=settings)
    with connect(warehouse_db) as conn:
        apply_program_metadata(conn)
    found = system(warehouse_db)["properties"]
    assert orjson.loads(found.pop("schema")) == {"fields": [
        {"name": "customer", "type": "string", "nullable": True},
        {"name": "amount", "type": "double", "nullable": False}]}
    assert found == {"creation-time": "2026-11-21T05:01:00+00:00", "last-update-time": "2026-11-21T05:20:00+00:00",
                     "last-updated-by": "namespace=default,application=Etl,type=spark,program=Loader,run=load-8"}


def test_an_incompatible_reported_schema_is_quarantined_with_the_reasons_and_a_compatible_one_versioned(
    warehouse_db: str, log_root: Path, settings_for  # type: ignore[no-untyped-def]
) -> None:
    settings = settings_for(warehouse_db)

    def reported(moment: str, *fields: tuple[str, str, bool]) -> dict[str, Any]:
        return change("set_schema", moment, schema={"fields": [
            {"name": name, "type": kind, "nullable": nullable} for name, kind, nullable in fields]})

    compact_and_apply(settings, log_root, [
        reported("10:00", ("id", "int", False), ("amount", "float", True)),
        reported("20:00", ("id", "long", False), ("amount", "float", True), ("note", "string", True)),
        reported("30:00", ("id", "int", False), ("note", "string", False)),  # narrows, removes, requires
        reported("40:00", ("id", "long", False), ("amount", "float", True), ("note", "string", True)),  # same
    ])
    with connect(warehouse_db) as conn:
        versions = schema_store.versions(conn, PURCHASES)
        quarantined = conn.execute("select reason, raw_text from lineage.quarantine").fetchall()
    assert [(v.version, [f["name"] for f in v.schema["fields"]]) for v in versions] == [
        (2, ["id", "amount", "note"]), (1, ["id", "amount"])]
    assert versions[0].created_by.endswith("run=run-1")
    assert len(quarantined) == 1
    assert quarantined[0][0] == (
        "metadata change: the new schema of namespace=default,dataset=purchases is incompatible with its current "
        "one: field 'id' narrows its type from long to int; field 'amount' is removed; "
        "field 'note' becomes required (it was optional)")
    assert orjson.loads(quarantined[0][1])["operation"] == "set_schema"
    assert [f["name"] for f in orjson.loads(system(warehouse_db)["properties"]["schema"])["fields"]] == [
        "id", "amount", "note"]


def test_two_applications_at_once_apply_each_change_once(
    warehouse_db: str, log_root: Path, settings_for  # type: ignore[no-untyped-def]
) -> None:
    """The scheduled DAG's metadata stage and the refresh's may run together: the second waits for
    the first's chunk and finds its events applied (one change record each, not two)."""
    from concurrent.futures import ThreadPoolExecutor

    from warehouse.db.program_metadata_store import apply_pending

    write_log(log_root, [change("add_tags", f"{minute:02d}:00", tags=[f"t{minute}"]) for minute in range(30)])
    run_compaction(None, interval_end=END, settings=settings_for(warehouse_db))
    with ThreadPoolExecutor(max_workers=2) as pool:
        jobs = [pool.submit(apply_pending, warehouse_db, auto_create_namespaces=False) for _ in range(2)]
        summaries = [job.result() for job in jobs]

    assert sorted(summary.events for summary in summaries) == [0, 30]
    assert sum(len(summary.change_ids) for summary in summaries) == 30
    assert sorted(system(warehouse_db)["tags"]) == sorted(f"t{minute}" for minute in range(30))


def test_observations_applied_a_chunk_at_a_time_leave_what_applying_each_alone_leaves(
        warehouse_db: str, log_root: Path, settings_for) -> None:  # type: ignore[no-untyped-def]
    """The chunk's unchanged observed schemas are applied together (``_Unchanged``): on a mixed,
    shuffled history of 4 datasets (observations repeating or changing the schema, properties,
    tags, "remove all" and declared schemas, older events arriving after newer ones), the
    metadata, its change records, the schema versions, the watermarks and the quarantine are
    what applying every change on its own gives."""
    import random

    from tests.conftest import create_scratch_db, drop_scratch_db

    chooser = random.Random(30)
    schemas = [[{"name": "id", "type": "long"}], [{"name": "id", "type": "long"}, {"name": "amount", "type": "double"}],
               [{"name": "id", "type": "string"}]]
    lines = []
    for index in range(240):
        subject = [["namespace", "default"], ["dataset", f"table_{chooser.randrange(4)}"]]
        roll = chooser.random()
        if roll < 0.75:
            payload = {"operation": "observe_schema", "schema": {"fields": schemas[chooser.randrange(3) if roll < 0.1
                                                                                   else index % 40 // 20]}}
        elif roll < 0.85:
            payload = {"operation": "add_properties", "properties": {"owner": chooser.choice(["a", "b"])}}
        elif roll < 0.9:
            payload = {"operation": "remove_properties"}  # all of them
        elif roll < 0.95:
            payload = {"operation": "add_tags", "tags": [chooser.choice(["pii", "gold"])]}
        else:
            payload = {"operation": "set_schema", "schema": {"fields": schemas[chooser.randrange(3)]}}
        moment = datetime(2026, 11, 21, 5, tzinfo=UTC).timestamp() + chooser.randrange(3000)
        lines.append(event("metadata_change", {"entity": subject, **payload}, schema_version=2,
                           event_time=datetime.fromtimestamp(moment, UTC).isoformat().replace("+00:00", "Z")))
    # and in a few seconds (one chunk): an observation, the same again (its watermark queued), then
    # "remove all" (the queued watermark is written first, as applying each alone writes it)
    steady = [["namespace", "default"], ["dataset", "steady"]]
    for second, payload in enumerate([{"operation": "observe_schema", "schema": {"fields": schemas[0]}},
                                      {"operation": "observe_schema", "schema": {"fields": schemas[0]}},
                                      {"operation": "remove_properties"}], start=1):
        lines.append(event("metadata_change", {"entity": steady, **payload}, schema_version=2,
                           event_time=f"2026-11-21T05:20:0{second}Z"))
    alone = create_scratch_db("metadata_alone")
    compared = ("select entity_key, scope, kind, key, value from lineage.metadata order by 1, 2, 3, 4",
                "select entity_key, scope, kind, key, event_time from lineage.metadata_event_times order by 1, 2, 3, 4",
                """select entity_key, version, schema, created_by, source, event_time, changes
                   from lineage.dataset_schema_versions order by 1, 2""",
                """select entity_key, scope, updater, previous, updated, additions, deletions
                   from lineage.metadata_changes order by change_id""",
                "select reason, raw_text from lineage.quarantine order by 1, 2",
                "select count(*) filter (where processed_at is null), count(*) from lineage.pending_events")
    try:
        results, unchanged = [], []
        for url, fast in ((warehouse_db, True), (alone, False)):
            write_log(log_root, lines)
            run_compaction(None, interval_end=END, settings=settings_for(url))
            with connect(url) as conn:
                summary = apply_program_metadata(conn, chunk=50, fast=fast)
                results.append((summary.events, len(summary.change_ids), summary.quarantined,
                                [conn.execute(query).fetchall() for query in compared]))
                unchanged.append(summary.unchanged)
            for path in log_root.rglob("*.jsonl"):
                path.unlink()
        assert results[0] == results[1]
        assert unchanged[0] > 50 and unchanged[1] == 0  # many went together; alone, none did
        assert results[0][0] == 243 and results[0][3][5] == [(0, 243)]  # every change applied or quarantined
        assert len(results[0][3][2]) >= 4  # schema versions were made (the history is not trivial)
    finally:
        drop_scratch_db(alone)

"""OpenLineage events through the real ``openlineage-python`` client and our in-process
transport, compacted by real Spark into a real PostgreSQL warehouse."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import column_lineage_dataset as cl
from openlineage.client.facet_v2 import schema_dataset

from spark_jobs.compaction.job import run_compaction
from spark_jobs.field_lineage.job import run_field_lineage
from tests.warehouse.test_compaction import rows
from warehouse.db import quarantine_store
from warehouse.db.connection import connect
from warehouse.db.field_lineage_store import FieldLineageQueries
from warehouse.db.namespace_store import create_namespace
from warehouse.db.program_metadata_store import apply_pending
from warehouse.db.quarantine_store import Selection, replay
from warehouse.service.field_lineage_response import FieldKey, field_lineage
from warehouse.service.field_transformations import TransformationFilter

RUN_ID = "0195f3b1-7a3e-7c6e-9d3f-2f1c0b8e4a11"
START = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)
PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/client/python"


def client_for(log_root: Path) -> OpenLineageClient:
    return OpenLineageClient(config={"transport": {"type": "lineage.transport.openlineage.RawLogTransport",
                                                   "log_root": str(log_root)}})


def run_event(state: RunState, at: datetime, *, with_io: bool) -> RunEvent:
    orders = InputDataset(namespace="postgres://db:5432", name="shop.public.orders", facets={
        "schema": schema_dataset.SchemaDatasetFacet(fields=[
            schema_dataset.SchemaDatasetFacetFields(name="id", type="integer"),
            schema_dataset.SchemaDatasetFacetFields(name="amount", type="numeric")])})
    totals = OutputDataset(namespace="s3://lake", name="marts/order totals", facets={
        "columnLineage": cl.ColumnLineageDatasetFacet(fields={
            "order_id": cl.Fields(inputFields=[cl.InputField(
                namespace="postgres://db:5432", name="shop.public.orders", field="id",
                transformations=[cl.Transformation(type="DIRECT", subtype="IDENTITY", masking=False)])]),
            "total": cl.Fields(inputFields=[cl.InputField(
                namespace="postgres://db:5432", name="shop.public.orders", field="amount",
                transformations=[cl.Transformation(type="DIRECT", subtype="AGGREGATION", description="sum(amount)",
                                                   masking=False)])])})})
    return RunEvent(eventType=state, eventTime=at.isoformat(), run=Run(runId=RUN_ID),
                    job=Job(namespace="default", name="orders_dag.build totals"), producer=PRODUCER,
                    inputs=[orders] if with_io else [], outputs=[totals] if with_io else [])


def test_a_run_accumulates_over_its_events_in_any_order_and_across_compactions(
    warehouse_db: str, log_root: Path, settings_for  # type: ignore[no-untyped-def]
) -> None:
    settings = settings_for(warehouse_db)
    client = client_for(log_root)
    later = datetime.now(UTC) + timedelta(hours=1)
    client.emit(run_event(RunState.COMPLETE, START + timedelta(minutes=5), with_io=True))  # COMPLETE first
    client.emit(run_event(RunState.COMPLETE, START + timedelta(minutes=5), with_io=True))  # re-sent: counted once
    first = run_compaction(None, interval_end=later, settings=settings)
    assert first.duplicates > 0
    assert rows(warehouse_db, "select status, started_at, stopped_at from lineage.runs") == [
        ("completed", None, START + timedelta(minutes=5))]

    client.emit(run_event(RunState.START, START, with_io=False))
    client.emit(run_event(RunState.RUNNING, START + timedelta(minutes=1), with_io=True))
    run_compaction(None, interval_end=later, settings=settings)

    assert rows(warehouse_db, "select p.application, p.program_type, p.program, r.run_id, r.status, r.started_at, "
                              "r.stopped_at from lineage.runs r join lineage.programs p using (program_key)") == [
        ("default", "openlineage", "orders_dag.build totals", RUN_ID, "completed", START,
         START + timedelta(minutes=5))]
    assert sorted(rows(warehouse_db, "select dataset, access from lineage.access_details")) == [
        ("postgres://db:5432/shop.public.orders", "read"), ("s3://lake/marts/order totals", "write")]

    summary = run_field_lineage(None, settings)
    assert summary.records >= 1 and summary.sets_added == 1
    paths = dict(rows(warehouse_db, "select field, path from lineage.field_paths"))
    assert set(paths) == {"order_id", "total"}
    total = next(op for op in paths["total"]["operations"] if op["type"] == "transform")
    assert (total["name"], total["inputs"]) == ("aggregation", [{
        "field": "amount", "origin": "read:1",
        "transformation": {"type": "DIRECT", "subtype": "AGGREGATION", "description": "sum(amount)",
                           "masking": False}}])
    assert paths["total"]["sources"] == [{"namespace": "default", "type": "dataset",
                                          "name": "postgres://db:5432/shop.public.orders", "field": "amount"}]

    apply_pending(warehouse_db, auto_create_namespaces=False)
    (schema,) = rows(warehouse_db, "select value from lineage.metadata where key = 'schema' and "
                                   "entity_key = 'namespace=default,dataset=postgres://db:5432/shop.public.orders'")
    assert '"name":"amount"' in schema[0]


def test_a_malformed_event_from_the_transport_is_quarantined_with_its_reason(
    warehouse_db: str, log_root: Path, settings_for  # type: ignore[no-untyped-def]
) -> None:
    client = client_for(log_root)
    client.transport.emit({"eventTime": "2026-11-23T09:00:00Z", "eventType": "START", "run": {},
                           "job": {"namespace": "default", "name": "j"}, "producer": "p"})
    good = run_event(RunState.START, START, with_io=False)
    client.emit(good)
    summary = run_compaction(None, interval_end=datetime.now(UTC) + timedelta(hours=1),
                             settings=settings_for(warehouse_db))
    assert summary.quarantined == 1
    assert rows(warehouse_db, "select reason from lineage.quarantine") == [("OpenLineage event: run.runId is missing",)]
    assert rows(warehouse_db, "select run_id, status from lineage.runs") == [(RUN_ID, "running")]


ORDERS = {"namespace": "postgres://db:5432", "name": "shop.public.orders"}


def test_column_lineage_transformations_reach_field_lineage_answers_and_the_direct_only_reading(
    warehouse_db: str, log_root: Path, settings_for  # type: ignore[no-untyped-def]
) -> None:
    """total = sum(amount) group by customer, for paid orders only (a dataset-level FILTER);
    note is copied with no transformation given (old producers); label comes from a transformation
    of a type the spec does not have, which the mapping leaves out."""
    def source(field: str, *transformations: cl.Transformation) -> cl.InputField:
        return cl.InputField(**ORDERS, field=field, transformations=list(transformations) or None)

    totals = OutputDataset(namespace="s3://lake", name="marts/totals", facets={
        "columnLineage": cl.ColumnLineageDatasetFacet(
            fields={"total": cl.Fields(inputFields=[
                        source("amount", cl.Transformation(type="DIRECT", subtype="AGGREGATION",
                                                           description="sum(amount)", masking=False)),
                        source("customer", cl.Transformation(type="INDIRECT", subtype="GROUP_BY"))]),
                    "note": cl.Fields(inputFields=[source("note")]),
                    "label": cl.Fields(inputFields=[source("label", cl.Transformation(type="LATERAL",
                                                                                      subtype="EXPLODE"))])},
            dataset=[source("status", cl.Transformation(type="INDIRECT", subtype="FILTER",
                                                        description="status = 'paid'"))])})
    client = client_for(log_root)
    for state, at, outputs in ((RunState.START, START, []),
                               (RunState.COMPLETE, START + timedelta(minutes=5), [totals])):
        client.emit(RunEvent(eventType=state, eventTime=at.isoformat(), run=Run(runId=RUN_ID),
                             job=Job(namespace="default", name="totals"), producer=PRODUCER, outputs=outputs))
    settings = settings_for(warehouse_db)
    run_compaction(None, interval_end=datetime.now(UTC) + timedelta(hours=1), settings=settings)
    assert run_field_lineage(None, settings).quarantined == 0
    window = (START - timedelta(hours=1), START + timedelta(hours=1))

    def answer(field: str, transformations: TransformationFilter = "all") -> list[dict[str, Any]]:
        key = FieldKey("default", "s3://lake/marts/totals", field)
        with connect(warehouse_db) as conn:
            paths: list[dict[str, Any]] = field_lineage(FieldLineageQueries(conn, *window), key, 0, 1, view="detailed",
                                                        transformations=transformations)["paths"]
            return paths

    def edges(path: dict[str, Any]) -> list[tuple[str, str | None, str | None]]:
        fields = {node["id"]: node["field"] for node in path["graph"]["nodes"]}
        kinds = [(fields[e["from"]], e.get("transformation")) for e in path["graph"]["edges"]]
        return [(field, kind and kind["type"], kind and kind.get("subtype")) for field, kind in kinds]

    (total,) = answer("total")
    assert sorted(edges(total), key=str) == sorted([
        ("amount", "DIRECT", "AGGREGATION"), ("customer", "INDIRECT", "GROUP_BY"), ("status", "INDIRECT", "FILTER"),
        ("total", None, None)], key=str)  # the last: the write, which records none
    (direct,) = answer("total", transformations="direct")
    assert [s["field"] for s in direct["sources"]] == ["amount"]
    assert sorted(edges(direct), key=str) == sorted([("amount", "DIRECT", "AGGREGATION"), ("total", None, None)],
                                                    key=str)
    # note: no transformation given, shown as none; label: the unknown type is left out by the mapping.
    # Both keep their own source directly, and the dataset-level FILTER as an INDIRECT input.
    for field in ("note", "label"):
        (every,) = answer(field)
        assert sorted(edges(every), key=str) == sorted([(field, None, None), ("status", "INDIRECT", "FILTER"),
                                                        (field, None, None)], key=str)
        (kept,) = answer(field, transformations="direct")
        assert [s["field"] for s in kept["sources"]] == [field]


def test_two_field_lineage_jobs_at_once_process_each_record_once(
    spark, warehouse_db: str, log_root: Path, settings_for  # type: ignore[no-untyped-def]
) -> None:
    """The scheduled DAG's field lineage and the refresh's may run together: one waits for the
    other's chunk (a lock per chunk transaction) and finds those records processed."""
    from concurrent.futures import ThreadPoolExecutor

    settings = settings_for(warehouse_db)
    client = client_for(log_root)
    for minute in range(6):  # six COMPLETE events of distinct runs: six records, one operation set
        event = run_event(RunState.COMPLETE, START + timedelta(minutes=minute), with_io=True)
        event.run = Run(runId=f"0195f3b1-7a3e-7c6e-9d3f-2f1c0b8e4a{minute:02d}")
        client.emit(event)
    run_compaction(None, interval_end=datetime.now(UTC) + timedelta(hours=1), settings=settings)
    (pending,) = rows(warehouse_db, "select count(*) from lineage.pending_events where kind = 'field_operations'")

    with ThreadPoolExecutor(max_workers=2) as pool:
        # one on Spark, one in its own process (a small batch's path): chunks of 2 records
        jobs = [pool.submit(run_field_lineage, session, settings, 2) for session in (spark, None)]
        summaries = [job.result() for job in jobs]

    assert sum(summary.records for summary in summaries) == pending[0] == 6
    assert sum(summary.sets_added for summary in summaries) == 1
    assert rows(warehouse_db, "select count(*) from lineage.field_lineage_runs") == [(6,)]
    assert rows(warehouse_db, "select count(*) from lineage.pending_events where kind = 'field_operations' "
                              "and processed_at is null") == [(0,)]


def test_a_replay_needs_the_namespaces_the_compaction_needs_and_no_other(
    warehouse_db: str, log_root: Path, settings_for, monkeypatch  # type: ignore[no-untyped-def]
) -> None:
    """A line writing into s3://lake whose column lineage names a field of s3://ext: the merge sets
    aside what falls in lake only (ext is only named), so once lake exists the replay is taken,
    ext missing or not (it was refused for ext: a review finding)."""
    monkeypatch.setenv("LINEAGE_NAMESPACE_MAP", "s3://lake=lake,s3://ext=ext")
    settings = settings_for(warehouse_db)
    later = datetime.now(UTC) + timedelta(hours=1)
    ext_field = cl.InputField(namespace="s3://ext", name="raw/orders", field="amount")
    written = OutputDataset(namespace="s3://lake", name="marts/spend", facets={
        "columnLineage": cl.ColumnLineageDatasetFacet(fields={"spend": cl.Fields(inputFields=[ext_field])})})
    client_for(log_root).emit(RunEvent(eventType=RunState.COMPLETE, eventTime=(later - timedelta(hours=2)).isoformat(),
                                       run=Run(runId=RUN_ID), job=Job(namespace="default", name="spend"),
                                       producer=PRODUCER, outputs=[written]))
    first = run_compaction(None, interval_end=later, settings=settings)
    assert first.quarantined == 1
    with connect(warehouse_db) as conn:
        early = replay(conn, str(log_root), Selection(), dry_run=True, namespace_map=settings.namespace_map)
        assert (early.replayed, early.still_refused) == (0, {"namespace 'lake' does not exist": 1})
        create_namespace(conn, "lake", None)
        conn.commit()
        replayed = replay(conn, str(log_root), Selection(), namespace_map=settings.namespace_map)
    assert (replayed.replayed, replayed.still_refused) == (1, {})
    second = run_compaction(None, interval_end=later + timedelta(hours=1), settings=settings)
    assert second.quarantined == 0 and second.events_compacted >= 1
    assert rows(warehouse_db, "select dataset, access from lineage.access_details") == [("s3://lake/marts/spend",
                                                                                          "write")]


def test_a_line_partly_quarantined_before_the_ledger_kept_lines_once_still_merges_what_was_set_aside(
    warehouse_db: str, log_root: Path, settings_for, monkeypatch  # type: ignore[no-untyped-def]
) -> None:
    """The ledger before it recorded lines once: a partial line recorded its kept event's id, which
    is now the line's key, and its quarantined rows were staged without ``line_id``. Migration
    0043's backfill removes such keys, so the line, sent again once its namespace exists, merges
    what was set aside (it was dropped whole as compacted: a review finding)."""
    monkeypatch.setenv("LINEAGE_NAMESPACE_MAP", "s3://lake=lake")
    settings = settings_for(warehouse_db)
    later = datetime.now(UTC) + timedelta(hours=1)
    event = run_event(RunState.COMPLETE, later - timedelta(hours=2), with_io=True)
    client_for(log_root).emit(event)
    assert run_compaction(None, interval_end=later, settings=settings).quarantined == 1
    [line_id] = {json.loads(line)["event_id"] for path in log_root.rglob("*.jsonl")
                 for line in path.read_text().splitlines()}  # the line's id: its kept event's
    with connect(warehouse_db) as conn:  # as the ledger before left it
        conn.execute("""insert into lineage.event_ids (event_key, event_time)
                        select md5(r.namespace || '/' || %s)::uuid, o.event_time
                        from lineage.openlineage_events o join lineage.runs r using (run_key)
                        where o.event_key = md5(%s)::uuid""", (line_id, line_id))
        conn.execute("update lineage.quarantine set raw_text = (raw_text::jsonb - 'line_id')::text")
        assert quarantine_store.forget_old_partial_line_keys(conn) == 1
        assert quarantine_store.forget_old_partial_line_keys(conn) == 0
        create_namespace(conn, "lake", None)
        conn.commit()
    client_for(log_root).emit(event)
    again = run_compaction(None, interval_end=later + timedelta(hours=1), settings=settings)
    assert (again.events_compacted, again.quarantined) == (2, 0)  # the write and its column lineage
    assert sorted(rows(warehouse_db, "select dataset, access from lineage.access_details")) == [
        ("postgres://db:5432/shop.public.orders", "read"), ("s3://lake/marts/order totals", "write")]


def test_a_partly_quarantined_line_sent_again_is_a_duplicate_but_for_what_is_set_aside_again(
    warehouse_db: str, log_root: Path, settings_for, monkeypatch  # type: ignore[no-untyped-def]
) -> None:
    """Its namespace still missing, a line whose write was set aside arrives again in another file:
    its kept event (whose id the partial line could not record: it is the line's) is known by the
    kept events, so nothing is compacted again and no run is touched; duplicates are counted as
    they are dropped, so a line with two events set aside for one quarantine row counts none
    (review findings)."""
    monkeypatch.setenv("LINEAGE_NAMESPACE_MAP", "s3://lake=lake")
    settings = settings_for(warehouse_db)
    later = datetime.now(UTC) + timedelta(hours=1)
    recent = later - timedelta(hours=2)
    event = run_event(RunState.COMPLETE, recent, with_io=True)
    event.outputs = [*event.outputs, OutputDataset(namespace="s3://lake", name="marts/order counts")]
    client_for(log_root).emit(event)
    first = run_compaction(None, interval_end=later, settings=settings)
    # 8 events (the kept event, the run's end, a read, two writes, field operations, 2 schemas):
    # both writes of s3://lake and the column lineage written into it set aside, one quarantine row
    # for the line
    assert (first.events_read, first.events_compacted, first.duplicates, first.quarantined) == (8, 5, 0, 1)

    client_for(log_root).emit(event)  # the same line again, in another file
    second = run_compaction(None, interval_end=later + timedelta(minutes=1), settings=settings)
    assert (second.events_read, second.events_compacted, second.duplicates, second.quarantined,
            second.runs_touched) == (8, 0, 5, 1, 0)
    assert rows(warehouse_db, "select count(*) from lineage.openlineage_events") == [(1,)]


def test_the_ledger_records_an_openlineage_line_once_and_a_replayed_line_merges_only_what_was_set_aside(
    warehouse_db: str, log_root: Path, settings_for, monkeypatch  # type: ignore[no-untyped-def]
) -> None:
    """An OpenLineage line stands for several events; the ledger of compacted ids records the line
    once. A line some of whose events were quarantined (the lake namespace does not exist yet)
    records the events merged instead, so once the namespace exists its replay is taken and
    merges only what was set aside; a line delivered again after that is a duplicate as a whole."""
    monkeypatch.setenv("LINEAGE_NAMESPACE_MAP", "s3://lake=lake")
    settings = settings_for(warehouse_db)
    later = datetime.now(UTC) + timedelta(hours=1)
    recent = later - timedelta(hours=2)  # the ledger keeps ids LINEAGE_EVENT_ID_RETENTION_DAYS
    client_for(log_root).emit(run_event(RunState.COMPLETE, recent, with_io=True))
    first = run_compaction(None, interval_end=later, settings=settings)
    # 7 events (kept event, run end, read, write, field operations, 2 schemas): the write of
    # s3://lake and the column lineage written into it are set aside
    assert (first.events_read, first.events_compacted, first.quarantined) == (7, 5, 1)
    assert rows(warehouse_db, "select count(*) from lineage.quarantine") == [(1,)]
    assert rows(warehouse_db, "select dataset, access from lineage.access_details") == [
        ("postgres://db:5432/shop.public.orders", "read")]
    # the kept events' own ids, not the line's: the line is not compacted as a whole
    assert rows(warehouse_db, "select count(*) from lineage.event_ids") == [(first.events_compacted - 1,)]

    with connect(warehouse_db) as conn:  # replayed while the lake namespace is missing: still refused
        early = replay(conn, str(log_root), Selection())
    assert (early.replayed, early.still_refused) == (0, {"namespace 'lake' does not exist": 1})
    with connect(warehouse_db) as conn:
        create_namespace(conn, "lake", None)
        conn.commit()
        replayed = replay(conn, str(log_root), Selection())
    assert (replayed.replayed, replayed.not_replayable) == (1, {})
    second = run_compaction(None, interval_end=later + timedelta(hours=1), settings=settings)
    # what was set aside only (the write and its column lineage): the line's kept event (whose id is
    # the line's, which the partial line could not record) is known by the kept events themselves
    assert (second.events_read, second.events_compacted, second.duplicates, second.quarantined) == (7, 2, 5, 0)
    assert sorted(rows(warehouse_db, "select dataset, access from lineage.access_details")) == [
        ("postgres://db:5432/shop.public.orders", "read"), ("s3://lake/marts/order totals", "write")]
    assert rows(warehouse_db, "select count(*) from lineage.openlineage_events") == [(1,)]

    # the same line again: the replay recorded the line itself, so all of it is a duplicate
    client_for(log_root).emit(run_event(RunState.COMPLETE, recent, with_io=True))
    third = run_compaction(None, interval_end=later + timedelta(hours=2), settings=settings)
    assert (third.events_compacted, third.quarantined) == (0, 0) and third.duplicates == third.events_read > 2
    with connect(warehouse_db) as conn:
        again = replay(conn, str(log_root), Selection(include_replayed=True))
    assert again.not_replayable == {"already compacted (quarantined by a later stage: field lineage or metadata)": 1}


def test_a_whole_openlineage_line_takes_one_ledger_key(
    warehouse_db: str, log_root: Path, settings_for  # type: ignore[no-untyped-def]
) -> None:
    recent = datetime.now(UTC) - timedelta(hours=1)  # the ledger keeps ids LINEAGE_EVENT_ID_RETENTION_DAYS
    client_for(log_root).emit(run_event(RunState.COMPLETE, recent, with_io=True))
    summary = run_compaction(None, interval_end=datetime.now(UTC) + timedelta(hours=1),
                             settings=settings_for(warehouse_db))
    assert summary.events_compacted > 4 and summary.quarantined == 0
    assert rows(warehouse_db, "select count(*) from lineage.event_ids") == [(1,)]

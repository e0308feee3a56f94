"""Observed schemas are facts (issue 30): an OpenLineage ``schema`` facet that differs from the
dataset's schema is a new version with what it changed, whatever it changes; declared schemas
keep the compatibility rule. Events as Airflow's OpenLineage provider writes them (its recorded
SQLExecuteQueryOperator task, ``tests/fixtures/openlineage``), through the real client's
transport, compacted (in process) into real PostgreSQL and applied by the metadata stage."""

from __future__ import annotations

import copy
import json
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest

from lineage.errors import IncompatibleSchemaError
from lineage.model.dataset_schema import schema
from lineage.model.metadata_entity import entity
from spark_jobs.compaction.job import run_compaction
from spark_jobs.field_lineage.job import run_field_lineage
from tests.factories import event, write_log
from tests.warehouse.test_openlineage_compaction import client_for
from warehouse.db import metadata_store, schema_store
from warehouse.db.connection import connect
from warehouse.db.namespace_store import create_namespace
from warehouse.db.program_metadata_store import apply_program_metadata
from warehouse.db.quarantine_store import Selection, replay

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "openlineage" / \
    "airflow_sql_execute_query_postgres_column_lineage.json"
TABLE = "postgres://postgres:5432/food_delivery.public.popular_orders_day_of_week"
SOURCE = "postgres://postgres:5432/food_delivery.public.top_delivery_times"
POPULAR = entity([("namespace", "default"), ("dataset", TABLE)])
DAY = datetime(2026, 11, 18, 9, 4, tzinfo=UTC)
# The table as the provider read it from information_schema after each day's CREATE TABLE ... AS SELECT.
DAYS = [
    [("order_day_of_week", "varchar"), ("order_placed_on", "timestamp"), ("orders_placed", "int4")],
    [("order_day_of_week", "varchar"), ("order_date", "date"), ("orders_placed", "int8")],  # recreated
    [("day_of_week", "text"), ("order_date", "date"), ("orders_placed", "int8")],  # and again
]


def provider_task_run(day: int, fields: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """The START and COMPLETE the provider sends for the task's run on ``day`` (0, 1, 2): its
    recorded events with that day's run id, times and the output table's schema facet."""
    recorded = json.loads(FIXTURE.read_text())
    run_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"popular-orders/{day}"))
    events = []
    for offset, original in zip((0, 3), recorded, strict=True):
        sent = copy.deepcopy(original)
        sent["eventTime"] = (DAY + timedelta(days=day, minutes=offset)).isoformat()
        sent["run"]["runId"] = run_id
        sent["outputs"][0]["facets"]["schema"]["fields"] = [{"name": name, "type": kind} for name, kind in fields]
        events.append(sent)
    return events


def observe(warehouse_db: str, log_root: Path, settings: Any, *events: dict[str, Any]) -> None:
    """Send ``events`` through the client's transport, compact them and apply the metadata."""
    client = client_for(log_root)
    for sent in events:
        client.transport.emit(sent)
    run_compaction(None, interval_end=datetime.now(UTC) + timedelta(hours=1), settings=settings)
    with connect(warehouse_db) as conn:
        apply_program_metadata(conn)


def versions(warehouse_db: str) -> list[schema_store.SchemaVersionRow]:
    with connect(warehouse_db) as conn:
        return schema_store.versions(conn, POPULAR)


def names(row: schema_store.SchemaVersionRow) -> list[str]:
    return [f["name"] for f in row.schema["fields"]]


def quarantined(warehouse_db: str) -> list[tuple[str]]:
    with connect(warehouse_db) as conn:
        return conn.execute("select reason from lineage.quarantine").fetchall()


def test_a_table_recreated_with_other_columns_over_three_days_is_three_versions_with_their_changes(
    warehouse_db: str, log_root: Path, settings_for  # type: ignore[no-untyped-def]
) -> None:
    settings = settings_for(warehouse_db)
    for day, fields in enumerate(DAYS):
        observe(warehouse_db, log_root, settings, *provider_task_run(day, fields))
    kept = versions(warehouse_db)
    assert quarantined(warehouse_db) == []
    assert [(v.version, v.source, names(v)) for v in kept] == [
        (3, "observed", ["day_of_week", "order_date", "orders_placed"]),
        (2, "observed", ["order_day_of_week", "order_date", "orders_placed"]),
        (1, "observed", ["order_day_of_week", "order_placed_on", "orders_placed"])]
    assert [v.event_time for v in kept] == [DAY + timedelta(days=day) for day in (2, 1, 0)]  # each day's START
    assert kept[0].changes == {
        "added": [{"name": "day_of_week", "type": "text", "nullable": True}],
        "removed": [{"name": "order_day_of_week", "type": "varchar", "nullable": True}],
        "retyped": [], "nullability": [], "reordered": False}
    assert kept[1].changes == {
        "added": [{"name": "order_date", "type": "date", "nullable": True}],
        "removed": [{"name": "order_placed_on", "type": "timestamp", "nullable": True}],
        "retyped": [{"name": "orders_placed", "before": "int4", "after": "int8"}], "nullability": [],
        "reordered": False}
    assert kept[2].changes is None  # the first version
    assert kept[0].created_by.startswith("namespace=default,application=http://airflow-host:8081,type=openlineage,")
    with connect(warehouse_db) as conn:
        current = schema_store.current(conn, POPULAR)
        system = metadata_store.read(conn, POPULAR, "SYSTEM")["SYSTEM"]["properties"]
        source = schema_store.versions(conn, entity([("namespace", "default"), ("dataset", SOURCE)]))
    assert current is not None and [f.name for f in current.fields] == names(kept[0])
    assert orjson.loads(system["schema"]) == kept[0].schema
    assert len(source) == 1  # the input's schema, reported by every event the same: one version


def test_the_same_observation_again_is_no_version_and_a_return_to_an_old_schema_is_one(
    warehouse_db: str, log_root: Path, settings_for  # type: ignore[no-untyped-def]
) -> None:
    settings = settings_for(warehouse_db)
    first = provider_task_run(0, DAYS[0])
    observe(warehouse_db, log_root, settings, *first)
    observe(warehouse_db, log_root, settings, *first)  # re-sent: the same events
    observe(warehouse_db, log_root, settings, *provider_task_run(1, DAYS[0]))  # the next day, the same table
    assert [v.version for v in versions(warehouse_db)] == [1]
    observe(warehouse_db, log_root, settings, *provider_task_run(2, DAYS[1]), *provider_task_run(3, DAYS[0]))
    kept = versions(warehouse_db)
    assert [(v.version, names(v)) for v in kept] == [(3, names(kept[2])), (2, [n for n, _ in DAYS[1]]),
                                                     (1, [n for n, _ in DAYS[0]])]
    assert kept[0].changes is not None and [f["name"] for f in kept[0].changes["added"]] == ["order_placed_on"]


def test_an_observation_older_than_the_current_version_is_no_version_whatever_the_arrival_order(
    warehouse_db: str, log_root: Path, settings_for  # type: ignore[no-untyped-def]
) -> None:
    """Day 3 is compacted first, days 1 and 2 after it: the schema stays day 3's and the late
    observations are no versions (and are not quarantined); day 4 then changes it again."""
    settings = settings_for(warehouse_db)
    observe(warehouse_db, log_root, settings, *provider_task_run(2, DAYS[2]))
    observe(warehouse_db, log_root, settings, *provider_task_run(0, DAYS[0]), *provider_task_run(1, DAYS[1]))
    kept = versions(warehouse_db)
    assert [(v.version, names(v)) for v in kept] == [(1, [n for n, _ in DAYS[2]])]
    assert quarantined(warehouse_db) == []
    with connect(warehouse_db) as conn:
        current = schema_store.current(conn, POPULAR)
    assert current is not None and [f.name for f in current.fields] == [n for n, _ in DAYS[2]]
    observe(warehouse_db, log_root, settings, *provider_task_run(3, DAYS[0]))
    kept = versions(warehouse_db)
    assert [v.version for v in kept] == [2, 1] and names(kept[0]) == [n for n, _ in DAYS[0]]
    assert kept[0].changes is not None and len(kept[0].changes["removed"]) == 2


def test_an_observation_older_than_a_version_declared_through_the_api_changes_nothing(
    warehouse_db: str, log_root: Path, settings_for  # type: ignore[no-untyped-def]
) -> None:
    """A version PUT through the API holds from the request's time: an observation reported
    before it, compacted after, is no version; one reported after it is."""
    declared = schema([("order_day_of_week", "varchar"), ("orders_placed", "int8")])
    with connect(warehouse_db) as conn:
        assert schema_store.set_schema(conn, POPULAR, declared, "admin").version == 1
    observe(warehouse_db, log_root, settings_for(warehouse_db), *provider_task_run(0, DAYS[0]))  # 2026-11-18
    kept = versions(warehouse_db)
    assert [(v.version, v.source) for v in kept] == [(1, "declared")]
    with connect(warehouse_db) as conn:
        later = datetime.now(UTC) + timedelta(minutes=1)
        update = schema_store.prepare_update(conn, POPULAR, schema(DAYS[1]), "observed", later)
    assert update is not None and update.previous == declared


def test_a_declared_incompatible_schema_is_still_quarantined_after_observed_versions(
    warehouse_db: str, log_root: Path, settings_for  # type: ignore[no-untyped-def]
) -> None:
    settings = settings_for(warehouse_db)
    observe(warehouse_db, log_root, settings, *provider_task_run(0, DAYS[0]), *provider_task_run(1, DAYS[1]))
    declared = event("metadata_change", {"entity": [list(part) for part in POPULAR.parts], "operation": "set_schema",
                                         "schema": {"fields": [{"name": "orders_placed", "type": "int4"}]}},
                     event_time=(DAY + timedelta(days=2)).isoformat().replace("+00:00", "Z"))
    write_log(log_root, [declared], hour="dt=2026-11-20/hour=09")
    observe(warehouse_db, log_root, settings)
    assert [v.version for v in versions(warehouse_db)] == [2, 1]
    (reason,) = quarantined(warehouse_db)
    assert reason[0] == (
        f"metadata change: the new schema of {POPULAR.render()} is incompatible with its current one: "
        "field 'order_day_of_week' is removed; field 'order_date' is removed; "
        "field 'orders_placed' changes its type from int8 to int4")
    with connect(warehouse_db) as conn, pytest.raises(IncompatibleSchemaError):  # and through the API's store
        schema_store.set_schema(conn, POPULAR, schema([("orders_placed", "int8")]), "admin")


def test_the_migration_fills_the_changes_of_versions_kept_before_it(warehouse_db: str) -> None:
    with connect(warehouse_db) as conn:
        for fields in DAYS:
            schema_store.record_version(conn, POPULAR, schema_store.SchemaUpdate(schema(fields), None, "declared",
                                                                                 None), "admin")
        conn.execute("update lineage.dataset_schema_versions set changes = null")
        assert schema_store.backfill_changes(conn) == 2
        kept = schema_store.versions(conn, POPULAR)
    assert [v.changes is None for v in kept] == [False, False, True]
    assert kept[1].changes is not None and kept[1].changes["retyped"] == [
        {"name": "orders_placed", "before": "int4", "after": "int8"}]


def test_a_dataset_event_declares_the_dataset_with_its_schema_facets_and_aliases_and_no_run(
    warehouse_db: str, log_root: Path, settings_for  # type: ignore[no-untyped-def]
) -> None:
    """The OpenLineage Python client's own DatasetEvent (its serde example), as a catalog or a
    design-time tool sends one: no run, the dataset's schema, documentation, owners, symlinks."""
    recorded = json.loads((FIXTURE.parent / "python_client_dataset_event.json").read_text())
    declared = copy.deepcopy(recorded)
    declared["eventTime"] = DAY.isoformat()
    declared["dataset"] = {"namespace": "s3://lake", "name": "sales/orders", "facets": {
        **recorded["dataset"]["facets"],
        "documentation": {"_producer": "p", "_schemaURL": "s", "description": "every order, one row each"},
        "ownership": {"_producer": "p", "_schemaURL": "s", "owners": [{"name": "team:sales", "type": "TEAM"}]},
        "symlinks": {"_producer": "p", "_schemaURL": "s",
                     "identifiers": [{"namespace": "hive://metastore", "name": "sales.orders", "type": "TABLE"}]}}}
    changed = copy.deepcopy(declared)
    changed["eventTime"] = (DAY + timedelta(days=1)).isoformat()
    changed["dataset"]["facets"]["schema"]["fields"].append({"name": "c", "type": "int"})
    settings = settings_for(warehouse_db)
    observe(warehouse_db, log_root, settings, declared)
    observe(warehouse_db, log_root, settings, changed)
    orders = entity([("namespace", "default"), ("dataset", "s3://lake/sales/orders")])
    with connect(warehouse_db) as conn:
        kept = schema_store.versions(conn, orders)
        assert conn.execute("select count(*) from lineage.runs").fetchone() == (0,)  # a declaration is no run
        facets = dict(conn.execute("""select f.name, f.facet from lineage.dataset_facets f
                                      join lineage.datasets d using (dataset_key)
                                      where d.dataset = 's3://lake/sales/orders'""").fetchall())
        aliases = conn.execute("select alias, alias_type from lineage.dataset_aliases").fetchall()
    assert quarantined(warehouse_db) == []
    assert [(v.version, v.source, names(v), v.created_by) for v in kept] == [
        (2, "observed", ["a", "b", "c"], "declared without a run"),
        (1, "observed", ["a", "b"], "declared without a run")]
    assert facets["documentation"]["description"] == "every order, one row each"
    assert facets["ownership"]["owners"] == [{"name": "team:sales", "type": "TEAM"}]
    assert "schema" not in facets and "symlinks" not in facets  # kept in forms of their own
    assert aliases == [("hive://metastore/sales.orders", "TABLE")]


def test_a_schema_of_a_namespace_not_created_yet_is_set_aside_with_its_line_and_replayed_with_it(
    warehouse_db: str, log_root: Path, settings_for, monkeypatch  # type: ignore[no-untyped-def]
) -> None:
    """Before: the schema of a dataset in a namespace that did not exist passed the compaction (only
    accesses were checked) and the metadata stage quarantined it alone, where no replay reaches:
    once the namespace existed, the replayed line gave the write and never the schema. Now it is
    set aside with its line's write, and the replay brings both."""
    monkeypatch.setenv("LINEAGE_NAMESPACE_MAP", "postgres://postgres:5432=lake")
    settings = settings_for(warehouse_db)
    (start, complete) = provider_task_run(0, DAYS[0])
    observe(warehouse_db, log_root, settings, start, complete)
    reasons = quarantined(warehouse_db)  # a row for each line (the START and the COMPLETE)
    assert len(reasons) == 2 and all(r.startswith("namespace 'lake' does not exist") for (r,) in reasons), reasons
    run_field_lineage(None, settings)  # the table's column lineage was set aside with it (a review finding)
    with connect(warehouse_db) as conn:
        assert conn.execute("select count(*) from lineage.field_operation_sets").fetchone() == (0,)
        assert conn.execute("select count(*) from lineage.datasets where namespace = 'lake'").fetchone() == (0,)
    table = entity([("namespace", "lake"), ("dataset", TABLE)])
    with connect(warehouse_db) as conn:
        create_namespace(conn, "lake", None)
        conn.commit()
        replayed = replay(conn, str(log_root), Selection(), namespace_map=settings.namespace_map)
    assert replayed.replayed == 2
    observe(warehouse_db, log_root, settings)
    with connect(warehouse_db) as conn:
        kept = schema_store.versions(conn, table)
        assert conn.execute("select count(*) from lineage.quarantine where batch_id = 'program-metadata'"
                            ).fetchone() == (0,)
    assert [(v.version, v.source, names(v)) for v in kept] == [
        (1, "observed", ["order_day_of_week", "order_placed_on", "orders_placed"])]
    run_field_lineage(None, settings)
    with connect(warehouse_db) as conn:
        assert conn.execute("select destination_namespace from lineage.field_operation_sets").fetchall() == [
            ("lake",)]


def test_a_schema_the_raw_format_refuses_loses_only_itself(
    warehouse_db: str, log_root: Path, settings_for  # type: ignore[no-untyped-def]
) -> None:
    """Before: a schema facet of more than 10,000 fields (or naming a field twice) quarantined the
    whole RunEvent, its run and accesses with it. Now the run and its accesses are compacted, the
    schema is skipped and the run's warnings say why."""
    settings = settings_for(warehouse_db)
    (start, complete) = provider_task_run(0, [(f"c{i}", "int") for i in range(10_001)])
    observe(warehouse_db, log_root, settings, start, complete)
    assert quarantined(warehouse_db) == []
    with connect(warehouse_db) as conn:
        assert conn.execute("select count(*) from lineage.runs").fetchone() == (1,)
        accesses = conn.execute("select dataset, access from lineage.access_details order by 1").fetchall()
        warnings = [w for (w,) in conn.execute("select warning from lineage.run_warnings").fetchall()]
    assert (TABLE, "write") in accesses
    assert versions(warehouse_db) == []
    assert [w for w in warnings if w.startswith("schema of dataset ")] == [
        "schema of dataset food_delivery.public.popular_orders_day_of_week skipped: schema violation: "
        "data.payload.schema.fields must contain less than or equal to 10000 items"], warnings


def test_an_observation_that_does_not_say_whether_a_field_is_required_keeps_what_was_declared(
    warehouse_db: str, log_root: Path, settings_for  # type: ignore[no-untyped-def]
) -> None:
    """A program declares the table with required fields; Airflow's provider then observes it (an
    OpenLineage schema facet has no nullability). Before: the observation made every field
    optional (a version "made optional"), and the program's next declaration of the same schema was
    quarantined ("becomes required"). Now a field the observation does not say of keeps its
    nullability: the same columns are no version, a retyped one is a version keeping NOT NULL,
    and the declaration again is no change."""
    settings = settings_for(warehouse_db)
    required = [{"name": name, "type": kind, "nullable": False} for name, kind in DAYS[0]]

    def declare(day: int) -> None:
        declared = event("metadata_change", {"entity": [list(part) for part in POPULAR.parts],
                                             "operation": "set_schema", "schema": {"fields": required}},
                         event_time=(DAY + timedelta(days=day, hours=1)).isoformat().replace("+00:00", "Z"))
        write_log(log_root, [declared], hour=f"dt=2026-11-{18 + day}/hour=10")
        observe(warehouse_db, log_root, settings)

    declare(-1)
    observe(warehouse_db, log_root, settings, *provider_task_run(0, DAYS[0]))  # the same columns, unsaid
    assert [(v.version, v.source) for v in versions(warehouse_db)] == [(1, "declared")]
    declare(0)
    retyped = [*DAYS[0][:2], ("orders_placed", "int8")]
    observe(warehouse_db, log_root, settings, *provider_task_run(1, retyped))
    kept = versions(warehouse_db)
    assert quarantined(warehouse_db) == []
    assert [(v.version, v.source) for v in kept] == [(2, "observed"), (1, "declared")]
    assert [(f["name"], f["type"], f["nullable"]) for f in kept[0].schema["fields"]] == [
        (name, kind, False) for name, kind in retyped]
    assert kept[0].changes is not None and kept[0].changes["retyped"] == [
        {"name": "orders_placed", "before": "int4", "after": "int8"}]
    assert not kept[0].changes.get("nullability")


@pytest.mark.parametrize("order", ["ab", "ba"])
def test_two_observations_of_one_moment_leave_one_schema_in_either_arrival_order(
    warehouse_db: str, log_root: Path, settings_for, order: str  # type: ignore[no-untyped-def]
) -> None:
    """A table declared with ``id`` required, then observed twice at the same moment, neither
    observation saying whether a field is required. Before (a review finding): the tie compared an
    observation as sent (``id`` optional) with the stored schema as merged (``id`` required), so
    the one that came second won. Both sides are merged now: either order leaves one schema."""
    settings = settings_for(warehouse_db)
    entity_parts = [list(part) for part in POPULAR.parts]
    declared = event("metadata_change", {"entity": entity_parts, "operation": "set_schema", "schema": {
        "fields": [{"name": "id", "type": "int", "nullable": False}]}}, event_time="2026-11-18T09:00:00Z")
    write_log(log_root, [declared], hour="dt=2026-11-18/hour=09")
    observe(warehouse_db, log_root, settings)
    seen = {"a": [{"name": "id", "type": "int"}], "b": [{"name": "id", "type": "int"}, {"name": "x", "type": "int"}]}
    for index, name in enumerate(order):
        observed = event("metadata_change", {"entity": entity_parts, "operation": "observe_schema",
                                             "schema": {"fields": seen[name]}},
                         event_time="2026-11-18T10:00:00Z", schema_version=2)
        write_log(log_root, [observed], hour="dt=2026-11-18/hour=10", name=f"observed-{index}.jsonl")
        observe(warehouse_db, log_root, settings)
    assert quarantined(warehouse_db) == []
    with connect(warehouse_db) as conn:
        current = schema_store.current(conn, POPULAR)
    assert current == schema([("id", "int", False)])  # a's, merged: the greater text of the two

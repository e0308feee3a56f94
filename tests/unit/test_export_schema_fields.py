"""A stored schema's fields as the export's ``schema`` facet nests them
(``warehouse.service.openlineage_export``), an event with a number PostgreSQL gives back past
64 bits written all the same (``lineage.openlineage.event.event_json``), and a run whose start was
never seen exported without one made up."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime, timedelta

from lineage.model.dataset_schema import parse_schema, unstated_nullability, with_nullability_of
from lineage.naming.identity import NO_MAPPING
from lineage.openlineage.event import event_json
from lineage.openlineage.mapping import expand, schema_change, wrap
from warehouse.service.openlineage_export import Program, RunExport, _schema_fields, run_events


def test_paths_nest_and_a_field_whose_name_holds_a_slash_keeps_its_own_fields() -> None:
    """``geo/point`` came from an OpenLineage field of that name: no field ``geo`` is its parent,
    so it stays whole at the top, and its fields nest in it (they were dropped: a review finding)."""
    stored = [{"name": "id", "type": "long", "nullable": False}, {"name": "address", "type": "struct"},
              {"name": "address/city", "type": "string"}, {"name": "geo/point", "type": "struct"},
              {"name": "geo/point/lat", "type": "double"}, {"name": "geo/point/lon", "type": "double"}]
    assert _schema_fields(stored) == [
        {"name": "id", "type": "long", "nullable": False},
        {"name": "address", "type": "struct", "fields": [{"name": "city", "type": "string"}]},
        {"name": "geo/point", "type": "struct",
         "fields": [{"name": "lat", "type": "double"}, {"name": "lon", "type": "double"}]}]


def test_a_number_past_64_bits_is_written_as_the_same_number() -> None:
    event = {"eventType": "COMPLETE", "facets": {"rows": 10**20, "ratio": 0.5, "name": "ünïcode"}}
    assert json.loads(event_json(event)) == event
    assert event_json({"a": 1}) == b'{"a":1}'


def test_a_run_whose_start_was_never_seen_is_exported_without_a_start_made_up() -> None:
    """Before: a run of our client whose start the warehouse never saw was exported with a START
    at its first event's time, which a warehouse ingesting the export took for its start. Now its
    first event is a RUNNING at that time; a run with a start keeps its START."""
    first = datetime(2026, 11, 21, 5, tzinfo=UTC)
    run = RunExport(program=Program("default", "Crm", "spark", "Contacts"), run_id="c-1", status="completed",
                    run_at=first, stopped_at=first + timedelta(minutes=5), started=False)
    assert [(e["eventType"], e["eventTime"]) for e in run_events(run)] == [
        ("RUNNING", first.isoformat()), ("COMPLETE", (first + timedelta(minutes=5)).isoformat())]
    ingested = [native["kind"] for e in run_events(run) for native in expand(wrap(e, NO_MAPPING), NO_MAPPING)]
    assert "run_start" not in ingested and "run_end" in ingested
    started = dataclasses.replace(run, started=True)
    assert [e["eventType"] for e in run_events(started)] == ["START", "COMPLETE"]


def test_a_field_made_optional_is_exported_optional_and_read_back_so() -> None:
    """Before: the export wrote only ``"nullable": false`` and the mapping read only that, so an
    optional field was unsaid, and a warehouse ingesting the export kept it required for ever once
    it had been (a review finding). Both sides now say and read either."""
    stored = [{"name": "id", "type": "long", "nullable": True}, {"name": "name", "type": "string", "nullable": False}]
    facet = {"fields": _schema_fields(stored)}
    assert facet["fields"] == [{"name": "id", "type": "long", "nullable": True},
                               {"name": "name", "type": "string", "nullable": False}]
    change = schema_change({"namespace": "s3://lake", "name": "t", "facets": {"schema": facet}}, NO_MAPPING)
    assert change is not None and unstated_nullability(change["schema"]) == frozenset()
    required = parse_schema({"fields": [{"name": "id", "type": "long", "nullable": False},
                                        {"name": "name", "type": "string"}]})
    read = with_nullability_of(required, parse_schema(change["schema"]), unstated_nullability(change["schema"]))
    assert [(f.name, f.nullable) for f in read.fields] == [("id", True), ("name", False)]

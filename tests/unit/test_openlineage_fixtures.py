"""Recorded events of real OpenLineage producers (tests/fixtures/openlineage, sources in its
SOURCES.md) all map to valid native events; a few are checked in detail."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lineage.model.derived_checks import plainly_valid
from lineage.model.events import validate_event
from lineage.model.field_paths import field_paths, normalize
from lineage.naming.identity import NO_MAPPING
from lineage.openlineage.mapping import expand, wrap

FIXTURES = Path(__file__).parents[1] / "fixtures" / "openlineage"


def events_of(name: str) -> list[dict[str, Any]]:
    loaded = json.loads((FIXTURES / name).read_text("utf-8"))
    return loaded if isinstance(loaded, list) else [loaded]


@pytest.mark.parametrize("name", sorted(path.name for path in FIXTURES.glob("*.json")))
def test_every_recorded_event_maps_to_valid_native_events(name: str) -> None:
    for event in events_of(name):
        envelope = wrap(event, NO_MAPPING)
        validate_event(envelope)  # the envelope's trusted construction agrees with the full check
        for native in expand(envelope, NO_MAPPING):
            validate_event(native)
            assert plainly_valid(native)  # the trusted construction's check agrees (see derived_event)
            if native["kind"] == "field_operations":
                assert field_paths(normalize(native["payload"], native["namespace"]))


def test_hive_ctas_column_lineage_becomes_paths_with_the_join_key_indirect() -> None:
    (event,) = events_of("hive_ctas_column_lineage.json")
    natives = expand(wrap(event, NO_MAPPING), NO_MAPPING)
    assert natives[0]["run"]["application"] == "hive://test-hadoop:10000"
    assert natives[0]["run"]["program"] == "createtable_as_select.mydatabase.target_table"
    record = next(n for n in natives if n["kind"] == "field_operations")["payload"]
    assert record["destination"] == {"namespace": "default", "name": "hive://test-hadoop:9083/mydatabase.target_table"}
    paths = {p.field: p for p in field_paths(normalize(record, "default"))}
    assert set(paths) == {"dt", "customer_id", "total_spent"}
    spent = next(op for op in paths["total_spent"].operations if op.type == "transform")
    assert {(ref.field, ref.transformation.type if ref.transformation else None,
             ref.transformation.subtype if ref.transformation else None) for ref in spent.inputs} == {
        ("total_spent", "DIRECT", "IDENTITY"), ("customer_id", "INDIRECT", "JOIN")}


def test_a_dbt_invocation_maps_each_model_run_to_its_own_run() -> None:
    events = events_of("dbt_snowflake_structured_logs_run.json")
    runs = {(n["run"]["program"], n["run"]["run_id"]) for e in events
            for n in expand(wrap(e, NO_MAPPING), NO_MAPPING)}
    assert len(runs) == len({e["run"]["runId"] for e in events if e.get("inputs") or e.get("outputs")
                             or e.get("eventType") in ("START", "COMPLETE", "FAIL", "ABORT")})

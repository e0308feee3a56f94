from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lineage.errors import InvalidEventError
from lineage.model.events import (
    STAGED_COLUMNS,
    Rejection,
    new_event,
    parse_line,
    quarantine_text,
    schema,
    to_staged_row,
)
from tests.factories import RUN, access, event


def test_parse_line_accepts_a_valid_access_event() -> None:
    line = json.dumps(access("purchases"))
    parsed = parse_line(line)
    assert isinstance(parsed, dict)
    assert parsed["payload"]["dataset"]["name"] == "purchases"


@pytest.mark.parametrize(
    ("line", "reason_part"),
    [
        ('{"schema_version": 1, "event_id": ', "malformed JSON"),
        ("[1, 2, 3]", "must be a JSON object, got list"),
        (json.dumps({k: v for k, v in access("d").items() if k != "event_id"}),
         "data must contain ['event_id'] properties"),
        (json.dumps(access("d", namespace=42)), "namespace must be string"),
        (json.dumps(event("teleport")), "kind must be one of"),
        (json.dumps(access("d", schema_version=3)), "unknown schema_version 3"),
        (json.dumps(access("d", access_type="delete")), "access must be one of"),
        (json.dumps(access("bad name with spaces")), "name must match pattern"),
        (json.dumps(event("run_end", {"status": "exploded"})), "status must be one of"),
        (json.dumps(access("d", event_time="yesterday")), "event_time must be date-time"),
        (json.dumps(access("d", event_time="2026-11-21T05:00:00")), "event_time"),
        (json.dumps(access("d", surprise=True)), "must not contain {'surprise'}"),
        # a program typed like data: its id (type.namespace.application.program) would read as the
        # id of a dataset whose name holds a dot (dataset.namespace.application.program)
        (json.dumps(access("d", run={**RUN, "program_type": "dataset"})), "'dataset' is a data type"),
        (json.dumps(access("d", run={**RUN, "program_type": "stream"})), "neither dataset nor stream"),
    ],
)
def test_parse_line_rejects_malformed_events_with_a_reason(line: str, reason_part: str) -> None:
    parsed = parse_line(line)
    assert isinstance(parsed, Rejection)
    assert reason_part in parsed.reason


def test_parse_line_rejects_oversized_events_before_parsing() -> None:
    line = json.dumps(access("d", producer="x" * 200))
    parsed = parse_line(line, max_bytes=100)
    assert isinstance(parsed, Rejection)
    assert parsed.reason == f"event is {len(line)} bytes, over the 100-byte limit"


def test_parse_line_rejects_an_oversized_field_value() -> None:
    parsed = parse_line(json.dumps(access("d", producer="p" * 300)))
    assert isinstance(parsed, Rejection)
    assert "producer must be shorter than or equal to 256 characters" in parsed.reason


def test_to_staged_row_flattens_an_access() -> None:
    raw = access("purchases", "write", event_id="e-1", event_time="2026-11-21T05:00:01.5+00:00")
    raw["payload"]["component"] = "collector"
    row = to_staged_row(raw, "file:/logs/a.jsonl", 7)
    assert list(row) == list(STAGED_COLUMNS)
    assert row["event_id"] == "e-1"
    assert row["event_time_us"] == int(datetime(2026, 11, 21, 5, 0, 1, 500000, tzinfo=UTC).timestamp() * 1_000_000)
    assert (row["dataset_namespace"], row["dataset_type"], row["dataset"]) == ("default", "dataset", "purchases")
    assert (row["access"], row["component"], row["line_number"]) == ("write", "collector", 7)
    assert row["payload"] is None


def test_to_staged_row_keeps_field_operations_whole() -> None:
    payload = {"destination": {"name": "mytableds"}, "operations": [{"name": "read", "inputs": [], "outputs": []}]}
    row = to_staged_row(event("field_operations", payload), "f", 1)
    assert json.loads(row["payload"]) == payload
    assert row["dataset"] is None


def test_new_event_raises_at_the_call_that_made_the_mistake() -> None:
    with pytest.raises(InvalidEventError, match="access must be one of"):
        new_event("dataset_access", "default", RUN, {"dataset": {"name": "d"}, "access": "borrow"})


def test_new_event_refuses_nul_characters() -> None:
    with pytest.raises(InvalidEventError, match="NUL"):
        new_event("dataset_access", "default", RUN, {"dataset": {"name": "d"}, "access": "read", "component": "a\x00"})


def test_lone_surrogates_are_refused_by_the_client_and_quarantined_by_the_reader() -> None:
    payload = {"dataset": {"name": "d"}, "access": "read", "component": "bad\ud800"}
    with pytest.raises(InvalidEventError, match="valid Unicode text"):
        new_event("dataset_access", "default", RUN, payload)
    line = json.dumps({"schema_version": 1, "event_id": "e", "kind": "dataset_access",
                       "event_time": "2026-01-01T00:00:00Z", "namespace": "default", "run": RUN, "payload": payload},
                      ensure_ascii=False)
    rejected = parse_line(line)
    assert isinstance(rejected, Rejection)
    assert "malformed JSON" in rejected.reason


def test_new_event_refuses_naive_times() -> None:
    with pytest.raises(InvalidEventError, match="time zone"):
        new_event("run_start", "default", RUN, {}, event_time=datetime(2026, 1, 1))


def test_schema_file_documents_every_kind() -> None:
    assert set(schema()["properties"]["kind"]["enum"]) == {
        "run_start", "run_end", "dataset_access", "field_operations", "metadata_change", "run_parent", "run_facets",
        "dataset_facets", "openlineage"
    }
    assert set(schema(1)["properties"]["kind"]["enum"]) == {
        "run_start", "run_end", "dataset_access", "field_operations", "metadata_change"
    }


names = st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,20}", fullmatch=True)


@given(
    namespace=st.from_regex(r"[A-Za-z0-9_]{1,20}", fullmatch=True),
    dataset=names,
    access_type=st.sampled_from(["read", "write", "read_write", "unknown"]),
    # NUL and lone surrogates are refused (tested above); any other text survives.
    component=st.text(alphabet=st.characters(exclude_characters="\x00", exclude_categories=["Cs"]), max_size=40),
    micros=st.integers(min_value=0, max_value=4_000_000_000_000_000),
)
def test_built_events_survive_the_log_line_round_trip(
    namespace: str, dataset: str, access_type: str, component: str, micros: int
) -> None:
    moment = datetime.fromtimestamp(micros / 1_000_000, tz=UTC)
    payload = {"dataset": {"type": "dataset", "name": dataset}, "access": access_type, "component": component}
    built = new_event("dataset_access", namespace, RUN, payload, event_time=moment)
    parsed = parse_line(json.dumps(built, ensure_ascii=False))
    assert parsed == built
    row = to_staged_row(parsed, "f", 1)
    assert (row["namespace"], row["dataset"], row["access"], row["component"]) == (
        namespace, dataset, access_type, component
    )
    assert row["event_time_us"] == micros


def test_the_quarantine_keeps_a_bounded_prefix_of_an_oversized_line_with_its_size_and_hash() -> None:
    line = '{"payload": "' + "x" * 200_000 + '"}'
    kept = quarantine_text(line, limit=1000)
    assert kept.startswith(line[:1000]) and len(kept) < 1200
    assert kept.endswith(f"[cut: the line is {len(line)} bytes, sha256 {hashlib.sha256(line.encode()).hexdigest()}]")
    assert quarantine_text("a\x00b") == "a\\u0000b"  # short lines whole, NUL shown as text

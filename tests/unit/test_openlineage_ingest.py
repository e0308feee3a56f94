"""The OpenLineage endpoint's pure core: decoding a request body and sorting its events into
lines to append and refusals, each with its index and reason."""

from __future__ import annotations

import gzip

import orjson
import pytest

from lineage.errors import InvalidRequestError, RequestTooLargeError
from lineage.naming.identity import NamespaceMap
from warehouse.ingest.openlineage_requests import IngestLimits, Refused, decode_body, sort_events, split_array

EVENT = {"eventType": "START", "eventTime": "2026-11-23T09:00:00Z", "producer": "tests",
         "run": {"runId": "0195f3b1-7a3e-7c6e-9d3f-2f1c0b8e4a11"}, "job": {"namespace": "sales", "name": "load"},
         "inputs": [{"namespace": "s3://finance-lake", "name": "ledger"}], "outputs": []}
MAP = NamespaceMap.of([("s3://finance-", "finance")])
LIMITS = IngestLimits(body_bytes=10_000, events=100, event_bytes=5_000)


def limits(**changed: int) -> IngestLimits:
    return IngestLimits(**{**LIMITS.__dict__, **changed})


def sort(events: list, may_write=lambda _: True, event_bytes: int = 1_048_576):  # type: ignore[no-untyped-def]
    return sort_events(events, MAP, may_write, event_bytes)


def test_one_object_is_one_event_and_an_array_is_several() -> None:
    assert decode_body(orjson.dumps(EVENT), None, LIMITS) == [EVENT]
    assert decode_body(orjson.dumps([EVENT, EVENT]), "identity", LIMITS) == [EVENT, EVENT]


def test_a_gzip_body_is_inflated() -> None:
    assert decode_body(gzip.compress(orjson.dumps([EVENT])), "gzip", LIMITS) == [EVENT]


@pytest.mark.parametrize(("raw", "encoding", "message"), [
    (b"{not json", None, "not JSON"),
    (b"[]", None, "empty array"),
    (b'"a string"', None, "not str"),
    (b"12", None, "not int"),
    (b"\x1f\x8b\x08garbage", "gzip", "not valid gzip"),
    (gzip.compress(b'{"a":1}', mtime=0)[:-8], "gzip", "truncated"),
    (b"{}", "br", "'br' is not supported"),
])
def test_bodies_that_are_not_events_are_refused_with_the_reason(raw: bytes, encoding: str | None,
                                                                message: str) -> None:
    with pytest.raises(InvalidRequestError, match=message):
        decode_body(raw, encoding, LIMITS)


def test_bodies_over_the_limit_are_too_large_even_when_a_small_gzip_inflates_past_it() -> None:
    with pytest.raises(RequestTooLargeError, match="over 100 bytes"):
        decode_body(b"[" + b" " * 200 + b"]", None, limits(body_bytes=100))
    bomb = gzip.compress(b"[" + b" " * 1_000_000 + b"]")
    assert len(bomb) < 2_000
    with pytest.raises(RequestTooLargeError, match="inflates to over"):
        decode_body(bomb, "gzip", LIMITS)


def test_good_events_land_beside_malformed_and_forbidden_ones() -> None:
    no_run_id = {**EVENT, "run": {}}
    other_job = {**EVENT, "job": {"namespace": "marketing", "name": "x"}, "inputs": []}
    outcome = sort([EVENT, no_run_id, other_job, "not an object"],
                   may_write=lambda namespace: namespace in {"sales", "finance"})

    assert outcome.accepted == 1
    envelope = orjson.loads(outcome.lines[0])
    assert (envelope["kind"], envelope["namespace"], envelope["payload"]) == ("openlineage", "sales", EVENT)
    assert outcome.lines[0].endswith(b"\n")
    assert [(r.index, r.reason) for r in outcome.invalid] == [
        (1, "OpenLineage event: run.runId is missing"),
        (3, "an OpenLineage event must be a JSON object, got str")]
    assert [(r.index, r.reason) for r in outcome.forbidden] == [(2, "no WRITE on namespace marketing")]


def test_write_is_needed_on_every_namespace_an_event_touches() -> None:
    outcome = sort([EVENT], may_write=lambda namespace: namespace == "sales")
    assert [(r.index, r.reason) for r in outcome.forbidden] == [(0, "no WRITE on namespace finance")]


def test_the_same_event_gets_the_same_id_and_hostile_strings_stay_verbatim() -> None:
    hostile = {**EVENT, "job": {"namespace": "sales", "name": "'; drop table runs; -- <script>🙂"}}
    first, second = (orjson.loads(sort([hostile]).lines[0]) for _ in range(2))
    assert first["event_id"] == second["event_id"] and first["event_id"].startswith("ol-")
    assert first["payload"]["job"]["name"] == "'; drop table runs; -- <script>🙂"


def test_a_nul_character_is_refused_as_postgresql_cannot_store_it() -> None:
    outcome = sort([{**EVENT, "job": {"namespace": "sales", "name": "a\x00b"}}])
    assert outcome.accepted == 0 and "NUL" in outcome.invalid[0].reason


def test_an_array_over_the_event_limit_is_too_large_before_any_event_is_checked() -> None:
    with pytest.raises(RequestTooLargeError, match=r"over 100 events \(LINEAGE_INGEST_MAX_EVENTS\)"):
        decode_body(orjson.dumps([0] * 101), None, LIMITS)
    decode_body(orjson.dumps([0] * 100), None, LIMITS)  # at the limit: fine


def test_a_large_array_is_split_without_building_its_elements() -> None:
    """Three million tiny elements in a few kilobytes of gzip: refused after counting past the
    limit, not after building three million objects (and the answer lists none of them)."""
    body = gzip.compress(b"[" + b",".join([b"{}"] * 3_000_000) + b"]")
    assert len(body) < 20_000
    with pytest.raises(RequestTooLargeError, match="over 10000 events"):
        decode_body(body, "gzip", limits(body_bytes=64 * 1024 * 1024, events=10_000))


@pytest.mark.parametrize(("text", "pieces"), [
    (b"[1, 2 ,3]", [b"1", b" 2 ", b"3"]),
    (rb'[{"a": "x,]}\"[", "b": [1, 2]}, "s\\"]', [rb'{"a": "x,]}\"[", "b": [1, 2]}', rb' "s\\"']),
    (b'[ [[1,2],[3]] , {} ]', [b" [[1,2],[3]] ", b" {} "]),
    (b"[ ]", []),
])
def test_split_array_steps_over_strings_and_nesting(text: bytes, pieces: list[bytes]) -> None:
    if pieces:
        assert split_array(text, 10) == pieces
    else:
        with pytest.raises(InvalidRequestError, match="empty array"):
            split_array(text, 10)


@pytest.mark.parametrize("text", [b"[1, 2", b"[1] 2", b"[[1, 2]"])
def test_split_array_refuses_what_is_not_one_array(text: bytes) -> None:
    with pytest.raises(InvalidRequestError, match="not closed"):
        split_array(text, 10)


def test_one_event_over_the_event_limit_is_too_large_at_once() -> None:
    big = {**EVENT, "job": {"namespace": "sales", "name": "x" * 6_000}}
    with pytest.raises(RequestTooLargeError, match=r"over the 5000-byte limit \(LINEAGE_MAX_EVENT_BYTES\)"):
        decode_body(orjson.dumps(big), None, limits(body_bytes=100_000))


def test_in_an_array_an_oversized_or_unparseable_element_is_refused_alone() -> None:
    """Elements split apart when the body is not JSON as a whole (here: one nested 2,000 deep,
    past the parser's limit) or large: the bad ones are refused, the rest parsed."""
    deep = b"[" * 2_000 + b"]" * 2_000
    big = orjson.dumps({**EVENT, "job": {"namespace": "sales", "name": "x" * 6_000}})
    body = b"[" + orjson.dumps(EVENT) + b"," + deep + b"," + big + b"," + b"{not json}" + b"]"
    events = decode_body(body, None, limits(body_bytes=100_000))
    assert events[0] == EVENT
    assert isinstance(events[1], Refused) and "not JSON" in events[1].reason
    assert isinstance(events[2], Refused) and events[2].too_large and "LINEAGE_MAX_EVENT_BYTES" in events[2].reason
    assert isinstance(events[3], Refused) and "not JSON" in events[3].reason
    outcome = sort(events)
    assert outcome.accepted == 1 and [r.index for r in outcome.invalid] == [1, 2, 3]
    assert outcome.status() == 400


def test_an_event_nested_past_what_the_log_writes_is_refused_alone() -> None:
    """300 levels parse, but the log's writer stops at 254: that event is refused, the other lands
    (it was a plain-text 500 for the whole request)."""
    deep: object = 1
    for _ in range(300):
        deep = [deep]
    nested = {**EVENT, "run": {"runId": "r-deep", "facets": {"x": {"deep": deep}}}}
    outcome = sort([EVENT, nested])
    assert outcome.accepted == 1
    assert [(r.index, "cannot be written to the log" in r.reason) for r in outcome.invalid] == [(1, True)]


def test_an_event_over_the_limit_once_wrapped_is_refused_as_too_large() -> None:
    outcome = sort([{**EVENT, "job": {"namespace": "sales", "name": "x" * 2_000}}], event_bytes=1_500)
    assert outcome.accepted == 0 and outcome.invalid[0].too_large and outcome.status() == 413
    assert "LINEAGE_MAX_EVENT_BYTES" in outcome.answer()["message"]


def test_the_answer_names_twenty_refusals_and_counts_the_rest() -> None:
    outcome = sort([0] * 5_000)
    answer = outcome.answer()
    assert [item["index"] for item in answer["refused"]] == list(range(20))
    assert answer["refusedNotShown"] == 4_980 and answer["accepted"] == 0 and answer["status"] == 400
    assert answer["message"].startswith("5000 of 5000 events refused; event 0:")
    assert len(orjson.dumps(answer)) < 4_000


def test_every_route_into_a_namespace_needs_write_on_it() -> None:
    """Symlink targets, column-lineage sources (field and dataset level), parent and root jobs,
    a DatasetEvent's dataset and its symlinks: each namespace they name needs WRITE."""
    hr = NamespaceMap.of([("s3://hr-", "hr"), ("s3://finance-", "finance"), ("hr_jobs", "hr")])
    output = {"namespace": "s3://sales-lake", "name": "orders", "facets": {
        "symlinks": {"identifiers": [{"namespace": "s3://hr-lake", "name": "alias", "type": "TABLE"}]},
        "columnLineage": {"fields": {"id": {"inputFields": [{"namespace": "s3://finance-lake", "name": "ledger",
                                                             "field": "ssn"}]}},
                          "dataset": [{"namespace": "s3://hr-x", "name": "y", "field": "z"}]}}}
    cases = {
        "symlink": {**EVENT, "inputs": [], "outputs": [
            {**output, "facets": {"symlinks": output["facets"]["symlinks"]}}]},
        "column lineage": {**EVENT, "inputs": [], "outputs": [
            {**output, "facets": {"columnLineage": output["facets"]["columnLineage"]}}]},
        "parent": {**EVENT, "inputs": [], "run": {"runId": "r1", "facets": {"parent": {
            "run": {"runId": "p1"}, "job": {"namespace": "hr_jobs", "name": "dag"}}}}},
        "root": {**EVENT, "inputs": [], "run": {"runId": "r1", "facets": {"parent": {
            "run": {"runId": "p1"}, "job": {"namespace": "sales", "name": "dag"},
            "root": {"run": {"runId": "p0"}, "job": {"namespace": "hr_jobs", "name": "dag"}}}}}},
        "dataset event": {"eventTime": "2026-11-23T09:00:00Z", "producer": "p",
                          "dataset": {"namespace": "s3://sales-lake", "name": "orders",
                                      "facets": output["facets"]}},
    }
    for label, event in cases.items():
        outcome = sort_events([event], hr, lambda namespace: namespace in {"sales", "default"}, 1_048_576)
        assert outcome.accepted == 0, label
        reason = outcome.forbidden[0].reason if outcome.forbidden else ""
        assert "hr" in reason or "finance" in reason, label
        allowed = sort_events([event], hr, lambda namespace: namespace in {"sales", "default", "hr", "finance"},
                              1_048_576)
        assert allowed.accepted == 1, label


def test_the_namespace_map_is_decided_at_ingest_and_kept_with_the_event() -> None:
    """A later change of the map, or a replay, maps the event as the ingest did."""
    from lineage.openlineage.mapping import expand

    output = {"namespace": "s3://finance-lake", "name": "ledger"}
    event = {**EVENT, "inputs": [], "outputs": [output]}
    envelope = orjson.loads(sort([event]).lines[0])
    assert envelope["namespaces"] == {"jobs": {"sales": "sales"}, "datasets": {"s3://finance-lake": "finance"}}
    changed = NamespaceMap.of([("s3://finance-", "hr"), ("sales", "hr")])
    writes = [e for e in expand(envelope, changed) if e["kind"] == "dataset_access"]
    assert [e["payload"]["dataset"]["namespace"] for e in writes] == ["finance"]
    assert {e["namespace"] for e in expand(envelope, changed)} == {"sales"}
    old = {key: value for key, value in envelope.items() if key != "namespaces"}  # written before the record
    assert [e["payload"]["dataset"]["namespace"] for e in expand(old, changed)
            if e["kind"] == "dataset_access"] == ["hr"]

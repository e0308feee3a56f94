"""The OpenLineage endpoint's pure core: decoding a request body and sorting its events into
lines to append and refusals, each with its index and reason."""

from __future__ import annotations

import gzip

import orjson
import pytest

from lineage.errors import InvalidRequestError, RequestTooLargeError
from lineage.identity import NamespaceMap
from lineage.openlineage_ingest import decode_body, sort_events

EVENT = {"eventType": "START", "eventTime": "2026-11-23T09:00:00Z", "producer": "tests",
         "run": {"runId": "0195f3b1-7a3e-7c6e-9d3f-2f1c0b8e4a11"}, "job": {"namespace": "sales", "name": "load"},
         "inputs": [{"namespace": "s3://finance-lake", "name": "ledger"}], "outputs": []}
MAP = NamespaceMap.of([("s3://finance-", "finance")])


def test_one_object_is_one_event_and_an_array_is_several() -> None:
    assert decode_body(orjson.dumps(EVENT), None, 10_000) == [EVENT]
    assert decode_body(orjson.dumps([EVENT, EVENT]), "identity", 10_000) == [EVENT, EVENT]


def test_a_gzip_body_is_inflated() -> None:
    assert decode_body(gzip.compress(orjson.dumps([EVENT])), "gzip", 10_000) == [EVENT]


@pytest.mark.parametrize(("raw", "encoding", "message"), [
    (b"{not json", None, "not JSON"),
    (b"[]", None, "empty array"),
    (b'"a string"', None, "not str"),
    (b"12", None, "not int"),
    (b"\x1f\x8b\x08garbage", "gzip", "not valid gzip"),
    (gzip.compress(b'{"a":1}')[:-8], "gzip", "truncated"),
    (b"{}", "br", "'br' is not supported"),
])
def test_bodies_that_are_not_events_are_refused_with_the_reason(raw: bytes, encoding: str | None,
                                                                message: str) -> None:
    with pytest.raises(InvalidRequestError, match=message):
        decode_body(raw, encoding, 10_000)


def test_bodies_over_the_limit_are_too_large_even_when_a_small_gzip_inflates_past_it() -> None:
    with pytest.raises(RequestTooLargeError, match="over 100 bytes"):
        decode_body(b"[" + b" " * 200 + b"]", None, 100)
    bomb = gzip.compress(b"[" + b" " * 1_000_000 + b"]")
    assert len(bomb) < 2_000
    with pytest.raises(RequestTooLargeError, match="inflates to over"):
        decode_body(bomb, "gzip", 10_000)


def test_good_events_land_beside_malformed_and_forbidden_ones() -> None:
    no_run_id = {**EVENT, "run": {}}
    other_job = {**EVENT, "job": {"namespace": "marketing", "name": "x"}, "inputs": []}
    outcome = sort_events([EVENT, no_run_id, other_job, "not an object"], MAP,
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
    outcome = sort_events([EVENT], MAP, may_write=lambda namespace: namespace == "sales")
    assert [(r.index, r.reason) for r in outcome.forbidden] == [(0, "no WRITE on namespace finance")]


def test_the_same_event_gets_the_same_id_and_hostile_strings_stay_verbatim() -> None:
    hostile = {**EVENT, "job": {"namespace": "sales", "name": "'; drop table runs; -- <script>🙂"}}
    first, second = (orjson.loads(sort_events([hostile], MAP, lambda _: True).lines[0]) for _ in range(2))
    assert first["event_id"] == second["event_id"] and first["event_id"].startswith("ol-")
    assert first["payload"]["job"]["name"] == "'; drop table runs; -- <script>🙂"


def test_a_nul_character_is_refused_as_postgresql_cannot_store_it() -> None:
    outcome = sort_events([{**EVENT, "job": {"namespace": "sales", "name": "a\x00b"}}], MAP, lambda _: True)
    assert outcome.accepted == 0 and "NUL" in outcome.invalid[0].reason

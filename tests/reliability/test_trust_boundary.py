"""The trust boundary, tried as an attacker with an ordinary login or a single-namespace ingest key
would, against a real ``airflow api-server`` (issue 28; the items on windows, late files, grants and
ids have files of their own: ``test_trust_boundary_*.py``):

1. a request's cost is bounded: the caller is known and holds WRITE before its body is read, a
   stalled body is cut, an array is counted before it is built, the answer is a few KB, the
   event loop keeps answering;
2. an ingest key writes only where it holds WRITE, by every route an event has (symlinks,
   column-lineage sources, parent and root runs, DatasetEvents);
5. bad input is a 4xx on every route: a NUL in any parameter, JSON nested too deep in one element,
   an event over the size limit;
6. a 503 names no host; the quarantine CLI prints event contents literally.
"""

from __future__ import annotations

import gzip
import os
import socket
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

import httpx
import orjson
import pytest
from typer.testing import CliRunner

from harness.api_server import ApiServer
from tests.airflow_support import airflow_env, ensure_airflow_db, libpq, logged_in_client
from tests.airflow_support import token as get_token
from warehouse.db import namespace_store
from warehouse.db.connection import connect

SALES_ONLY_MAP = "s3://sales-=sales,s3://hr-=hr,s3://finance-=finance,hr_jobs=hr"
MAX_EVENT_BYTES = 65_536


def event(run_id: str = "0195f3b1-7a3e-7c6e-9d3f-2f1c0b8e4a01", **changes: object) -> dict:
    base = {"eventType": "START", "eventTime": "2026-11-23T09:00:00Z", "producer": "tests",
            "run": {"runId": run_id}, "job": {"namespace": "sales", "name": "load orders"},
            "inputs": [{"namespace": "s3://sales-lake", "name": "orders"}], "outputs": []}
    return {**base, **changes}


@pytest.fixture(scope="module")
def warehouse() -> Iterator[str]:
    from tests.conftest import create_scratch_db, drop_scratch_db

    url = create_scratch_db("wh_trust")
    with connect(url, autocommit=True) as conn:
        for namespace in ("sales", "hr", "finance"):
            namespace_store.create_namespace(conn, namespace, None)
    yield url
    drop_scratch_db(url)


@pytest.fixture(scope="module")
def server(warehouse: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServer]:
    ensure_airflow_db()
    env = airflow_env(AIRFLOW_CONN_LINEAGE_WAREHOUSE=libpq(warehouse),
                      LINEAGE_LOG_ROOT=str(tmp_path_factory.mktemp("trust-raw")),
                      LINEAGE_NAMESPACE_MAP=SALES_ONLY_MAP, LINEAGE_INGEST_READ_SECONDS="3",
                      LINEAGE_MAX_EVENT_BYTES=str(MAX_EVENT_BYTES))
    started = ApiServer(env).start()
    try:
        yield started
    finally:
        started.close()


@pytest.fixture(scope="module")
def base(server: ApiServer) -> str:
    return server.base


@pytest.fixture(scope="module")
def admin(base: str) -> httpx.Client:
    jwt = get_token(base, "admin", "admin").json()["access_token"]
    return httpx.Client(base_url=f"{base}/lineage", headers={"Authorization": f"Bearer {jwt}"}, timeout=60)


@pytest.fixture(scope="module")
def sales_key(admin: httpx.Client) -> str:
    """A key of principal ``sales-producer``, who holds WRITE on namespace sales only."""
    granted = admin.put("/v3/grants", json={"principal": "sales-producer", "entity": "namespaces/sales",
                                            "privilege": "WRITE"})
    assert granted.status_code == 200, granted.text
    created = admin.post("/v3/ingest-keys", json={"name": "sales", "principal": "sales-producer"})
    assert created.status_code == 201, created.text
    return str(created.json()["secret"])


def post(base: str, body: bytes, key: str | None, timeout: float = 60, **headers: str) -> httpx.Response:
    if key:
        headers["Authorization"] = f"Bearer {key}"
    return httpx.post(f"{base}/lineage/api/v1/lineage", content=body,
                      headers={"Content-Type": "application/json", **headers}, timeout=timeout)


def stalled_post(base: str, authorization: str | None, declared: int = 8 * 1024 * 1024) -> tuple[bytes, float]:
    """Send the headers of a ``declared``-byte body and 1 KB of it, then nothing: what the server
    answers (status line) and after how many seconds."""
    host, port = base.removeprefix("http://").split(":")
    began = time.monotonic()
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        head = (f"POST /lineage/api/v1/lineage HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
                f"Content-Length: {declared}\r\n" + (f"Authorization: {authorization}\r\n" if authorization else "")
                + "\r\n").encode()
        sock.sendall(head + b"[" + b" " * 1023)
        answer = sock.recv(4096)
    return answer.split(b"\r\n", 1)[0], time.monotonic() - began


def rss_mb(server: ApiServer) -> float:
    """The resident memory of the api-server and its workers (its process group), in MB."""
    assert server.process is not None
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.getpgid(int(entry.name)) != server.process.pid:
                continue
            status = (entry / "status").read_text()
        except (OSError, ProcessLookupError):
            continue
        total += next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:")), 0)
    return total / 1024


# 1. Bounded cost per request


def test_the_caller_is_refused_before_its_body_is_read(base: str, admin: httpx.Client) -> None:
    """No login, an unknown key, or a login without WRITE anywhere: answered at once, while the
    client still owes 8 MB of body (it never sends them)."""
    viewer = get_token(base, "viewer", "viewer").json()["access_token"]
    for authorization, status in ((None, b"401"), ("Bearer lwk_unknown_key_0000000000000000000000", b"401"),
                                  (f"Bearer {viewer}", b"403")):
        line, seconds = stalled_post(base, authorization)
        assert status in line, (authorization, line)
        assert seconds < 5, (authorization, seconds)


def test_a_stalled_body_is_cut_after_the_read_limit(base: str, sales_key: str) -> None:
    line, seconds = stalled_post(base, f"Bearer {sales_key}")
    assert b"408" in line
    assert 2.5 < seconds < 15  # LINEAGE_INGEST_READ_SECONDS=3


def test_a_huge_invalid_array_costs_little_memory_and_a_small_answer(server: ApiServer, base: str,
                                                                      sales_key: str) -> None:
    """The 3-million-element gzip body of the finding, a 100k-element one, and one at the limit
    (10,000 invalid events): 413 for the first two before any element is built, 400 naming 20
    refusals for the last; the server's memory grows by far less than 100 MB."""
    before = rss_mb(server)
    bomb = gzip.compress(b"[" + b",".join([b"0"] * 3_000_000) + b"]")
    assert len(bomb) < 10_000
    refused = post(base, bomb, sales_key, **{"Content-Encoding": "gzip"})
    assert refused.status_code == 413, refused.text[:300]
    assert "over 10000 events (LINEAGE_INGEST_MAX_EVENTS)" in refused.json()["message"]
    hundred_k = post(base, gzip.compress(orjson.dumps([{"x": index} for index in range(100_000)])), sales_key,
                     **{"Content-Encoding": "gzip"})
    assert hundred_k.status_code == 413
    at_limit = post(base, orjson.dumps([{"x": index} for index in range(10_000)]), sales_key)
    assert at_limit.status_code == 400
    answer = at_limit.json()
    assert len(at_limit.content) < 8_000
    assert [item["index"] for item in answer["refused"]] == list(range(20))
    assert answer["refusedNotShown"] == 9_980 and answer["accepted"] == 0
    after = rss_mb(server)
    assert after - before < 100, (before, after)


def test_health_answers_within_a_second_during_a_large_request(base: str, sales_key: str) -> None:
    """Ten thousand events of 5 KB (50 MB) into a namespace the key may not write: parsed and
    checked in a worker thread while the health route keeps answering."""
    heavy = {**event(), "job": {"namespace": "hr_jobs", "name": "x"}, "run": {"runId": "r", "facets": {
        "doc": {"text": "y" * 5_000}}}}
    body = orjson.dumps([heavy] * 10_000)
    outcome: dict[str, httpx.Response] = {}
    worker = threading.Thread(target=lambda: outcome.setdefault("post", post(base, body, sales_key, timeout=300)))
    posted = time.monotonic()
    worker.start()
    waits = []
    while worker.is_alive():
        began = time.monotonic()
        assert httpx.get(f"{base}/lineage/health", timeout=10).status_code == 200
        waits.append(time.monotonic() - began)
        time.sleep(0.05)
    worker.join()
    post_seconds = time.monotonic() - posted
    assert outcome["post"].status_code == 403, outcome["post"].text[:300]
    assert outcome["post"].json()["refusedNotShown"] == 9_980
    # A parse on the event loop stalls health for about the whole request (7.6 s of 8 before the
    # fix: one or two answers, one as long as the request). Off the loop, health keeps answering
    # through the request; one answer may still wait for the parser's hold on the GIL, which on a
    # loaded 2-core machine has reached 1.2 s of a 3.1 s request and 1.3 s of a 2.6 s one, so the
    # bound is three quarters of the request (the stall before the fix took 95% of it).
    assert len(waits) >= 3 and max(waits) < max(1.0, post_seconds * 0.75), (waits, post_seconds)
    assert sorted(waits)[len(waits) // 2] < 0.5, waits


# 2. WRITE on every namespace an event names


@pytest.mark.parametrize(("label", "changes", "namespace"), [
    ("symlink into hr", {"outputs": [{"namespace": "s3://sales-lake", "name": "copy", "facets": {"symlinks": {
        "identifiers": [{"namespace": "s3://hr-lake", "name": "employees", "type": "TABLE"}]}}}]}, "hr"),
    ("column-lineage source in hr", {"outputs": [{"namespace": "s3://sales-lake", "name": "copy", "facets": {
        "columnLineage": {"fields": {"ssn": {"inputFields": [
            {"namespace": "s3://hr-lake", "name": "employees", "field": "ssn"}]}}}}}]}, "hr"),
    ("dataset-level source in finance", {"outputs": [{"namespace": "s3://sales-lake", "name": "copy", "facets": {
        "columnLineage": {"fields": {}, "dataset": [
            {"namespace": "s3://finance-lake", "name": "ledger", "field": "amount"}]}}}]}, "finance"),
    ("parent run in hr", {"run": {"runId": "c1", "facets": {"parent": {
        "run": {"runId": "p1"}, "job": {"namespace": "hr_jobs", "name": "payroll"}}}}}, "hr"),
    ("root run in hr", {"run": {"runId": "c2", "facets": {"parent": {
        "run": {"runId": "p2"}, "job": {"namespace": "sales", "name": "dag"},
        "root": {"run": {"runId": "p0"}, "job": {"namespace": "hr_jobs", "name": "payroll"}}}}}}, "hr"),
])
def test_an_ingest_key_writes_only_where_it_holds_write(base: str, sales_key: str, label: str,
                                                        changes: dict, namespace: str) -> None:
    alone = post(base, orjson.dumps(event(**changes)), sales_key)
    assert alone.status_code == 403, label
    assert alone.json()["message"] == f"no WRITE on namespace {namespace}", label
    batch = post(base, orjson.dumps([event(run_id="fine-" + label.replace(" ", "-")), event(**changes)]), sales_key)
    assert batch.status_code == 403 and batch.json()["accepted"] == 1, label
    assert batch.json()["refused"] == [{"index": 1, "reason": f"no WRITE on namespace {namespace}"}], label


def test_a_dataset_event_into_another_namespace_is_refused(base: str, sales_key: str) -> None:
    dataset_event = {"eventTime": "2026-11-23T09:00:00Z", "producer": "tests",
                     "dataset": {"namespace": "s3://hr-lake", "name": "employees"}}
    refused = post(base, orjson.dumps(dataset_event), sales_key)
    assert (refused.status_code, refused.json()["message"]) == (403, "no WRITE on namespace hr")


# 5. Bad input is a 4xx on every route


def test_json_nested_too_deep_in_one_element_refuses_that_element_only(base: str, sales_key: str) -> None:
    nested = orjson.dumps(event(run_id="deep", run={"runId": "deep", "facets": {"x": {"deep": "DEEP"}}}))
    nested = nested.replace(b'"DEEP"', b"[" * 300 + b"1" + b"]" * 300)  # parses, but past what the log writes
    deeper = b"[" * 2_000 + b"]" * 2_000  # past the parser's own limit
    body = b"[" + orjson.dumps(event(run_id="kept-1")) + b"," + nested + b"," + deeper + b"]"
    answer = post(base, body, sales_key)
    assert answer.status_code == 400, answer.text[:300]
    assert answer.json()["accepted"] == 1
    assert [item["index"] for item in answer.json()["refused"]] == [1, 2]


def test_an_event_over_the_size_limit_is_413_at_once(base: str, sales_key: str) -> None:
    big = event(run={"runId": "big", "facets": {"doc": {"text": "x" * (MAX_EVENT_BYTES + 10)}}})
    alone = post(base, orjson.dumps(big), sales_key)
    assert alone.status_code == 413
    assert f"over the {MAX_EVENT_BYTES}-byte limit (LINEAGE_MAX_EVENT_BYTES)" in alone.json()["message"]
    in_batch = post(base, orjson.dumps([event(run_id="small"), big]), sales_key)
    assert in_batch.status_code == 413 and in_batch.json()["accepted"] == 1
    assert in_batch.json()["refused"][0]["index"] == 1


def test_a_nul_in_any_parameter_of_any_route_is_a_4xx_with_a_message(admin: httpx.Client) -> None:
    """Every operation of the OpenAPI document, as an instance admin (so the value reaches the
    warehouse): each path parameter, then each query parameter, set to text holding a NUL."""
    document = admin.get("/openapi.json").json()
    tried = 0
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            parameters = operation.get("parameters", [])
            names = {p["name"]: p for p in parameters}
            for name, parameter in names.items():
                if parameter.get("schema", {}).get("type") not in (None, "string") and "anyOf" not in parameter.get(
                        "schema", {}):
                    continue
                values = {other: "default" if other == "namespace" else "x" for other in names}
                values[name] = "a\x00b"
                url = path
                query = {}
                for key, value in values.items():
                    if names[key]["in"] == "path":
                        url = url.replace("{" + key + "}", quote(value, safe=""))
                        url = url.replace("{" + key + ":path}", quote(value, safe=""))
                    elif key == name:
                        query[key] = value
                body = {"json": {}} if method in ("post", "put") else {}
                response = admin.request(method.upper(), url.removeprefix("/lineage"), params=query, **body)
                tried += 1
                assert 400 <= response.status_code < 500, (method, url, query, response.status_code, response.text)
                assert "message" in response.json(), (method, url, response.text)
    assert tried > 40


def test_a_nul_in_a_schema_put_or_grant_is_400(admin: httpx.Client) -> None:
    schema = admin.put(f"/v3/namespaces/sales/datasets/{quote('a' + chr(0) + 'b', safe='')}/properties",
                       json={"schema": {"fields": [{"name": "id", "type": "long"}]}})
    assert schema.status_code == 400, schema.text
    grants = admin.get("/v3/grants", params={"principal": "a\x00b"})
    assert grants.status_code == 400 and "NUL" in grants.json()["message"], grants.text


# 6. Small leaks and sharp edges


def test_a_503_names_the_connection_id_only_even_to_an_ingest_key(monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.ports import free_port

    closed = free_port()
    monkeypatch.setenv("LINEAGE_API_CONNECT_TIMEOUT_S", "1")
    with logged_in_client(f"postgresql://secretuser@127.0.0.1:{closed}/secretdb", monkeypatch) as api:
        answer = api.post("/api/v1/lineage", content=orjson.dumps(event()),
                          headers={"Authorization": "Bearer lwk_some_key_000000000000000000000000"})
    assert answer.status_code == 503
    message = answer.json()["message"]
    assert "lineage_warehouse" in message
    for secret in (str(closed), "127.0.0.1", "secretdb", "secretuser"):
        assert secret not in message, message


def test_quarantine_list_and_show_print_event_contents_literally(warehouse_db: str, settings_for,  # type: ignore[no-untyped-def]
                                                                 log_root: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """An eventTime of ``[/]`` crashed both commands; ``[link=...]`` became a terminal hyperlink."""
    from lineage.naming.identity import NO_MAPPING
    from lineage.openlineage.mapping import envelope_of
    from spark_jobs.compaction.job import run_compaction
    from warehouse.cli import app

    # as the in-process transport writes a malformed event: wrapped all the same, for the quarantine
    hostile = envelope_of(event(eventTime="[/]", job={"namespace": "sales",
                                                     "name": "[link=https://evil.example]x[/link]"}), NO_MAPPING)
    partition = log_root / "dt=2026-11-23" / "hour=09"
    partition.mkdir(parents=True)
    (partition / "hostile.jsonl").write_bytes(orjson.dumps(hostile) + b"\n")
    run_compaction(None, interval_end=datetime(2026, 11, 24, tzinfo=UTC), settings=settings_for(warehouse_db),
                   everything=True)
    monkeypatch.setenv("LINEAGE_DATABASE_URL", warehouse_db)
    runner = CliRunner()
    listed = runner.invoke(app, ["quarantine", "list"])
    assert listed.exit_code == 0, listed.output
    assert "1 rows" in listed.output and "'[/]'" in listed.output.replace("\n", " ").replace("│", " ")
    with connect(warehouse_db) as conn:
        quarantine_id = conn.execute("select quarantine_id from lineage.quarantine").fetchone()[0]
    shown = runner.invoke(app, ["quarantine", "show", str(quarantine_id)])
    assert shown.exit_code == 0, shown.output
    assert "[link=https://evil.example]x[/link]" in shown.output
    assert "\x1b]8;" not in shown.output  # no terminal hyperlink escape

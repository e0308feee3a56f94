"""OpenLineage in over HTTP, against a real ``airflow api-server``: the Marquez-compatible
endpoint with ingest keys and Airflow tokens, single events, arrays and gzip, the refusals
(400/401/403/413), the stock ``openlineage-python`` HTTP transport, and the files it leaves for
the compaction (few, sealed, whole), compacted by real Spark into the warehouse."""

from __future__ import annotations

import gzip
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import quote

import httpx
import orjson
import pytest
from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import Job, OutputDataset, Run, RunEvent, RunState

from harness.api_server import api_server as run_api_server
from lineage.settings import Settings
from spark_jobs.compaction.job import run_compaction
from tests.airflow_support import airflow_env, ensure_airflow_db, libpq
from tests.airflow_support import token as get_token
from tests.warehouse.test_compaction import rows
from warehouse.db import namespace_store
from warehouse.db.connection import connect

RUN_ID = "0195f3b1-7a3e-7c6e-9d3f-2f1c0b8e4a22"
AT = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)


def event(event_type: str = "START", *, job_namespace: str = "default", run_id: str = RUN_ID,
          minutes: int = 0) -> dict:
    return {"eventType": event_type, "eventTime": (AT + timedelta(minutes=minutes)).isoformat(),
            "producer": "tests", "run": {"runId": run_id}, "job": {"namespace": job_namespace, "name": "load orders"},
            "inputs": [{"namespace": "postgres://db:5432", "name": "shop.public.orders"}], "outputs": []}


@pytest.fixture(scope="module")
def warehouse() -> Iterator[str]:
    from tests.conftest import create_scratch_db, drop_scratch_db

    url = create_scratch_db("wh_ol")
    with connect(url, autocommit=True) as conn:
        namespace_store.create_namespace(conn, "sales", None)
    yield url
    drop_scratch_db(url)


@pytest.fixture(scope="module")
def log_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("ol-raw")


@pytest.fixture(scope="module")
def server(warehouse: str, log_root: Path) -> Iterator[str]:
    ensure_airflow_db()
    with run_api_server(airflow_env(AIRFLOW_CONN_LINEAGE_WAREHOUSE=libpq(warehouse), LINEAGE_LOG_ROOT=str(log_root),
                                    LINEAGE_INGEST_SEAL_SECONDS="1", LINEAGE_INGEST_MAX_REQUEST_MB="1")) as base:
        yield base


@pytest.fixture(scope="module")
def admin(server: str) -> httpx.Client:
    jwt = get_token(server, "admin", "admin").json()["access_token"]
    return httpx.Client(base_url=f"{server}/lineage", headers={"Authorization": f"Bearer {jwt}"}, timeout=30)


@pytest.fixture(scope="module")
def writer_key(admin: httpx.Client) -> str:
    """A key of principal ``producer``, who holds WRITE on namespace default only."""
    assert admin.put("/v3/grants", json={"principal": "producer", "entity": "namespaces/default",
                                         "privilege": "WRITE"}).status_code == 200
    created = admin.post("/v3/ingest-keys", json={"name": "airflow-prod", "principal": "producer"})
    assert created.status_code == 201, created.text
    return str(created.json()["secret"])


def post(server: str, body: bytes, key: str | None, **headers: str) -> httpx.Response:
    if key:
        headers["Authorization"] = f"Bearer {key}"
    return httpx.post(f"{server}/lineage/api/v1/lineage", content=body,
                      headers={"Content-Type": "application/json", **headers}, timeout=30)


def sealed_lines(log_root: Path, timeout: float = 15) -> list[dict]:
    """Every line of the sealed files, once no file is left open in the spool."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not list((log_root / "_spool").glob("*.open")):
            break
        time.sleep(0.2)
    return [orjson.loads(line) for path in sorted(log_root.glob("dt=*/hour=*/*.jsonl"))
            for line in path.read_bytes().splitlines()]


def test_keys_are_shown_once_stored_hashed_and_listed_for_admins_only(admin: httpx.Client, writer_key: str,
                                                                      warehouse: str, server: str) -> None:
    assert writer_key.startswith("lwk_") and len(writer_key) > 40
    listed = admin.get("/v3/ingest-keys").json()
    assert [(k["name"], k["principal"], k["key"]) for k in listed] == [
        ("airflow-prod", "producer", writer_key[:12] + "…")]
    assert "secret" not in listed[0]
    stored = rows(warehouse, "select key_hash, shown_part from lineage.ingest_keys")
    assert stored[0][0] != writer_key and writer_key not in str(stored)

    viewer = get_token(server, "viewer", "viewer").json()["access_token"]
    refused = httpx.get(f"{server}/lineage/v3/ingest-keys", headers={"Authorization": f"Bearer {viewer}"}, timeout=10)
    assert refused.status_code == 403
    assert admin.post("/v3/ingest-keys", json={"name": " ", "principal": "producer"}).status_code == 400
    assert admin.delete("/v3/ingest-keys/999999").status_code == 404


def test_one_event_an_array_and_gzip_are_appended_and_counted(server: str, writer_key: str) -> None:
    single = post(server, orjson.dumps(event("START")), writer_key)
    assert (single.status_code, single.json()) == (201, {"accepted": 1, "refused": []})
    batch = post(server, orjson.dumps([event("RUNNING", minutes=1), event("COMPLETE", minutes=2)]), writer_key)
    assert (batch.status_code, batch.json()["accepted"]) == (201, 2)
    zipped = post(server, gzip.compress(orjson.dumps(event("COMPLETE", minutes=2))), writer_key,
                  **{"Content-Encoding": "gzip"})
    assert (zipped.status_code, zipped.json()["accepted"]) == (201, 1)


def test_refusals_name_the_reason_and_the_good_events_of_the_request_land(server: str, writer_key: str,
                                                                         log_root: Path) -> None:
    no_run_id = {**event(), "run": {}}
    mixed = post(server, orjson.dumps([event("OTHER", run_id="mixed-1"), no_run_id]), writer_key)
    assert mixed.status_code == 400
    assert mixed.json()["accepted"] == 1
    assert mixed.json()["refused"] == [{"index": 1, "reason": "OpenLineage event: run.runId is missing"}]
    assert "event 1: OpenLineage event: run.runId is missing" in mixed.json()["message"]

    single = post(server, orjson.dumps({**event(), "eventTime": None}), writer_key)
    assert (single.status_code, single.json()["message"]) == (
        400, "OpenLineage event: eventTime is missing (an ISO 8601 time is required)")
    assert post(server, b"{not json", writer_key).status_code == 400
    assert post(server, b"[" + b" " * 1_100_000 + b"]", writer_key).status_code == 413

    forbidden = post(server, orjson.dumps(event(job_namespace="sales", run_id="sales-1")), writer_key)
    assert (forbidden.status_code, forbidden.json()["refused"]) == (
        403, [{"index": 0, "reason": "no WRITE on namespace sales"}])

    assert post(server, orjson.dumps(event()), None).status_code == 401
    assert post(server, orjson.dumps(event()), "lwk_not-a-key").status_code == 401

    lines = sealed_lines(log_root)
    assert {line["payload"]["run"]["runId"] for line in lines} >= {RUN_ID, "mixed-1"}
    assert "sales-1" not in {line["payload"].get("run", {}).get("runId") for line in lines}


@pytest.mark.parametrize("url", ["/lineage", "/lineage/"])
def test_the_stock_http_transport_with_an_api_key_works_at_the_url_users_write(server: str, writer_key: str,
                                                                                 url: str) -> None:
    client = OpenLineageClient(config={"transport": {
        "type": "http", "url": f"{server}{url}", "auth": {"type": "api_key", "apiKey": writer_key}}})
    run_id = "0195f3b1-7a3e-7c6e-9d3f-2f1c0b8e4a33" if url == "/lineage" else "0195f3b1-7a3e-7c6e-9d3f-2f1c0b8e4a44"
    client.emit(RunEvent(eventType=RunState.COMPLETE, eventTime=(AT + timedelta(minutes=3)).isoformat(),
                         run=Run(runId=run_id), job=Job(namespace="default", name="py"),
                         producer="tests", outputs=[OutputDataset(namespace="s3://lake", name="out")]))


def test_an_airflow_token_works_too(admin: httpx.Client) -> None:
    by_token = admin.post("/api/v1/lineage", content=orjson.dumps(event(job_namespace="sales", run_id="admin-1")),
                          headers={"Content-Type": "application/json"})
    assert by_token.status_code == 201  # an Airflow admin may write anywhere


def test_a_revoked_key_is_refused(server: str, admin: httpx.Client) -> None:
    created = admin.post("/v3/ingest-keys", json={"name": "short-lived", "principal": "producer"}).json()
    assert post(server, orjson.dumps(event(run_id="revoked-1")), created["secret"]).status_code == 201
    revoked = admin.delete(f"/v3/ingest-keys/{created['id']}")
    assert revoked.status_code == 200 and revoked.json()["revokedBy"] == "admin"
    # the api-server remembers a valid key for 10 s: until then the key is let in and the event
    # refused for its own fault (400, nothing written: a write each second would seal a file each
    # second, which the file count below does not expect), after it the key is refused (401)
    no_run_id = orjson.dumps({**event(), "run": {}})
    deadline = time.monotonic() + 15
    while (answer := post(server, no_run_id, created["secret"]).status_code) != 401:
        assert answer == 400, answer
        assert time.monotonic() < deadline, "a revoked key was still accepted after the cache time"
        time.sleep(1)


def test_what_the_endpoint_wrote_is_few_whole_files_the_compaction_turns_into_runs(
        server: str, writer_key: str, log_root: Path, warehouse: str) -> None:  # type: ignore[no-untyped-def]
    lines = sealed_lines(log_root)
    files = list(log_root.glob("dt=*/hour=*/*.jsonl"))
    hours = {path.parent for path in files}  # a run crossing an hour seals its file at the boundary
    assert 1 <= len(files) <= 7 + len(hours)  # appends share files; a file is sealed each second at most
    assert all(path.name.startswith("openlineage-") for path in files)

    settings = Settings.from_env({"LINEAGE_LOG_ROOT": str(log_root), "LINEAGE_DATABASE_URL": warehouse})
    summary = run_compaction(None, interval_end=datetime.now(UTC) + timedelta(hours=1), settings=settings)
    assert summary.files == len(files)
    assert summary.duplicates >= 1  # the COMPLETE sent twice (once gzip) counts once
    runs = dict(rows(warehouse, "select r.run_id, r.status from lineage.runs r"))
    assert runs[RUN_ID] == "completed"
    assert runs["0195f3b1-7a3e-7c6e-9d3f-2f1c0b8e4a33"] == runs["0195f3b1-7a3e-7c6e-9d3f-2f1c0b8e4a44"] == "completed"
    assert "admin-1" in runs and "sales-1" not in runs
    assert len(lines) >= 7


def test_datasets_named_by_their_openlineage_identity_round_trip_through_the_api(
        admin: httpx.Client, warehouse: str) -> None:
    """Runs after the compaction above: a name holding '/' (and '%') is one path segment."""
    runs = admin.get(f"/v3/namespaces/default/apps/default/openlineage/{quote('load orders', safe='')}/runs",
                     params={"start": "0", "end": "now"})
    assert runs.status_code == 200, runs.text
    accesses = admin.get(f"/v3/namespaces/default/apps/default/openlineage/{quote('load orders', safe='')}"
                         f"/runs/{RUN_ID}/accesses")
    assert accesses.status_code == 200, accesses.text
    read = next(item for item in accesses.json()["accesses"] if item["access"] == "read")
    name = "postgres://db:5432/shop.public.orders"
    assert read["name"] == name  # the identity comes back whole
    path = f"/v3/namespaces/default/datasets/{quote(name, safe='')}"
    assert read["links"]["metadata"] == path.lstrip("/") + "/metadata"  # the link a page follows
    tagged = admin.post(f"{path}/metadata/tags", json=["orders", "50%"])
    assert tagged.status_code == 200, tagged.text
    metadata = admin.get(f"{path}/metadata").json()
    assert metadata["entity"]["details"][-1] == {"key": "dataset", "value": name}
    assert sorted(metadata["metadata"]["USER"]["tags"]) == ["50%", "orders"]
    assert admin.get(f"/v3/namespaces/default/datasets/{quote('s3://no/such', safe='')}/lineage/fields",
                     params={"start": "0"}).status_code == 404

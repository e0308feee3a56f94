"""No producer stops the compaction for everyone (issue 28, item 9): names that differ only in
where a ``.`` or a ``|`` falls are distinct entities with distinct ids, through an ingest key, the
plugin's app, the compaction DAG (``airflow dags test``: compaction, quality gate, real dbt) and
the lineage API.

Before ``lineage.ids`` ids were joined text: job namespace ``a.b`` with job ``c`` and ``a`` with
``b.c`` were one program ``openlineage.default.a.b.c``; runs ``q.r`` of ``ax``/``p`` and ``r`` of
``ax``/``p.q`` one ``program_run_id``; and a dataset or program name holding ``|`` could make
two lineage edges one ``lineage_edge_id``. dbt's ``unique`` tests then failed, and every DAG run
failed at ``build_marts`` until the rows were deleted by hand. And a run whose COMPLETE came
with an earlier ``eventTime`` than its START failed the quality gate, which blocked the marts of
every later run until an operator acknowledged the batch.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

import orjson
import pytest
from fastapi.testclient import TestClient

from tests.airflow_support import admin_client
from tests.conftest import create_scratch_db, drop_scratch_db
from tests.dags.test_compaction_dag import dags_test, query

AT = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)
NAMESPACE_MAP = "a=default"  # every job namespace below starts with "a": all land in default
ONE, TWO, SHARED = "s3://lake/one", "s3://lake/two", "s3://lake/shared"


def job_run(job_namespace: str, job_name: str, run_id: str, inputs: Sequence[tuple[str, str]],
            outputs: Sequence[tuple[str, str]] = (), minutes: tuple[int, int] = (0, 5)) -> list[dict[str, Any]]:
    """START and COMPLETE (``minutes`` after AT) of one OpenLineage run of the job, reading
    ``inputs`` and writing ``outputs`` (``(namespace, name)`` pairs)."""
    def one(event_type: str, minutes: int) -> dict[str, Any]:
        return {"eventType": event_type, "eventTime": (AT + timedelta(minutes=minutes)).isoformat(),
                "producer": "tests", "run": {"runId": run_id},
                "job": {"namespace": job_namespace, "name": job_name},
                "inputs": [{"namespace": ns, "name": name} for ns, name in inputs],
                "outputs": [{"namespace": ns, "name": name} for ns, name in outputs]}
    return [one("START", minutes[0]), one("COMPLETE", minutes[1])]


EVENTS = [
    # program ids: a.b/c and a/b.c, each reading its own dataset, both writing one
    *job_run("a.b", "c", "0195f3b1-7a3e-7c6e-9d3f-000000000001", [("s3://lake", "one")], [("s3://lake", "shared")]),
    *job_run("a", "b.c", "0195f3b1-7a3e-7c6e-9d3f-000000000002", [("s3://lake", "two")], [("s3://lake", "shared")]),
    # program run ids (namespace.application.type.program.run): ax/p run q.r and ax/p.q run r
    *job_run("ax", "p", "q.r", [("s3://lake", "one")]),
    *job_run("ax", "p.q", "r", [("s3://lake", "one")]),
    # lineage edge ids, md5 of data_id|program_id|access: dataset s3://b/k|openlineage.default.aj read
    # by am/n, and dataset s3://b/k read by aj|openlineage/default.am.n
    *job_run("am", "n", "0195f3b1-7a3e-7c6e-9d3f-000000000003", [("s3://b", "k|openlineage.default.aj")]),
    *job_run("aj|openlineage", "default.am.n", "0195f3b1-7a3e-7c6e-9d3f-000000000004", [("s3://b", "k")]),
    # a producer's clocks put the run's COMPLETE before its START (a scheduler's and a worker's)
    *job_run("as", "skewed", "0195f3b1-7a3e-7c6e-9d3f-000000000005", [("s3://lake", "one")], minutes=(10, 5)),
]


@pytest.fixture(scope="module")
def warehouse() -> Iterator[str]:
    url = create_scratch_db("trust_ids")
    yield url
    drop_scratch_db(url)


def ingest_key(client: TestClient) -> str:
    """A key of principal ``producer``, who holds WRITE on namespace default only."""
    granted = client.put("/v3/grants", json={"principal": "producer", "entity": "namespaces/default",
                                             "privilege": "WRITE"})
    assert granted.status_code == 200, granted.text
    created = client.post("/v3/ingest-keys", json={"name": "team-a", "principal": "producer"})
    assert created.status_code == 201, created.text
    return str(created.json()["secret"])


def lineage(client: TestClient, dataset: str) -> dict[str, Any]:
    answer = client.get(f"/v3/namespaces/default/datasets/{quote(dataset, safe='')}/lineage",
                        params={"start": "0", "end": "now", "levels": "1"})
    assert answer.status_code == 200, answer.text
    return answer.json()  # type: ignore[no-any-return]


def test_names_differing_only_where_a_dot_falls_compact_build_the_marts_and_stay_two_programs(
    warehouse: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log_root = tmp_path / "raw"
    monkeypatch.setenv("LINEAGE_LOG_ROOT", str(log_root))
    monkeypatch.setenv("LINEAGE_NAMESPACE_MAP", NAMESPACE_MAP)
    with admin_client(warehouse) as client:  # leaving it seals the ingest log's open file
        key = ingest_key(client)
        posted = client.post("/api/v1/lineage", content=orjson.dumps(EVENTS),
                             headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
        assert posted.status_code == 201, posted.text
        assert posted.json()["accepted"] == len(EVENTS)

    next_hour = (datetime.now(UTC) + timedelta(hours=1)).replace(minute=0, second=0, microsecond=0)
    output = dags_test(log_root, warehouse, next_hour.isoformat())  # fails at build_marts before the fix
    assert "quarantined=0" in output, output[-4000:]

    assert query(warehouse, "select program_id from lineage_marts.program_runs where application in ('a', 'a.b') "
                            "order by program_id") == [("openlineage.default.a.b.c",),
                                                       ("openlineage.default.a\\.b.c",)]
    assert query(warehouse, "select program_run_id from lineage_marts.program_runs where application = 'ax' "
                            "order by program_run_id") == [("default.ax.openlineage.p.q.r",),
                                                           ("default.ax.openlineage.p\\.q.r",)]
    edges = query(warehouse, "select lineage_edge_id, data_id, program_id from lineage_marts.dataset_lineage_edges "
                             "where data_id like 'dataset.default.s3://b/%' order by data_id")
    assert [(data, program) for _, data, program in edges] == [
        ("dataset.default.s3://b/k", "openlineage.default.aj|openlineage.default.am.n"),
        ("dataset.default.s3://b/k|openlineage.default.aj", "openlineage.default.am.n")]
    assert len({edge_id for edge_id, _, _ in edges}) == 2
    assert query(warehouse, "select started_at, stopped_at from lineage_marts.program_runs where application = 'as'"
                 ) == [(AT + timedelta(minutes=10), AT + timedelta(minutes=5))]  # kept as sent

    with admin_client(warehouse) as client:
        shared = lineage(client, SHARED)
        assert shared["programs"] == {
            "openlineage.default.a\\.b.c": {"id": {"namespace": "default", "application": "a.b",
                                                   "type": "openlineage", "id": "c"}, "jobType": None},
            "openlineage.default.a.b.c": {"id": {"namespace": "default", "application": "a",
                                                 "type": "openlineage", "id": "b.c"}, "jobType": None},
        }
        assert sorted((r["data"], r["program"], r["access"]) for r in shared["relations"]) == [
            ("dataset.default.s3://lake/one", "openlineage.default.a\\.b.c", "read"),
            ("dataset.default.s3://lake/shared", "openlineage.default.a.b.c", "write"),
            ("dataset.default.s3://lake/shared", "openlineage.default.a\\.b.c", "write"),
            ("dataset.default.s3://lake/two", "openlineage.default.a.b.c", "read"),
        ]
        assert {program: links["runs"] for program, links in shared["links"].items()
                if program.startswith("openlineage.")} == {
            "openlineage.default.a\\.b.c": "v3/namespaces/default/apps/a.b/openlineage/c/runs",
            "openlineage.default.a.b.c": "v3/namespaces/default/apps/a/openlineage/b.c/runs",
        }
        # each program's own read: the lineage of "two" reaches only a/b.c's
        assert sorted(lineage(client, TWO)["programs"]) == ["openlineage.default.a.b.c"]

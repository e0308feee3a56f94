"""A run known only from its end is a run (issue 28, item 8).

OpenLineage runs that sent COMPLETE (or FAIL) and never START, through the real
``openlineage-python`` client and our transport, compacted by the real job into real PostgreSQL,
their column lineage derived by the real field lineage job and the walk mart built by real dbt.
A run's time is its start, or else its earliest event: each such run must be in every windowed
answer (its program's runs, field lineage, field summaries, dataset lineage) for a window around
its end, and in none for a window that excludes it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import column_lineage_dataset as cl

from lineage.settings import Settings
from spark_jobs.compaction.job import run_compaction
from spark_jobs.field_lineage.job import run_field_lineage
from tests.airflow_support import logged_in_client
from tests.conftest import create_scratch_db, drop_scratch_db
from tests.factories import move_into_hour
from tests.warehouse.test_openlineage_compaction import PRODUCER, client_for
from warehouse.pipeline.dbt_build import build_marts

END = datetime(2026, 11, 21, 6, 0, tzinfo=UTC)
ORDERS = "postgres://db:5432/shop.public.orders"
DS = "/v3/namespaces/default/datasets"
PROGRAMS = "/v3/namespaces/default/apps/default/openlineage"


def seconds(moment: datetime) -> str:
    return str(int(moment.timestamp()))


@dataclass(frozen=True)
class EndedOnly:
    """A run whose one event is its end (``state`` at ``at``), reading orders.amount into
    ``output.field`` (column lineage)."""

    state: RunState
    job: str
    run_id: str
    at: datetime
    output: str
    field: str
    status: str

    @property
    def dataset(self) -> str:  # as an API path segment
        return quote(f"s3://lake/{self.output}", safe="")

    def event(self) -> RunEvent:
        orders = InputDataset(namespace="postgres://db:5432", name="shop.public.orders")
        written = OutputDataset(namespace="s3://lake", name=self.output, facets={
            "columnLineage": cl.ColumnLineageDatasetFacet(fields={self.field: cl.Fields(inputFields=[cl.InputField(
                namespace="postgres://db:5432", name="shop.public.orders", field="amount",
                transformations=[cl.Transformation(type="DIRECT", subtype="AGGREGATION", description="sum(amount)",
                                                   masking=False)])])})})
        return RunEvent(eventType=self.state, eventTime=self.at.isoformat(), run=Run(runId=self.run_id),
                        job=Job(namespace="default", name=self.job), producer=PRODUCER, inputs=[orders],
                        outputs=[written])

    def windows(self) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
        """A window around the end, one ending an hour before it and one starting an hour after it."""
        hour = timedelta(hours=1)
        return ({"start": seconds(self.at - hour), "end": seconds(self.at + hour)},
                {"start": seconds(self.at - 2 * hour), "end": seconds(self.at - hour)},
                {"start": seconds(self.at + hour), "end": seconds(self.at + 2 * hour)})


ENDED_ONLY = {
    "COMPLETE": EndedOnly(RunState.COMPLETE, "load_totals", "0195f3b1-00c1-7c6e-9d3f-2f1c0b8e4ac1",
                          datetime(2026, 11, 20, 10, 0, tzinfo=UTC), "marts/totals", "total", "completed"),
    "FAIL": EndedOnly(RunState.FAIL, "load_refunds", "0195f3b1-00f1-7c6e-9d3f-2f1c0b8e4af1",
                      datetime(2026, 11, 20, 14, 0, tzinfo=UTC), "marts/refunds", "refund", "failed"),
}


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    url = create_scratch_db("run_time")
    log_root = tmp_path_factory.mktemp("raw-events")
    transport = client_for(log_root).transport
    move_into_hour(log_root, [transport.emit(run.event()) for run in ENDED_ONLY.values()])
    settings = Settings.from_env({**os.environ, "LINEAGE_LOG_ROOT": str(log_root), "LINEAGE_DATABASE_URL": url,
                                  "LINEAGE_AUTO_CREATE_NAMESPACES": "true"})
    assert run_compaction(None, interval_end=END, settings=settings).quarantined == 0
    assert run_field_lineage(None, settings).quarantined == 0
    build_marts(url, settings, command="run", select="+lineage_walk")
    yield url
    drop_scratch_db(url)


@pytest.fixture
def api(warehouse: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    with logged_in_client(warehouse, monkeypatch) as client:
        yield client


def get(api: TestClient, path: str, **params: Any) -> Any:
    response = api.get(path, params=params)
    assert response.status_code == 200, response.text
    return response.json()


@pytest.mark.parametrize("case", ENDED_ONLY)
def test_a_run_known_only_from_its_end_is_in_its_programs_runs_at_its_end(api: TestClient, case: str) -> None:
    run = ENDED_ONLY[case]
    around, before, after = run.windows()
    runs = get(api, f"{PROGRAMS}/{run.job}/runs", **around)["runs"]
    assert [(r["run_id"], r["status"], r["started_at"], r["stopped_at"]) for r in runs] == [
        (run.run_id, run.status, None, int(run.at.timestamp()))]  # started_at is the START event's: none
    for outside in (before, after):
        assert get(api, f"{PROGRAMS}/{run.job}/runs", **outside)["runs"] == []


@pytest.mark.parametrize("case", ENDED_ONLY)
def test_a_run_known_only_from_its_end_is_in_field_lineage_at_its_end(api: TestClient, case: str) -> None:
    run = ENDED_ONLY[case]
    around, before, after = run.windows()
    provenance = f"{DS}/{run.dataset}/fields/{run.field}/lineage"
    body = get(api, provenance, **around, view="detailed")
    assert [(p["runs"], p["firstSeenInSeconds"]) for p in body["paths"]] == [([run.run_id], int(run.at.timestamp()))]
    (path,) = body["paths"]
    (aggregation,) = [op for op in path["operations"] if op["name"] == "aggregation"]
    assert aggregation["inputs"][0]["transformation"]["description"] == "sum(amount)"  # from the columnLineage facet
    impacts = get(api, f"{DS}/{quote(ORDERS, safe='')}/fields/amount/lineage", **around, direction="outgoing")
    assert [(i["field"], i["paths"][0]["runs"]) for i in impacts["impacts"]
            if i["dataset"] == f"s3://lake/{run.output}"] == [(run.field, [run.run_id])]
    fields = get(api, f"{DS}/{run.dataset}/lineage/fields", **around)["fields"]
    assert [(f["name"], f["hasLineage"]) for f in fields] == [(run.field, True)]
    for outside in (before, after):
        assert get(api, provenance, **outside)["paths"] == []
        fields = get(api, f"{DS}/{run.dataset}/lineage/fields", **outside)["fields"]
        assert [(f["name"], f["hasLineage"]) for f in fields] == [(run.field, False)]


@pytest.mark.parametrize("case", ENDED_ONLY)
def test_a_run_known_only_from_its_end_is_in_field_summaries_at_its_end(api: TestClient, case: str) -> None:
    run = ENDED_ONLY[case]
    around, before, after = run.windows()
    summary = f"{DS}/{run.dataset}/lineage/fields/{run.field}"
    assert get(api, summary, **around, direction="incoming") == {"incoming": [
        {"dataset": {"namespace": "default", "dataset": ORDERS, "entity": "DATASET"}, "fields": ["amount"]}]}
    operations = get(api, f"{summary}/operations", **around, direction="incoming")
    assert [(p["program"]["program"], p["lastExecutedTimeInSeconds"])
            for p in operations["incoming"][0]["programs"]] == [(run.job, int(run.at.timestamp()))]
    whole = get(api, f"{DS}/{run.dataset}/lineage/allfieldlineage", **around, direction="incoming")
    assert [relation["relations"] for relation in whole["incoming"]] == [
        [{"source": "amount", "destination": run.field}]]
    for outside in (before, after):
        assert get(api, summary, **outside, direction="incoming") == {"incoming": []}
        assert get(api, f"{DS}/{run.dataset}/lineage/allfieldlineage", **outside, direction="incoming")[
            "incoming"] == []


@pytest.mark.parametrize("case", ENDED_ONLY)
def test_a_run_known_only_from_its_end_is_in_dataset_lineage_at_its_end(api: TestClient, case: str) -> None:
    run = ENDED_ONLY[case]
    around, before, after = run.windows()
    relations = get(api, f"{DS}/{run.dataset}/lineage", **around, levels=1)["relations"]
    # relations sort by data: orders (postgres://...) before the output (s3://...)
    assert [(r["access"], r["runs"]) for r in relations] == [("read", [run.run_id]), ("write", [run.run_id])]
    assert [r["data"].endswith(name) and r["program"].endswith(f".{run.job}")
            for r, name in zip(relations, (ORDERS, f"s3://lake/{run.output}"), strict=True)] == [True, True]
    for outside in (before, after):
        assert get(api, f"{DS}/{run.dataset}/lineage", **outside)["relations"] == []

"""Dataset aliases (OpenLineage's symlinks) through search and the dataset lineage endpoint: an
alias finds its one dataset and is no dataset of its own. Recorded Spark events (a Hive table
naming its HDFS location) through the real client's transport, and native format-v2 events,
compacted by the real job into real PostgreSQL, marts built by dbt."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from lineage.settings import Settings
from spark_jobs.compaction.job import run_compaction
from tests.airflow_support import get_ok as get
from tests.airflow_support import logged_in_client
from tests.conftest import create_scratch_db, drop_scratch_db
from tests.factories import event, iso, move_into_hour, write_log
from tests.warehouse.test_openlineage_compaction import client_for
from warehouse.db import lineage_store
from warehouse.db.connection import connect
from warehouse.pipeline.dbt_build import build_marts
from warehouse.service.lineage_graph import DataRef

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "openlineage"
FIXTURE = FIXTURES / "spark_save_into_datasource_column_lineage.json"
HDFS_TABLE = "hdfs://test-hadoop:9820//user/hive/warehouse/mydatabase.db/source_table"
HIVE_TABLE = "hive://test-hadoop:9083/mydatabase.source_table"
AT = datetime(2026, 11, 20, 1, 0, tzinfo=UTC)
END = datetime(2026, 11, 21, 6, 0, tzinfo=UTC)
WINDOW = {"start": str(int(datetime(2026, 11, 20, tzinfo=UTC).timestamp())),
          "end": str(int(datetime(2026, 11, 21, tzinfo=UTC).timestamp()))}


def native_events() -> list[dict[str, Any]]:
    """A run reading ``orders`` and writing ``totals``, whose producer names ``totals_table`` as
    another name of ``totals`` (format v2's dataset_facets)."""
    run = {"application": "Shop", "program_type": "spark", "program": "Totals", "run_id": "t-1"}
    return [event("run_start", run=run, event_time=iso(AT)),
            event("dataset_access", {"dataset": {"name": "orders"}, "access": "read"}, run=run, event_time=iso(AT)),
            event("dataset_access", {"dataset": {"name": "totals"}, "access": "write"}, run=run, event_time=iso(AT)),
            event("dataset_facets", {"dataset": {"name": "totals"}, "aliases": [{"name": "totals_table",
                                                                                   "type": "TABLE"}]},
                  run=run, event_time=iso(AT), schema_version=2),
            event("run_end", {"status": "completed"}, run=run, event_time=iso(AT + timedelta(minutes=5)))]


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    url = create_scratch_db("aliases_api")
    log_root = tmp_path_factory.mktemp("raw-events")
    transport = client_for(log_root).transport
    move_into_hour(log_root, [transport.emit(e) for e in json.loads(FIXTURE.read_text())])  # type: ignore[attr-defined]
    write_log(log_root, native_events())
    settings = Settings.from_env({**os.environ, "LINEAGE_LOG_ROOT": str(log_root), "LINEAGE_DATABASE_URL": url})
    run_compaction(None, interval_end=END, settings=settings)
    build_marts(url, settings, command="run", select="+lineage_walk +metadata_search_terms")
    yield url
    drop_scratch_db(url)


@pytest.fixture
def api(warehouse: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    with logged_in_client(warehouse, monkeypatch) as client:
        yield client


def test_searching_a_symlink_finds_the_one_dataset_it_names(api: TestClient) -> None:
    found = get(api, "/v3/namespaces/default/metadata/search", query=f'"{HIVE_TABLE}"')
    assert [(r["entity"]["type"], r["entity"]["details"][-1]["value"]) for r in found["results"]] == [
        ("dataset", HDFS_TABLE)]
    assert found["results"][0]["matches"] == [{"scope": "SYSTEM", "kind": "alias", "key": "alias",
                                               "value": HIVE_TABLE}]
    prefix = get(api, "/v3/namespaces/default/metadata/search", query='"hive://test-hadoop"')  # a prefix
    assert [r["entity"]["details"][-1]["value"] for r in prefix["results"]] == [HDFS_TABLE]


def test_the_lineage_of_an_alias_is_the_lineage_of_its_dataset(api: TestClient) -> None:
    by_alias = get(api, "/v3/namespaces/default/datasets/totals_table/lineage", **WINDOW)
    assert by_alias == get(api, "/v3/namespaces/default/datasets/totals/lineage", **WINDOW)
    assert [(r["data"], r["access"]) for r in by_alias["relations"]] == [
        ("dataset.default.orders", "read"), ("dataset.default.totals", "write")]


def test_a_symlink_holding_slashes_names_its_dataset_in_the_api_path(api: TestClient) -> None:
    everything = {"start": "0", "end": str(int(datetime.now(UTC).timestamp()))}  # one instant for both calls
    by_alias = get(api, f"/v3/namespaces/default/datasets/{quote(HIVE_TABLE, safe='')}/lineage", **everything)
    by_name = get(api, f"/v3/namespaces/default/datasets/{quote(HDFS_TABLE, safe='')}/lineage", **everything)
    assert by_alias == by_name
    assert "read" in {relation["access"] for relation in by_name["relations"]}  # the Spark job read it


@pytest.mark.parametrize("part", ["source_table", "mydatabase", "test-hadoop"])
def test_a_dataset_is_found_by_any_part_of_its_identity(api: TestClient, part: str) -> None:
    found = get(api, "/v3/namespaces/default/metadata/search", query=part)
    assert HDFS_TABLE in [r["entity"]["details"][-1]["value"] for r in found["results"]]


def test_a_symlink_resolves_to_its_dataset_and_is_no_dataset_of_its_own(warehouse: str) -> None:
    with connect(warehouse) as conn:
        assert lineage_store.dataset_named(conn, DataRef("default", "dataset", HIVE_TABLE)) == DataRef(
            "default", "dataset", HDFS_TABLE)
        assert lineage_store.dataset_named(conn, DataRef("default", "dataset", "orders")) == DataRef(
            "default", "dataset", "orders")
        assert conn.execute("select count(*) from lineage.datasets where dataset like 'hive:%'").fetchone() == (0,)

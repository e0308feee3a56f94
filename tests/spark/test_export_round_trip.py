"""OpenLineage out, round trip of the demo's pipelines (issue 34): the example pipelines, recorded
by hand with our client and captured from Spark's plans (``spark_jobs.examples``), run on real
Spark and are compacted with their field lineage; ``lineage export --to`` pushes the warehouse
through openlineage-python's HTTP transport to a second warehouse's API over HTTP; compacted
there, every answer agrees: runs and statuses, times, accesses, the run hierarchy, run facets,
schemas and each run's column lineage with its kinds.

One thing an OpenLineage identity cannot carry: the warehouse namespace of a dataset named by
its identity (a captured file path, ``file//...``). The receiving warehouse decides it by its
own ``LINEAGE_NAMESPACE_MAP`` (docs/openlineage.md, "Identity"); the comparison applies that
rule, and the test shows it moves exactly those datasets."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from lineage.model.metadata_entity import parse
from lineage.naming.identity import NO_MAPPING, parse_dataset
from spark_jobs.examples import captured, purchase_history, sample_data, user_profiles
from tests.conftest import create_scratch_db, drop_scratch_db
from tests.plugin.test_openlineage_export import (
    _accesses,
    _column_lineage,
    _links,
    _run_facets,
    _runs,
    _schemas,
    compacted,
    lineage,
    second_server,
)
from warehouse.service.openlineage_export import PRODUCER


def _moved(namespace: str, dataset: str) -> str:
    """The namespace a dataset lands in on the receiving side: its own for our client's names, the
    receiver's map's for a name that is an OpenLineage identity."""
    identity = parse_dataset(dataset)
    return namespace if identity is None else NO_MAPPING.for_dataset(identity.namespace)


def _access_rows(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    return sorted((*row[:5], _moved(row[5], row[7]), *row[6:]) for row in rows)


def _schema_rows(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    moved = []
    for entity_key, schema in rows:
        parts = dict(parse(entity_key).parts)
        moved.append((_moved(parts["namespace"], parts["dataset"]), parts["dataset"], schema))
    return sorted(moved)


def test_the_demos_hand_recorded_and_captured_pipelines_come_back_as_they_were(
        spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log_root = tmp_path / "logs"
    monkeypatch.setenv("LINEAGE_LOG_ROOT", str(log_root))
    users = sample_data.write_user_data(tmp_path / "user_data", rows=20, seed=1)
    stream = sample_data.write_purchase_events(tmp_path / "purchaseStream", rows=50, seed=2)
    user_profiles.run(spark, users, tmp_path / "mytableds")
    for step in (lambda: purchase_history.run_flow(spark, stream, tmp_path),
                 lambda: purchase_history.run_builder(spark, tmp_path),
                 lambda: purchase_history.run_service(spark, tmp_path)):
        step()
    captured_root = tmp_path / "captured"
    captured.run_user_profiles(spark, users, captured_root / "mytableds")
    captured.run_flow(spark, stream, captured_root)
    captured.run_builder(spark, captured_root)
    captured.run_service(spark, captured_root)
    until = datetime.now(UTC) + timedelta(hours=1)
    source, other = create_scratch_db("demo_export"), create_scratch_db("demo_export_again")
    try:
        compacted(source, log_root, until)
        runs = _runs(source)
        assert {row[1] for row in runs} >= {"UserProfilePipeline", "PurchaseHistory", "CapturedPurchaseHistory",
                                            "CapturedUserProfilePipeline"}
        assert _column_lineage(source) != {}
        with second_server(other, tmp_path / "other-log", monkeypatch) as (url, token):
            summary = lineage("export", "--since", "0", "--until", str(int(until.timestamp())), "--to",
                              f"{url}/api/v1/lineage", "--api-key", token, database=source).stderr
        assert "exported" in summary, summary
        compacted(other, tmp_path / "other-log", datetime.now(UTC) + timedelta(hours=1))
        assert _runs(other) == runs
        assert _links(other) == _links(source)
        assert _column_lineage(other) == _column_lineage(source)
        assert _access_rows(_accesses(other)) == _access_rows(_accesses(source))
        moved = {row[5:8] for row in _accesses(source) if _moved(row[5], row[7]) != row[5]}
        assert moved and {(row[0], row[2].split("/", 1)[0]) for row in moved} == {("myns", "file")}  # captured, of myns
        assert _schema_rows(_schemas(other)) == _schema_rows(_schemas(source))
        added = [row for row in _run_facets(other) if PRODUCER in row[-1]]  # the jobType the export gave
        assert {row[5:7] for row in added} == {("job", "jobType")}
        assert [row for row in _run_facets(other) if row not in added] == _run_facets(source)
    finally:
        drop_scratch_db(source)
        drop_scratch_db(other)

from __future__ import annotations

from pathlib import Path

from airflow.dag_processing.dagbag import DagBag

ROOT = Path(__file__).resolve().parents[2]


def test_dags_import_without_errors_and_are_wired_as_documented() -> None:
    bag = DagBag(dag_folder=str(ROOT / "dags"))
    assert bag.import_errors == {}
    assert set(bag.dag_ids) == {"lineage_compaction", "lineage_namespace_cleanup", "example_openlineage_sql"}
    dag = bag.dags["lineage_compaction"]
    assert dag is not None
    assert dag.max_active_runs == 1
    assert dag.catchup is False
    assert "lineage" in dag.tags
    assert [task.task_id for task in dag.topological_sort()] == [
        "compact", "field_lineage", "apply_metadata", "propagate_tags", "check", "build_marts", "publish", "notify",
        "announce_changes", "announce_blast_radius"]
    assert all(task.retries == 2 and task.retry_exponential_backoff for task in dag.tasks)
    assert {outlet.name for outlet in dag.get_task("notify").outlets} == {"lineage_metadata_changes"}
    assert [outlet.name for outlet in dag.get_task("announce_changes").outlets] == ["lineage_dataset_changes"]
    assert [outlet.name for outlet in dag.get_task("announce_blast_radius").outlets] == ["lineage_blast_radius"]
    publish = dag.get_task("publish")
    assert {outlet.name for outlet in publish.outlets} == {
        "lineage_runs", "lineage_dataset_accesses", "lineage_pending_events", "lineage_marts"}


def test_the_cleanup_dag_is_scheduled_on_namespace_deletions() -> None:
    bag = DagBag(dag_folder=str(ROOT / "dags"))
    dag = bag.dags["lineage_namespace_cleanup"]
    assert dag is not None
    assert [asset.name for asset in dag.timetable.asset_condition.objects] == [  # type: ignore[attr-defined]
        "lineage_namespace_deletions"]
    assert dag.max_active_runs == 1 and dag.catchup is False
    assert [task.task_id for task in dag.topological_sort()] == ["clean", "build_marts", "finish"]
    assert {outlet.name for outlet in dag.get_task("finish").outlets} == {"lineage_marts"}


def test_the_openlineage_example_runs_sql_only_when_asked() -> None:
    bag = DagBag(dag_folder=str(ROOT / "dags"))
    dag = bag.dags["example_openlineage_sql"]
    assert dag is not None
    assert type(dag.timetable).__name__ == "NullTimetable" and dag.catchup is False
    assert {"example", "openlineage"} <= set(dag.tags)
    assert [(task.task_id, type(task).__name__, task.conn_id) for task in dag.topological_sort()] == [  # type: ignore[attr-defined]
        ("seed_shop", "SQLExecuteQueryOperator", "lineage_warehouse"),
        ("build_customer_totals", "SQLExecuteQueryOperator", "lineage_warehouse"),
        ("load_big_spenders", "SQLExecuteQueryOperator", "lineage_warehouse")]


def test_the_refresh_dag_exists_only_when_asked_and_watches_the_log_root(monkeypatch, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert "lineage_refresh" not in DagBag(dag_folder=str(ROOT / "dags")).dag_ids  # off by default
    monkeypatch.setenv("LINEAGE_REFRESH_ON_NEW_FILES", "true")
    monkeypatch.setenv("LINEAGE_LOG_ROOT", str(tmp_path / "raw"))
    bag = DagBag(dag_folder=str(ROOT / "dags"))
    assert bag.import_errors == {}
    dag = bag.dags["lineage_refresh"]
    (asset,) = dag.timetable.asset_condition.objects  # type: ignore[attr-defined]
    assert (asset.name, asset.uri) == ("lineage_raw_log", f"file://{tmp_path / 'raw'}")
    (watcher,) = asset.watchers
    assert watcher.trigger.serialize() == ("warehouse.pipeline.new_files_trigger.NewLogFilesTrigger",
                                           {"log_root": str(tmp_path / "raw"), "poke_interval": 1.0})
    assert dag.max_active_runs == 1 and dag.catchup is False
    assert [task.task_id for task in dag.topological_sort()] == ["refresh", "notify"]
    assert {outlet.name for outlet in dag.get_task("refresh").outlets} == {
        "lineage_runs", "lineage_dataset_accesses", "lineage_pending_events", "lineage_marts"}
    assert dag.params["_openlineage_emission_policy"] == {"emit": False}  # its own runs are no new files

    monkeypatch.setenv("LINEAGE_LOG_ROOT", "s3a://bucket/raw")  # nothing to watch: a clear error
    (error,) = DagBag(dag_folder=str(ROOT / "dags")).import_errors.values()
    assert "LINEAGE_REFRESH_ON_NEW_FILES needs a local or mounted LINEAGE_LOG_ROOT" in error

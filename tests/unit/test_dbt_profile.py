"""dbt's connection keeps every parameter of the warehouse's (an Airflow connection's extras
arrive as the URL's query), and its result is read from its own run_results.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lineage.errors import DbtBuildError
from lineage.settings import Settings
from warehouse.pipeline.dbt_build import built_models, dbt_env, run_results


def test_every_parameter_of_the_connection_reaches_dbt(tmp_path: Path) -> None:
    url = ("postgresql://lineage%40prod:p%40ss%3Aw%2Fd@db.internal:6432/warehouse"
           "?sslmode=verify-full&sslrootcert=%2Fetc%2Fca.pem&options=-c%20statement_timeout%3D60000"
           "&application_name=lineage-dbt&target_session_attrs=read-write&unknown=kept-out")
    env = dbt_env(url, Settings.from_env({"LINEAGE_HOME": str(tmp_path)}))
    assert (env["LINEAGE_DBT_HOST"], env["LINEAGE_DBT_PORT"], env["LINEAGE_DBT_USER"], env["LINEAGE_DBT_PASSWORD"],
            env["LINEAGE_DBT_DBNAME"]) == ("db.internal", "6432", "lineage@prod", "p@ss:w/d", "warehouse")
    assert (env["PGSSLMODE"], env["PGSSLROOTCERT"], env["PGOPTIONS"], env["PGAPPNAME"],
            env["PGTARGETSESSIONATTRS"]) == ("verify-full", "/etc/ca.pem", "-c statement_timeout=60000",
                                             "lineage-dbt", "read-write")
    assert "kept-out" not in env.values()


def test_the_result_is_dbt_s_run_results(tmp_path: Path) -> None:
    path = tmp_path / "run_results.json"
    path.write_text(json.dumps({"results": [{"status": status} for status in (
        "success", "success", "pass", "pass", "pass", "warn", "skipped", "fail")]}))
    assert run_results(path) == (5, 1)
    with pytest.raises(DbtBuildError, match="left no readable"):
        run_results(tmp_path / "missing.json")


def test_the_models_a_build_built_are_its_successful_model_results(tmp_path: Path) -> None:
    """What decides whether the marts stage rebuilds the search index (its terms view built)."""
    path = tmp_path / "run_results.json"
    path.write_text(json.dumps({"results": [
        {"unique_id": "model.lineage_warehouse.metadata_search_terms", "status": "success"},
        {"unique_id": "model.lineage_warehouse.program_runs", "status": "error"},
        {"unique_id": "model.lineage_warehouse.lineage_walk", "status": "skipped"},
        {"unique_id": "test.lineage_warehouse.not_null_metadata_search_terms_entity_key.5c3f", "status": "pass"},
        {"unique_id": "model.other_project.metadata_search_terms", "status": "success"}]}))
    assert built_models(path) == {"metadata_search_terms"}

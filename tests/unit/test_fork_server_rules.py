"""Which ``airflow`` calls the suite's warm server runs (harness/fork_server.py): ``dags test``
and ``dags reserialize`` only, and only when the caller's environment differs from the server's in nothing Airflow or
Python reads at import. Everything else is left to the real ``airflow`` (the client then runs it)."""

from __future__ import annotations

import pytest

from harness.fork_server import _airflow_declines, _dbt_declines

STARTED = {"AIRFLOW_HOME": "/h", "AIRFLOW__CORE__DAGS_FOLDER": "/dags", "PATH": "/bin", "PYTHONPATH": ".:plugins",
           "LINEAGE_LOG_ROOT": "/raw", "AIRFLOW_CONN_LINEAGE_WAREHOUSE": "postgresql://a/b"}


def test_dags_test_in_the_servers_environment_is_served() -> None:
    assert _airflow_declines(["airflow", "dags", "test", "lineage_compaction", "2026-11-21"], dict(STARTED),
                             STARTED) is None


@pytest.mark.parametrize("changed", [
    {"LINEAGE_LOG_ROOT": "/elsewhere"},  # the lineage settings: read when a task runs
    {"LINEAGE_DATABASE_URL": "postgresql://x/y"},
    {"AIRFLOW_CONN_LINEAGE_WAREHOUSE": "postgresql://c/d"},  # connections and variables: looked up when used
    {"AIRFLOW_VAR_SOMETHING": "1"},
    {"PYTEST_CURRENT_TEST": "tests/x.py::test (call)"},  # nothing Airflow or Python reads
    {"PROBE_OUT": "/tmp/out"},
    # what a session's Spark session adds to its environment: read when a task starts a session
    {"PYSPARK_PYTHON": "/venv/bin/python", "PYSPARK_DRIVER_PYTHON": "/venv/bin/python",
     "SPARK_AUTH_SOCKET_TIMEOUT": "15", "SPARK_BUFFER_SIZE": "65536"},
])
def test_variables_read_when_a_task_runs_may_differ(changed: dict[str, str]) -> None:
    assert _airflow_declines(["airflow", "dags", "test", "d"], {**STARTED, **changed}, STARTED) is None


@pytest.mark.parametrize("changed", [
    {"AIRFLOW__CORE__DAGS_FOLDER": "/other"},  # Airflow's options: read into its settings at import
    {"AIRFLOW__OPENLINEAGE__TRANSPORT": "{}"},  # the provider's plugin reads it when loaded
    {"AIRFLOW_HOME": "/other"},
    {"PYTHONPATH": "/other"},  # the server's imports were found on its own path
    {"PATH": "/other/bin"},
    {"GX_ANALYTICS_ENABLED": "true"},
    {"OPENLINEAGE_URL": "http://x"},
    {"_AIRFLOW__AS_LIBRARY": "1"},  # Airflow's own switches, read by its __init__
    {"TMPDIR": "/other"},  # tempfile keeps the folder it found first
    {"NO_COLOR": "1"},  # the logs' colours are chosen when logging is configured
    {"OTEL_SERVICE_NAME": "x"},
])
def test_a_caller_setting_what_is_read_at_import_gets_the_real_airflow(changed: dict[str, str]) -> None:
    reason = _airflow_declines(["airflow", "dags", "test", "d"], {**STARTED, **changed}, STARTED)
    assert reason is not None and next(iter(changed)) in reason


def test_a_variable_removed_counts_as_a_difference() -> None:
    without = {name: value for name, value in STARTED.items() if name != "AIRFLOW__CORE__DAGS_FOLDER"}
    assert "AIRFLOW__CORE__DAGS_FOLDER" in (_airflow_declines(["airflow", "dags", "test", "d"], without, STARTED) or "")


@pytest.mark.parametrize("argv", [["airflow", "api-server"], ["airflow", "db", "migrate"], ["airflow"],
                                  ["airflow", "dags", "list"], ["airflow", "tasks", "test", "d", "t"]])
def test_only_dags_test_and_reserialize_are_served(argv: list[str]) -> None:
    assert _airflow_declines(argv, dict(STARTED), STARTED) == \
        "only `airflow dags test` and `airflow dags reserialize` are served"
    assert _airflow_declines(["airflow", "dags", "reserialize"], dict(STARTED), STARTED) is None


def test_dbt_serves_every_call() -> None:
    assert _dbt_declines(["dbt", "build"], {"DBT_TARGET_PATH": "/x"}, {}) is None

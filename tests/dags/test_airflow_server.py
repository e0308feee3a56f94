"""The suite's warm ``airflow dags test`` (harness/airflow_server.py) is Airflow's own: a call the
server runs answers as the real ``airflow`` does (exit code, error), and a call whose environment
sets what Airflow reads at import (here its DAGs folder) is declined and run by the real
``airflow``. The DAG runs of tests/dags and tests/reliability go through it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.airflow_support import AIRFLOW, airflow_dags_test, airflow_env

MISSING = "Dag 'no_such_dag' could not be found; either it does not exist or it failed to parse."
BAD_CONF = "Configuration '{' is not valid JSON. Error: "


def run(command: list[str], *args: str, **env: str) -> tuple[int, str, str]:
    done = subprocess.run([*command, *args], env=airflow_env(**env), capture_output=True, text=True, timeout=300,
                          check=False)
    return done.returncode, done.stdout, done.stderr


def test_a_served_call_answers_as_airflow_and_one_setting_airflow_options_runs_the_real_airflow(
        tmp_path: Path) -> None:
    if os.environ.get("LINEAGE_TEST_AIRFLOW_SERVER") == "0":
        pytest.skip("the warm airflow is turned off (LINEAGE_TEST_AIRFLOW_SERVER=0)")
    command = airflow_dags_test()
    assert command[0] != AIRFLOW and Path(command[0]).read_text().startswith("#!")  # the server's client
    log = Path(os.environ["LINEAGE_HOME"]) / "airflow-server" / "airflow-server.log"

    # a lineage setting and what a Spark session of the test session adds to its environment
    # (read when a task runs) do not keep the server from running the call
    served = run(command, "no_such_dag", LINEAGE_LOG_ROOT=str(tmp_path / "raw"), PYSPARK_PYTHON=sys.executable,
                 SPARK_AUTH_SOCKET_TIMEOUT="15")
    assert served[0] == 1 and MISSING in served[2] and MISSING not in served[1], served[2][-2000:]
    assert "runs airflow dags test no_such_dag" in log.read_text()
    # Airflow's SystemExit with a message (a DAG run failed, a bad --conf): on stderr, exit 1
    bad_conf = run(command, "lineage_compaction", "--conf", "{")
    assert bad_conf[0] == 1 and BAD_CONF in bad_conf[2] and "Traceback" not in bad_conf[2], bad_conf[2][-2000:]

    # the real airflow (the client runs it for a call the server declines): the same answers
    empty = tmp_path / "dags"
    empty.mkdir()
    declined = run(command, "no_such_dag", AIRFLOW__CORE__DAGS_FOLDER=str(empty))
    assert declined[0] == served[0] and MISSING in declined[2] and MISSING not in declined[1]
    assert "harness/fork_server.py" not in declined[2] and "harness/fork_server.py" in served[2]
    assert "declines airflow dags test no_such_dag: differs from the server's environment in " \
           "AIRFLOW__CORE__DAGS_FOLDER" in log.read_text()
    real_bad_conf = run([AIRFLOW, "dags", "test"], "lineage_compaction", "--conf", "{")
    assert real_bad_conf[0] == 1 and BAD_CONF in real_bad_conf[2] and "Traceback" not in real_bad_conf[2]

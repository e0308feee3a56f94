"""The suite's warm ``airflow dags test`` (harness/airflow_server.py) is Airflow's own: a call the
server runs answers as the real ``airflow`` does (exit code, error), and a call whose environment
sets what Airflow reads at import (here its DAGs folder) is declined and run by the real
``airflow``. The DAG runs of tests/dags and tests/reliability go through it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.airflow_support import AIRFLOW, airflow_dags_test, airflow_env

MISSING = "Dag 'no_such_dag' could not be found; either it does not exist or it failed to parse."


def run(command: list[str], **env: str) -> tuple[int, str]:
    done = subprocess.run([*command, "no_such_dag"], env=airflow_env(**env), capture_output=True, text=True,
                          timeout=300, check=False)
    return done.returncode, done.stdout + done.stderr


def test_a_served_call_answers_as_airflow_and_one_setting_airflow_options_runs_the_real_airflow(
        tmp_path: Path) -> None:
    command = airflow_dags_test()
    assert command[0] != AIRFLOW and Path(command[0]).read_text().startswith("#!")  # the server's client
    log = Path(os.environ["LINEAGE_HOME"]) / "airflow-server" / "airflow-server.log"

    # a lineage setting and what a Spark session of the test session adds to its environment
    # (read when a task runs) do not keep the server from running the call
    served = run(command, LINEAGE_LOG_ROOT=str(tmp_path / "raw"), PYSPARK_PYTHON=sys.executable,
                 SPARK_AUTH_SOCKET_TIMEOUT="15")
    assert served[0] == 1 and MISSING in served[1], served[1][-2000:]
    assert "runs airflow dags test no_such_dag" in log.read_text()

    # the real airflow (the client runs it for a call the server declines): the same answer
    empty = tmp_path / "dags"
    empty.mkdir()
    declined = run(command, AIRFLOW__CORE__DAGS_FOLDER=str(empty))
    assert declined[0] == served[0] and MISSING in declined[1]
    assert "harness/fork_server.py" not in declined[1] and "harness/fork_server.py" in served[1]
    assert "declines airflow dags test no_such_dag: differs from the server's environment in " \
           "AIRFLOW__CORE__DAGS_FOLDER" in log.read_text()

"""Airflow already imported: the suite's ``airflow dags test`` runs through a fork server
(``harness/fork_server.py``).

The server, run by the product's interpreter in the test session's environment, imports Airflow,
its CLI and plugins and Great Expectations and builds the in-process execution API once (what a
real ``airflow dags test`` spent its first 10-13 s on: ``harness/fork_server.py``); each call then
runs Airflow's own entry point (``airflow.__main__.main``) in a child of its own.

It serves ``airflow dags test`` and ``airflow dags reserialize`` only, and only when the caller's
environment differs from the server's in nothing read when Airflow is imported (the lineage
settings, ``AIRFLOW_CONN_*``, ``AIRFLOW_VAR_*`` and PySpark's variables are read when a task
runs): any other call, or one that sets Airflow's options (``AIRFLOW__CORE__DAGS_FOLDER``, the
OpenLineage provider's ``AIRFLOW__OPENLINEAGE__*``...), runs the real ``airflow``, as does every
call while the server is not listening.
"""

from __future__ import annotations

import sys
from pathlib import Path

from harness.api_server import AIRFLOW
from harness.fork_server import ForkServer


class AirflowServer(ForkServer):
    def __init__(self, home: Path) -> None:
        super().__init__(home, "airflow", Path(sys.executable), Path(AIRFLOW), isolated=False)

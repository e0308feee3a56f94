"""Airflow already imported: the suite's ``airflow dags test`` runs through a fork server
(``harness/fork_server.py``).

A real ``airflow dags test`` process spent 10-13 s before its DAG's first task: Airflow's and the
CLI's imports (about 4 s), the plugins' (the lineage plugin builds its app: 2 s), and the
in-process execution API that ``dag.test()`` runs its tasks against (an app of some 400 routes,
about 5 s); the check task then imported Great Expectations (2 s). The server, run by the
product's interpreter in the test session's environment, does all that once; each call then runs
Airflow's own entry point (``airflow.__main__.main``) in a child of its own with the caller's
arguments, streams, directory and environment.

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

from harness.fork_server import ForkServer

AIRFLOW_BIN = Path(sys.executable).parent / "airflow"


class AirflowServer(ForkServer):
    def __init__(self, home: Path) -> None:
        super().__init__(home, "airflow", Path(sys.executable), AIRFLOW_BIN, isolated=False)

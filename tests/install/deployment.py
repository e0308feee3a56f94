"""An installed deployment, as a platform team makes one (docs/install.md, "Install into an existing
Airflow"): the wheel built from the checkout, a fresh venv with it and its ``[airflow,spark]``
extras, an Airflow home of its own, and no checkout anywhere on its paths."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONSTRAINTS = ROOT / "requirements" / "constraints.txt"
DBT = ROOT / ".venv-dbt" / "bin" / "dbt"  # a dbt venv of its own, as docs/install.md says (LINEAGE_DBT_BIN)
# What the checkout's own environment sets and a deployment must not see.
_CHECKOUT_ENV = ("AIRFLOW", "LINEAGE_", "PYTHON", "VIRTUAL_ENV", "DBT_", "GX_", "SPARK_", "PYSPARK_", "OPENLINEAGE")


def run(command: list[str], env: dict[str, str], cwd: Path, timeout: float = 600) -> str:
    """Run ``command``; its output, or a failure that shows the output's end."""
    completed = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                               check=False)
    output = completed.stdout + completed.stderr
    assert completed.returncode == 0, f"{' '.join(command)} exited {completed.returncode}:\n{output[-4000:]}"
    return output


def build_dist(out: Path) -> Path:
    """``python -m build`` of the checkout: the sdist, then the wheel built from that sdist (so the
    sdist is proven complete); returns the wheel."""
    run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)], clean_env(), cwd=out.parent)
    (wheel,) = out.glob("lineage_warehouse-*.whl")
    return wheel


def clean_env(**extra: str) -> dict[str, str]:
    """The process environment less the checkout's settings and venv (PYTHONPATH unset), plus ``extra``."""
    env = {name: value for name, value in os.environ.items() if not name.startswith(_CHECKOUT_ENV)}
    env["PATH"] = os.pathsep.join(part for part in env.get("PATH", "").split(os.pathsep)
                                  if part and not Path(part).resolve().is_relative_to(ROOT))
    env.update(extra)
    return env


def install(wheel: Path, venv: Path) -> Path:
    """A fresh venv holding ``wheel[airflow,spark]``, constrained like the checkout's; its bin folder.
    ``--no-compile``: byte-compiling every module of Airflow, GX and PySpark at install time cost
    more CPU than the rest of the install here; Python compiles what is imported on first use."""
    run([sys.executable, "-m", "venv", str(venv)], clean_env(), cwd=venv.parent)
    run([str(venv / "bin" / "pip"), "install", "-q", "--no-compile", "-c", str(CONSTRAINTS),
         f"{wheel}[airflow,spark]"], clean_env(), cwd=venv.parent, timeout=900)
    return venv / "bin"


def deployment_env(home: Path, bin_dir: Path, warehouse: str, airflow_db: str, port: int) -> dict[str, str]:
    """The settings docs/install.md lists: Airflow home and metadata DB, the warehouse connection, the
    DAG bundle of the installed DAGs beside the platform's own DAGs folder, the log root, dbt."""
    airflow_home = home / "airflow"
    (airflow_home / "dags").mkdir(parents=True)
    (airflow_home / "passwords.json").write_text('{"admin": "admin"}')
    dags_folder = run([str(bin_dir / "lineage"), "dags-folder"], clean_env(), cwd=home).strip()
    bundles = [
        {"name": "dags-folder", "classpath": "airflow.dag_processing.bundles.local.LocalDagBundle", "kwargs": {}},
        {"name": "lineage_warehouse", "classpath": "airflow.dag_processing.bundles.local.LocalDagBundle",
         "kwargs": {"path": dags_folder}},
    ]
    return clean_env(
        PATH=f"{bin_dir}{os.pathsep}{clean_env()['PATH']}",
        AIRFLOW_HOME=str(airflow_home),
        AIRFLOW__CORE__LOAD_EXAMPLES="False",
        AIRFLOW__CORE__PARALLELISM="4",
        AIRFLOW__CORE__EXECUTOR="LocalExecutor",
        AIRFLOW__DATABASE__SQL_ALCHEMY_CONN=airflow_db,
        AIRFLOW__DAG_PROCESSOR__DAG_BUNDLE_CONFIG_LIST=json.dumps(bundles),
        AIRFLOW__API__BASE_URL=f"http://127.0.0.1:{port}",
        AIRFLOW__API_AUTH__JWT_SECRET="install-test-jwt-secret",
        AIRFLOW__API__SECRET_KEY="install-test-secret-key",
        AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS="admin:admin",
        AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE=str(airflow_home / "passwords.json"),
        AIRFLOW_CONN_LINEAGE_WAREHOUSE=warehouse.replace("postgresql+psycopg://", "postgresql://", 1),
        LINEAGE_DATABASE_URL=warehouse,
        LINEAGE_HOME=str(home / "lineage"),
        LINEAGE_LOG_ROOT=str(home / "raw-events"),
        LINEAGE_DBT_BIN=str(DBT),
        DBT_SEND_ANONYMOUS_USAGE_STATS="False",
        GX_ANALYTICS_ENABLED="false",
    )

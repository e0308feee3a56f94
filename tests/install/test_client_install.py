"""The client installs where Spark jobs run: the ``lineage-client`` wheel (client/pyproject.toml)
goes into a fresh virtual environment with no Airflow, GX, dbt or database driver, beside the
PySpark the cluster has (this project's 4.x, linked in as a cluster's would be, and a PySpark 3.5
installed from the registry), and a job there captures its lineage with ``track``. The events it
writes are checked by this project's own validator."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from lineage.model.events import Rejection, parse_line

ROOT = Path(__file__).resolve().parents[2]
SERVER_SIDE = {"apache-airflow", "great-expectations", "dbt-core", "dbt-postgres", "sqlalchemy", "psycopg",
               "psycopg-binary", "pandas"}

JOB = r"""
import json, sys, pathlib
from pyspark.sql import SparkSession, functions as F
from lineage.spark.capture import track

root = pathlib.Path(sys.argv[1])
spark = (SparkSession.builder.master("local[1]").appName("client-check")
         .config("spark.ui.enabled", "false").getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
spark.createDataFrame([(1, "Ann", "Lee")], "id int, first string, last string").write.parquet(str(root / "people"))
with track(spark, namespace="default", application="client", program="check", log_root=str(root / "logs")) as run:
    people = spark.read.parquet(str(root / "people"))
    people.select("id", F.concat_ws(" ", "first", "last").alias("name")).write.parquet(str(root / "names"))
import lineage
print(json.dumps({"writes": run.writes, "warnings": run.warnings, "spark": spark.version, "lineage": lineage.__file__}))
spark.stop()
"""


@pytest.fixture(scope="module")
def client_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("client-dist")
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT / "client"), "--no-deps", "-w", str(out),
                            "-q"], capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr[-2000:]
    return next(out.glob("lineage_client-*.whl"))


def _fresh_venv(where: Path, wheel: Path, *extra: str) -> Path:
    venv.EnvBuilder(with_pip=True).create(where)
    python = where / "bin" / "python"
    install = subprocess.run([str(python), "-m", "pip", "install", "-q", str(wheel), *extra],
                             capture_output=True, text=True, timeout=900)
    assert install.returncode == 0, install.stderr[-2000:]
    return python


def _link_project_pyspark(python: Path, tmp_path: Path) -> None:
    """PySpark as a cluster provides it: already there, not installed by the client."""
    import py4j
    import pyspark

    provided = tmp_path / "cluster-python"
    provided.mkdir()
    for module in (pyspark, py4j):
        (provided / module.__name__).symlink_to(Path(module.__file__).parent)
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    (Path(site) / "cluster_pyspark.pth").write_text(f"{provided}\n")


@pytest.mark.parametrize("pyspark_source", ["the project's PySpark 4, provided", "PySpark 3.5 from the registry"])
def test_the_client_wheel_installs_alone_and_captures_a_job(client_wheel: Path, tmp_path: Path,
                                                            pyspark_source: str) -> None:
    if pyspark_source.startswith("PySpark 3.5"):
        python = _fresh_venv(tmp_path / "venv", client_wheel, "pyspark>=3.5,<3.6")
    else:
        python = _fresh_venv(tmp_path / "venv", client_wheel)
        _link_project_pyspark(python, tmp_path)

    listed = subprocess.run([str(python), "-m", "pip", "list", "--format=json"], capture_output=True, text=True,
                            check=True)
    installed = {item["name"].lower() for item in json.loads(listed.stdout)}
    assert "lineage-client" in installed
    assert not installed & SERVER_SIDE, installed & SERVER_SIDE

    env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTHON", "LINEAGE_", "AIRFLOW"))}
    env["PYSPARK_PYTHON"] = env["PYSPARK_DRIVER_PYTHON"] = str(python)
    job = subprocess.run([str(python), "-c", JOB, str(tmp_path / "work")], capture_output=True, text=True,
                         timeout=600, cwd=tmp_path, env=env)
    assert job.returncode == 0, job.stderr[-3000:]
    summary = json.loads(job.stdout.strip().splitlines()[-1])
    assert summary["writes"] == 1 and summary["warnings"] == []
    assert summary["lineage"].startswith(str(tmp_path / "venv"))  # the wheel's code, not the checkout's
    assert summary["spark"].startswith("3.5" if pyspark_source.startswith("PySpark 3.5") else "4.")

    lines = [line for path in sorted((tmp_path / "work" / "logs").rglob("*.jsonl"))
             for line in path.read_text().splitlines()]
    parsed = [parse_line(line) for line in lines]
    assert not [item for item in parsed if isinstance(item, Rejection)]
    record = next(event["payload"] for event in parsed
                  if isinstance(event, dict) and event["kind"] == "field_operations")
    name = next(op for op in record["operations"] if op["type"] == "transform" and op["outputs"] == ["name"])
    assert name["name"] == "concat_ws" and name["description"] == "concat_ws(' ', first, last)"
    assert {item["field"] for item in name["inputs"]} == {"first", "last"}

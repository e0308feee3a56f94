"""The Spark driver's class archive (``spark_jobs.jvm_archive``) on a real JVM: the test session's
driver maps it (``make test`` makes it first, through ``scripts/bootstrap.sh``), and a file the
JVM cannot use leaves a session starting and working as it would without one."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from spark_jobs.jvm_archive import ENV_DIR, archive_path

ROOT = Path(__file__).resolve().parents[2]


def mapped_bytes(pid: int) -> int:
    """How many bytes of class archives the JVM ``pid`` maps (``jcmd VM.info``)."""
    info = subprocess.run(["jcmd", str(pid), "VM.info"], capture_output=True, text=True, timeout=60, check=True).stdout
    found = re.search(r"CDS archive\(s\) mapped at: \[[^)]*\), size (\d+)", info)
    assert found is not None, info[:2000]
    return int(found.group(1))


def test_the_test_sessions_driver_maps_the_archive(spark) -> None:  # type: ignore[no-untyped-def]
    path = archive_path()
    assert path is not None and path.is_file(), "no class archive: `make venv` makes it (scripts/bootstrap.sh)"
    jvm = spark.sparkContext._jvm
    arguments = list(jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments())
    assert f"-XX:SharedArchiveFile={path}" in arguments
    # the JDK's own archive is about 13 MB; the driver maps ours on top of it
    assert mapped_bytes(jvm.java.lang.ProcessHandle.current().pid()) > path.stat().st_size


@pytest.mark.e2e
def test_a_damaged_archive_leaves_a_session_starting_as_without_one(tmp_path: Path) -> None:
    environ = {**os.environ, ENV_DIR: str(tmp_path)}
    path = archive_path(environ)
    assert path is not None
    path.write_bytes(os.urandom(1 << 20))
    done = subprocess.run(
        [sys.executable, "-c", "from spark_jobs.session import build_session; spark = build_session('damaged'); "
                               "print('rows', spark.range(10).count()); spark.stop()"],
        env=environ, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "rows 10" in done.stdout
    assert not re.search(r"\bcds\b|shared archive", done.stderr, re.IGNORECASE), done.stderr[-3000:]

"""Airflow's long-running components as a deployment runs them (``airflow scheduler``,
``dag-processor``, ``triggerer`` and a healthy ``api-server``), each in a process group of its
own, stopped at the end: for the install test and the freshness benchmark."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from harness.api_server import ApiServer


@dataclass
class Airflow:
    """A running Airflow: its api-server's base URL and each component's log."""

    base: str
    logs: dict[str, Path] = field(default_factory=dict)

    def tails(self) -> str:
        return "\n".join(f"--- {name}\n{path.read_text(errors='replace')[-3000:]}"
                         for name, path in self.logs.items() if path.exists())


@contextmanager
def running_airflow(env: dict[str, str], bin_dir: Path, cwd: Path, port: int,
                    components: Sequence[str] = ("scheduler", "dag-processor")) -> Iterator[Airflow]:
    """``components`` of ``bin_dir``'s ``airflow`` (logs in ``cwd``) and an api-server on ``port``."""
    airflow = Airflow(base=f"http://127.0.0.1:{port}")
    with ExitStack() as stack:
        for component in components:
            log = cwd / f"{component}.log"
            airflow.logs[component] = log
            process = subprocess.Popen([str(bin_dir / "airflow"), component], env=env, cwd=cwd,
                                       stdout=log.open("wb"), stderr=subprocess.STDOUT, start_new_session=True)
            stack.callback(stop_group, process)
        server = ApiServer(env, port=port, airflow=str(bin_dir / "airflow"))
        airflow.logs["api-server"] = Path(server.log.name)
        stack.callback(server.close)
        server.start()
        yield airflow


def stop_group(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the process group (a scheduler's task processes and their Spark JVMs with it),
    SIGKILL if it lingers."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)

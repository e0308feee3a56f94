"""Airflow's long-running components as a deployment runs them (``airflow scheduler``,
``dag-processor``, ``triggerer`` and a healthy ``api-server``), each in a process group of its
own, stopped at the end: for the install test and the freshness benchmark."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from harness.api_server import ApiServer, token


@dataclass
class Airflow:
    """A running Airflow: its api-server's base URL and each component's log."""

    base: str
    logs: dict[str, Path] = field(default_factory=dict)

    def tails(self) -> str:
        return "\n".join(f"--- {name}\n{path.read_text(errors='replace')[-3000:]}"
                         for name, path in self.logs.items() if path.exists())

    def wait_for(self, what: str, check: Callable[[], Any], timeout: float, every: float = 2) -> Any:
        """Call ``check`` until it returns something truthy (its value); after ``timeout`` seconds,
        fail with the components' log tails."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = check()
            if found:
                return found
            time.sleep(every)
        raise AssertionError(f"{what}: not within {timeout:.0f} s\n{self.tails()}")


def login(base: str, username: str = "admin", password: str = "admin") -> httpx.Client:
    """An HTTP client with a bearer token of ``username`` (``POST /auth/token``)."""
    response = token(base, username, password)
    assert response.status_code in (200, 201), response.text
    return httpx.Client(base_url=base, headers={"Authorization": f"Bearer {response.json()['access_token']}"},
                        timeout=30)


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

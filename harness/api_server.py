"""A real ``airflow api-server`` with the plugin on loopback, for the plugin and browser tests
and the pages benchmark: started, awaited until healthy, stopped."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import httpx

from harness.ports import free_port

AIRFLOW = str(Path(sys.executable).parent / "airflow")


class ApiServer:
    """One ``airflow api-server`` process (and its workers, in a process group of their own)."""

    def __init__(self, env: Mapping[str, str], port: int | None = None, airflow: str = AIRFLOW) -> None:
        """``airflow``: the executable (default: this venv's; an installed deployment's in tests/install)."""
        self.env = dict(env)
        self.airflow = airflow
        self.port = port or free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        # The server's log goes to a file: a pipe nobody reads fills up (64 KiB of access lines)
        # and then blocks the server mid-request.
        self.log = tempfile.NamedTemporaryFile(prefix="api-server-", suffix=".log", delete=False)
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 180) -> ApiServer:
        """Start it and wait until it answers its health route."""
        self.process = subprocess.Popen([self.airflow, "api-server", "--port", str(self.port), "--host", "127.0.0.1"],
                                        env=self.env, stdout=self.log, stderr=subprocess.STDOUT,
                                        start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError("api-server exited: " + Path(self.log.name).read_text(errors="replace")[-3000:])
            try:
                if httpx.get(f"{self.base}/api/v2/monitor/health", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(1)
        raise RuntimeError(f"api-server did not become healthy in {timeout:.0f} s")

    def kill(self) -> None:
        """``kill -9`` of the server and its workers, as a crash would."""
        if self.process is not None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=30)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=30)

    def close(self) -> None:
        self.stop()
        self.log.close()
        Path(self.log.name).unlink(missing_ok=True)


@contextmanager
def api_server(env: Mapping[str, str], timeout: float = 180) -> Iterator[str]:
    """Run ``airflow api-server`` with ``env`` (its Airflow home, DB and the warehouse connection);
    yields its base URL."""
    server = ApiServer(env)
    try:
        yield server.start(timeout).base
    finally:
        server.close()


def token(base: str, username: str, password: str) -> httpx.Response:
    """``POST /auth/token`` of a running api-server."""
    return httpx.post(f"{base}/auth/token", json={"username": username, "password": password}, timeout=10)

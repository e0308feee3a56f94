"""A real ``airflow api-server`` with the plugin on loopback, for the plugin and browser tests
and the pages benchmark: started, awaited until healthy, stopped."""

from __future__ import annotations

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


@contextmanager
def api_server(env: Mapping[str, str], timeout: float = 180) -> Iterator[str]:
    """Run ``airflow api-server`` with ``env`` (its Airflow home, DB and the warehouse connection);
    yields its base URL."""
    port = free_port()
    # The server's log goes to a file: a pipe nobody reads fills up (64 KiB of access lines)
    # and then blocks the server mid-request.
    log = tempfile.NamedTemporaryFile(prefix="api-server-", suffix=".log", delete=False)
    process = subprocess.Popen([AIRFLOW, "api-server", "--port", str(port), "--host", "127.0.0.1"], env=dict(env),
                               stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError("api-server exited: " + Path(log.name).read_text(errors="replace")[-3000:])
            try:
                if httpx.get(f"{base}/api/v2/monitor/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(1)
        else:
            raise RuntimeError(f"api-server did not become healthy in {timeout:.0f} s")
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()
        Path(log.name).unlink(missing_ok=True)


def token(base: str, username: str, password: str) -> httpx.Response:
    """``POST /auth/token`` of a running api-server."""
    return httpx.post(f"{base}/auth/token", json={"username": username, "password": password}, timeout=10)

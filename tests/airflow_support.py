"""Helpers for tests that run Airflow for real (CLI subprocesses, api-server)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from harness.airflow_server import AirflowServer
from harness.api_server import AIRFLOW
from harness.api_server import api_server as run_api_server
from harness.api_server import token as token
from lineage.settings import libpq_url
from tests.services import postgres

_migrated = False
_server: AirflowServer | None = None


def _airflow_server() -> AirflowServer | None:
    """The session's warm ``airflow dags test`` and ``reserialize`` (harness/airflow_server.py),
    started with the metadata database; ``LINEAGE_TEST_AIRFLOW_SERVER=0`` turns it off."""
    global _server
    if _server is None and os.environ.get("LINEAGE_TEST_AIRFLOW_SERVER", "1") != "0":
        _server = AirflowServer(Path(os.environ["LINEAGE_HOME"]) / "airflow-server")
        _server.write_client()
        _server.start(airflow_env())
    return _server


def airflow_dags(command: str) -> list[str]:
    """The command that runs ``airflow dags <command>`` (``test`` or ``reserialize``): through the
    session's warm server (waited for: the first call would otherwise pay what the server saves),
    or the real ``airflow``."""
    ensure_airflow_db()
    server = _airflow_server()
    if server is None:
        return [AIRFLOW, "dags", command]
    try:
        server.wait_listening(timeout=120)
    except RuntimeError:
        return [AIRFLOW, "dags", command]  # the server's log says why; the real airflow runs it
    return [str(server.client), "dags", command]


def airflow_dags_test() -> list[str]:
    return airflow_dags("test")


def stop_airflow_server() -> None:
    global _server
    if _server is not None:
        _server.stop()
        _server = None


def airflow_env(**overrides: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(overrides)
    return env


def ensure_airflow_db() -> None:
    """``airflow db migrate`` once per test session."""
    global _migrated
    if _migrated:
        return
    postgres()  # the metadata DB lives in the session's cluster
    subprocess.run([AIRFLOW, "db", "migrate"], env=airflow_env(), check=True, capture_output=True, timeout=300)
    _migrated = True
    _airflow_server()  # after the migration, which writes airflow.cfg (its fernet key) for every process to read


libpq = libpq_url  # the project's own conversion; tests pass these URLs to psycopg and Airflow


_serialized = False


def ensure_dags_serialized() -> None:
    """``airflow dags reserialize`` once per test session: registers the DAGs' assets (the API
    emits ``lineage_metadata_changes`` events to the asset the compaction DAG declares)."""
    global _serialized
    if _serialized:
        return
    ensure_airflow_db()
    subprocess.run(airflow_dags("reserialize"), env=airflow_env(), check=True, capture_output=True, timeout=300)
    _serialized = True


def api_server(warehouse_url: str) -> AbstractContextManager[str]:
    """A real ``airflow api-server`` with the plugin on loopback, reading ``warehouse_url``."""
    ensure_airflow_db()
    return run_api_server(airflow_env(AIRFLOW_CONN_LINEAGE_WAREHOUSE=libpq(warehouse_url)))


# Where the app under a TestClient sends asset events when a test gives no Airflow API: a closed
# port, so the event is not recorded (``assetEvent: false``) at once.
NO_AIRFLOW_API = "http://127.0.0.1:9"


def logged_in_client(warehouse_url: str, monkeypatch: Any, username: str = "admin", role: str = "admin",
                     airflow_api: str | None = None) -> Any:
    """A FastAPI TestClient of the plugin's app reading ``warehouse_url``, with a real Airflow JWT;
    asset events go to the Airflow REST API at ``airflow_api`` (the ``airflow_api`` fixture).
    Use it as a context manager (``with logged_in_client(...) as client``) to run the app's
    lifespan, which opens and closes its connection pool."""
    from airflow.api_fastapi.app import init_auth_manager
    from airflow.api_fastapi.auth.managers.simple.user import SimpleAuthManagerUser
    from fastapi.testclient import TestClient
    from lineage_api.app import create_app

    ensure_airflow_db()  # token checks read Airflow's revoked-token table
    monkeypatch.setenv("AIRFLOW_CONN_LINEAGE_WAREHOUSE", libpq(warehouse_url))
    monkeypatch.setenv("LINEAGE_AIRFLOW_API_URL", airflow_api or NO_AIRFLOW_API)
    jwt = init_auth_manager().generate_jwt(SimpleAuthManagerUser(username=username, role=role))
    client = TestClient(create_app())
    client.headers["Authorization"] = f"Bearer {jwt}"
    return client


def get_ok(client: Any, path: str, **params: Any) -> Any:
    """GET ``path`` through a TestClient of the app, asserting a 200; its JSON body."""
    response = client.get(path, params=params)
    assert response.status_code == 200, response.text
    return response.json()


def jwt(user: str) -> str:
    """A real Airflow JWT of ``user``, as ``/auth/token`` issues it (the session's users are named
    after their roles: ``admin``, ``viewer``; tests/conftest.py)."""
    from airflow.api_fastapi.app import init_auth_manager
    from airflow.api_fastapi.auth.managers.simple.user import SimpleAuthManagerUser

    ensure_airflow_db()  # token checks read Airflow's revoked-token table
    return str(init_auth_manager().generate_jwt(SimpleAuthManagerUser(username=user, role=user)))


@contextmanager
def plugin_app(url: str) -> Iterator[Any]:
    """A TestClient of the plugin's app over the warehouse at ``url`` (the Airflow connection
    pointed at it for the client's life, then restored), its lifespan run; asset events go to a
    closed port. For tests about what the app answers; ``app_path`` turns a real server's path
    (``/lineage/...``) into the app's."""
    from fastapi.testclient import TestClient
    from lineage_api.app import create_app

    ensure_airflow_db()
    names = ("AIRFLOW_CONN_LINEAGE_WAREHOUSE", "LINEAGE_AIRFLOW_API_URL")
    previous = {name: os.environ.get(name) for name in names}
    os.environ.update(AIRFLOW_CONN_LINEAGE_WAREHOUSE=libpq(url), LINEAGE_AIRFLOW_API_URL=NO_AIRFLOW_API)
    try:
        with TestClient(create_app()) as client:
            client.url = url  # type: ignore[attr-defined]
            yield client
    finally:
        for name, value in previous.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def app_path(path: str) -> str:
    """The app's path of a real api-server's path: Airflow mounts the app at ``/lineage``."""
    return path.removeprefix("/lineage")


@contextmanager
def admin_client(url: str) -> Iterator[Any]:
    """A TestClient of the plugin's app as ``admin`` over the warehouse at ``url`` (``plugin_app``);
    ``client.url`` is ``url``."""
    with plugin_app(url) as client:
        client.headers["Authorization"] = f"Bearer {jwt('admin')}"
        yield client


@contextmanager
def serving(app: Any) -> Iterator[str]:
    """``app`` served over real HTTP by uvicorn in a thread (its lifespan run), for as long as the
    block lasts: its base URL."""
    import threading
    import time

    import uvicorn

    from harness.ports import free_port

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the server did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(30)

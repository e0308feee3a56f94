"""The plugin's app: public health, every other route behind Airflow's login."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
from fastapi.testclient import TestClient
from lineage_api.app import create_app

from tests.airflow_support import api_server as run_api_server
from tests.airflow_support import token as get_token


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    from airflow.api_fastapi.app import init_auth_manager

    init_auth_manager()  # what the api-server does at start; the real server is tested below
    with TestClient(create_app()) as client:
        yield client


def test_health_needs_no_login(client: TestClient) -> None:
    response = client.get("/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "warehouse": "ok"}


@pytest.mark.parametrize("path", ["/", "/api/v1/summary", "/api/v1/compactions", "/openapi.json", "/docs"])
def test_routes_answer_401_without_login(client: TestClient, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 401
    assert response.json() == {"message": "Not authenticated", "status": 401}


def test_a_forged_token_is_refused_with_403(client: TestClient) -> None:
    response = client.get("/api/v1/summary", headers={"Authorization": "Bearer not.a.jwt"})
    assert response.status_code == 403
    assert response.json()["message"] == "Invalid JWT token"


@pytest.fixture(scope="module")
def api_server(warehouse_module_db: str) -> Iterator[str]:
    """A real ``airflow api-server`` with the plugin, on loopback."""
    with run_api_server(warehouse_module_db) as base:
        yield base


@pytest.fixture(scope="module")
def warehouse_module_db() -> Iterator[str]:
    from tests.conftest import create_scratch_db, drop_scratch_db

    url = create_scratch_db("wh_api")
    yield url
    drop_scratch_db(url)


def test_real_api_server_requires_login_for_the_plugin(api_server: str) -> None:
    assert httpx.get(f"{api_server}/lineage/health", timeout=10).json() == {"status": "ok", "warehouse": "ok"}
    assert httpx.get(f"{api_server}/lineage/api/v1/summary", timeout=10).status_code == 401
    assert get_token(api_server, "admin", "wrong").status_code == 401

    token = get_token(api_server, "admin", "admin").json()["access_token"]
    response = httpx.get(f"{api_server}/lineage/api/v1/summary", headers={"Authorization": f"Bearer {token}"},
                         timeout=10)
    assert response.status_code == 200
    assert response.json() == {"namespaces": 1, "runs": 0, "dataset_accesses": 0, "quarantined_lines": 0,
                               "compacted_files": 0}
    page = httpx.get(f"{api_server}/lineage/", cookies={"_token": token}, timeout=10)
    assert page.status_code == 200
    assert "Recent compactions" in page.text


def test_real_api_server_lists_the_plugin_and_its_nav_entry(api_server: str) -> None:
    token = get_token(api_server, "admin", "admin").json()["access_token"]
    plugins = httpx.get(f"{api_server}/api/v2/plugins", headers={"Authorization": f"Bearer {token}"}, timeout=10)
    assert plugins.status_code == 200
    ours = [p for p in plugins.json()["plugins"] if p["name"] == "lineage_warehouse"]
    assert len(ours) == 1, json.dumps(plugins.json())[:2000]
    assert ours[0]["fastapi_apps"][0]["url_prefix"] == "/lineage"
    assert ours[0]["external_views"][0]["href"] == "lineage/"


def test_real_api_server_documents_the_api_behind_login_and_emits_asset_events_as_the_caller(
        api_server: str) -> None:
    from tests.airflow_support import ensure_dags_serialized

    ensure_dags_serialized()  # registers the assets the API emits events on
    for path in ("/lineage/openapi.json", "/lineage/docs"):
        assert httpx.get(f"{api_server}{path}", timeout=10).status_code == 401
    token = get_token(api_server, "admin", "admin").json()["access_token"]
    headers = {"Authorization": f"Bearer {token}"}
    document = httpx.get(f"{api_server}/lineage/openapi.json", headers=headers, timeout=10).json()
    assert document["servers"] == [{"url": "/lineage"}]
    tags = f"{api_server}/lineage/v3/namespaces/default/datasets/announced/metadata/tags"
    # The event goes through the api-server's own REST API with the caller's token: the
    # Authorization header of an API client, or the UI's cookie of a page.
    assert httpx.post(tags, json=["by-header"], headers=headers, timeout=30).json()["assetEvent"] is True
    assert httpx.post(tags, json=["by-cookie"], cookies={"_token": token}, timeout=30).json()["assetEvent"] is True

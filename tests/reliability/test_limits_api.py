"""Limits through the API on real PostgreSQL: each limit is a setting, and a request over it is
a 400 (413 for a body) naming the setting; nothing of a refused request is stored."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from lineage import limits
from tests.airflow_support import logged_in_client

DS = "/v3/namespaces/default/datasets/purchases/metadata"


@pytest.fixture
def api(warehouse_db: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    for name, value in {"TAGS_PER_REQUEST": "3", "TAGS_PER_ENTITY": "4", "PROPERTY_VALUE_LENGTH": "10",
                        "REQUEST_MB": "1", "WINDOW_DAYS": "30", "PAGE_SIZE": "50", "LEVELS": "12"}.items():
        monkeypatch.setenv(f"LINEAGE_LIMIT_{name}", value)
    limits.reset()
    with logged_in_client(warehouse_db, monkeypatch) as client:
        yield client
    limits.reset()


def refused(response: object, status: int, setting: str) -> str:
    assert response.status_code == status, response.text  # type: ignore[attr-defined]
    message = str(response.json()["message"])  # type: ignore[attr-defined]
    assert setting in message, message
    return message


def test_tags_per_request_and_per_entity_and_value_length(api: TestClient) -> None:
    refused(api.post(f"{DS}/tags", json=["a", "b", "c", "d"]), 400, "LINEAGE_LIMIT_TAGS_PER_REQUEST")
    assert api.post(f"{DS}/tags", json=["a", "b", "c"]).status_code == 200
    assert api.post(f"{DS}/tags", json=["d"]).status_code == 200
    refused(api.post(f"{DS}/tags", json=["e"]), 400, "LINEAGE_LIMIT_TAGS_PER_ENTITY")
    assert api.get(f"{DS}/tags").json()["USER"] == ["a", "b", "c", "d"]  # the refused tag was not kept
    refused(api.post(f"{DS}/properties", json={"owner": "x" * 11}), 400, "LINEAGE_LIMIT_PROPERTY_VALUE_LENGTH")
    assert api.get(f"{DS}/properties").json()["USER"] == {}


def test_a_body_over_the_request_limit_is_413_with_or_without_a_length(api: TestClient) -> None:
    big = b'["' + b"x" * (1024 * 1024 + 1) + b'"]'
    refused(api.post(f"{DS}/tags", content=big, headers={"content-type": "application/json"}), 413,
            "LINEAGE_LIMIT_REQUEST_MB")

    def chunks() -> Iterator[bytes]:  # sent chunked: no content-length
        yield b'["'
        for _ in range(9):
            yield b"x" * 128 * 1024
        yield b'"]'

    refused(api.post(f"{DS}/tags", content=chunks(), headers={"content-type": "application/json"}), 413,
            "LINEAGE_LIMIT_REQUEST_MB")
    assert api.post(f"{DS}/tags", content=b'["small"]', headers={"content-type": "application/json"}
                    ).status_code == 200


def test_walk_windows_levels_and_page_sizes(api: TestClient) -> None:
    lineage = "/v3/namespaces/default/datasets/purchases/lineage"
    refused(api.get(lineage, params={"start": "now-31d", "end": "now"}), 400, "LINEAGE_LIMIT_WINDOW_DAYS")
    refused(api.get(lineage, params={"start": "now-1d", "levels": 13}), 400, "LINEAGE_LIMIT_LEVELS")
    fields = "/v3/namespaces/default/datasets/purchases/fields/customer/lineage"
    refused(api.get(fields, params={"start": "now-40d"}), 400, "LINEAGE_LIMIT_WINDOW_DAYS")
    refused(api.get("/v3/metadata/search", params={"query": "x", "limit": 51}), 400, "LINEAGE_LIMIT_PAGE_SIZE")
    within = api.get("/v3/metadata/search", params={"query": "x", "limit": 50})
    assert within.status_code == 503 and "marts" in within.json()["message"]  # past the limit: no mart built here

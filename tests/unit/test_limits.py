"""Limits as settings: each has a default, is read from LINEAGE_LIMIT_*, and a refusal names it."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from lineage import limits as limits_module
from lineage.errors import InvalidLineageRequestError, InvalidMetadataError, SettingsError
from lineage.limits import Limits, check_levels, check_window
from lineage.model.metadata_values import check_entity_state, check_properties, check_tags


@pytest.fixture(autouse=True)
def fresh_limits(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    limits_module.reset()
    yield monkeypatch
    limits_module.reset()


def test_the_defaults_and_the_settings_that_change_them() -> None:
    assert Limits.from_env({}) == Limits()
    assert Limits.from_env({"LINEAGE_LIMIT_TAGS_PER_REQUEST": "5", "LINEAGE_LIMIT_LEVELS": ""}).tags_per_request == 5
    with pytest.raises(SettingsError, match="LINEAGE_LIMIT_PAGE_SIZE must be a whole number, got 'many'"):
        Limits.from_env({"LINEAGE_LIMIT_PAGE_SIZE": "many"})
    with pytest.raises(SettingsError, match="LINEAGE_LIMIT_LEVELS must be at least 1, got 0"):
        Limits.from_env({"LINEAGE_LIMIT_LEVELS": "0"})


def test_each_refusal_names_its_setting(fresh_limits: pytest.MonkeyPatch) -> None:
    fresh_limits.setenv("LINEAGE_LIMIT_TAGS_PER_REQUEST", "2")
    fresh_limits.setenv("LINEAGE_LIMIT_PROPERTY_VALUE_LENGTH", "3")
    fresh_limits.setenv("LINEAGE_LIMIT_TAGS_PER_ENTITY", "3")
    assert check_tags(["a", "b"]) == ["a", "b"]
    with pytest.raises(InvalidMetadataError, match=r"tags in one request: 3 is over the limit of 2 "
                                                    r"\(LINEAGE_LIMIT_TAGS_PER_REQUEST\)"):
        check_tags(["a", "b", "c"])
    with pytest.raises(InvalidMetadataError, match=r"over the limit of 3 \(LINEAGE_LIMIT_PROPERTY_VALUE_LENGTH\)"):
        check_properties({"k": "long"})
    with pytest.raises(InvalidMetadataError, match=r"LINEAGE_LIMIT_TAG_LENGTH"):
        check_tags(["x" * 257])
    check_entity_state({"tags": ["a", "b", "c"], "properties": {}})
    with pytest.raises(InvalidMetadataError, match=r"tags of the entity in this scope: 4 is over the limit of 3 "
                                                    r"\(LINEAGE_LIMIT_TAGS_PER_ENTITY\)"):
        check_entity_state({"tags": ["a", "b", "c", "d"], "properties": {}})


def test_levels_and_windows_of_walks(fresh_limits: pytest.MonkeyPatch) -> None:
    end = datetime(2026, 11, 24, tzinfo=UTC)
    check_window(datetime(1970, 1, 1, tzinfo=UTC), end)  # start=0: all of time, within the default
    check_window(end - timedelta(days=36600), end)
    with pytest.raises(InvalidLineageRequestError, match=r"36601 days, over the limit of 36600 "
                                                         r"\(LINEAGE_LIMIT_WINDOW_DAYS\)"):
        check_window(end - timedelta(days=36601), end)
    fresh_limits.setenv("LINEAGE_LIMIT_LEVELS", "3")
    limits_module.reset()  # read once per process: a changed setting is read again here
    assert check_levels(3) == 3
    with pytest.raises(InvalidLineageRequestError, match=r"between 1 and 3 \(LINEAGE_LIMIT_LEVELS\), got 4"):
        check_levels(4)

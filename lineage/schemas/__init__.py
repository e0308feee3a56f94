"""The raw event format's JSON Schema files (``raw_event_v{version}.json``), the single home of
its rules: read here, compiled and applied by ``lineage.model.events``."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

SCHEMA_VERSION = 2  # the latest format (outside identities, openlineage events)


@cache
def schema(version: int = SCHEMA_VERSION) -> dict[str, Any]:
    """The raw event JSON Schema of format ``version`` as a dict."""
    text = resources.files("lineage.schemas").joinpath(f"raw_event_v{version}.json").read_text("utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded

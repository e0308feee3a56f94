"""Where events go, behind one ``Transport`` protocol (the client's writer seam): ``log_file``
(the raw log: hour partitions under ``LINEAGE_LOG_ROOT``, local or remote) and ``openlineage``
(an ``openlineage-python`` transport writing into that log; it imports ``openlineage-python``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol


class Transport(Protocol):
    """What a run's events are delivered through: ``RunContext(..., transport=...)``."""

    root: str  # where the events land, for messages

    def write(self, events: Iterable[Mapping[str, Any]], *, prefix: str = "events",
              now: datetime | None = None) -> str:
        """Write ``events`` as one file, whole or not at all; returns where it landed."""
        ...

    def place(self, source: Path, name: str, *, now: datetime | None = None) -> str:
        """Move the file ``source`` (a spilled batch) in as ``name``; returns where it landed."""
        ...

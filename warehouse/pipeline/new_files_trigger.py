"""An Airflow event trigger that fires when a new raw log file appears (the ``lineage_refresh``
DAG's AssetWatcher; runs in the triggerer).

It lists the current and previous hour partitions of a local log root every ``poke_interval``
seconds (``listing.recent_log_files``: a few ``scandir`` calls, whatever the number of files
already compacted) and yields one event whenever files it has not seen appear. Names, not
modification times, tell what is new: a producer writes a file under a temporary name and
renames it into place, and a rename keeps the time of the write, which can be older than a file
seen before. While a triggered run is still going, Airflow folds further events into one next
run (``max_active_runs=1``), so a burst of files makes at most one more run.

When the triggerer starts (or restarts) the watcher fires once if the partitions hold any file,
so files written while it was down are compacted by that run (a no-op when they already were).
Files written into older hours are the scheduled compaction's work (its lookback).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

from airflow.triggers.base import BaseEventTrigger, TriggerEvent

from spark_jobs.compaction.listing import recent_log_files


class NewLogFilesTrigger(BaseEventTrigger):
    """Fires with ``{"new_files": n, "example": path}`` when ``n`` unseen log files appear under
    ``log_root`` (a local folder)."""

    def __init__(self, log_root: str, poke_interval: float = 1.0) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.log_root = log_root
        self.poke_interval = poke_interval

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return (f"{type(self).__module__}.{type(self).__name__}",
                {"log_root": self.log_root, "poke_interval": self.poke_interval})

    async def run(self) -> AsyncIterator[TriggerEvent]:
        seen: set[str] = set()
        while True:
            current = await asyncio.to_thread(recent_log_files, self.log_root, datetime.now(UTC))
            new = current - seen
            if new:
                self.log.info("%d new raw log files under %s", len(new), self.log_root)
                yield TriggerEvent({"new_files": len(new), "example": min(new)})  # type: ignore[no-untyped-call]
            seen = current  # names of hours that left the window are forgotten
            await asyncio.sleep(self.poke_interval)

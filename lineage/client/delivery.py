"""Getting a run's events into the raw log without losing them: retried writes, a local spill
when the log root stays unavailable, and spilled files delivered later.

A write that fails is retried (``attempts`` times, with a doubling pause). When the root stays
unavailable, the events are written as a file under the spill folder (``LINEAGE_SPILL_DIR``,
on the local disk), in the partition they were meant for; the next successful write of any run
on this host delivers the spilled files into the root, each into its original partition, and
``python -m lineage.client.delivery`` does it on demand. Only when the spill fails too does the write
raise, and the caller keeps the events.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lineage.settings import Settings
from lineage.transport import Transport
from lineage.transport.log_file import LOG_SUFFIX, EventLogWriter, partition_start

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Delivered:
    path: str
    spilled: bool = False


class Delivery:
    """Writes batches of events into ``writer``'s root, or spills them under ``spill_dir``."""

    def __init__(self, writer: Transport, spill_dir: Path, *, attempts: int = 3, pause: float = 0.5,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.writer = writer
        self.spill_dir = spill_dir
        self.attempts = max(1, attempts)
        self.pause = pause
        self._sleep = sleep

    def deliver(self, events: Sequence[Mapping[str, Any]], prefix: str) -> Delivered:
        """Write ``events`` as one file (retried); spill them when the root stays unavailable.
        Raises OSError only when the spill fails too."""
        for attempt in range(1, self.attempts + 1):
            try:
                path = self.writer.write(events, prefix=prefix)
            except Exception as error:  # any failure of the root: retried, then spilled
                log.warning("lineage: writing %d events to %s failed (attempt %d of %d): %s",
                            len(events), self.writer.root, attempt, self.attempts, error)
                if attempt < self.attempts:
                    self._sleep(self.pause * 2 ** (attempt - 1))
                continue
            self.deliver_spilled()
            return Delivered(path)
        spilled = EventLogWriter(str(self.spill_dir)).write(events, prefix=prefix)
        log.warning("lineage: the log root %s is unavailable; %d events spilled to %s, delivered by the next "
                    "successful write on this host or `python -m lineage.client.delivery`", self.writer.root,
                    len(events), spilled)
        return Delivered(spilled, spilled=True)

    def deliver_spilled(self) -> list[str]:
        """Move spilled files into the root, each into its partition; returns where they went.
        A file that cannot be delivered now stays spilled."""
        delivered = []
        for path in sorted(self.spill_dir.glob(f"dt=*/hour=*/*{LOG_SUFFIX}")):
            try:
                delivered.append(self.writer.place(path, path.name, now=partition_start(path.as_posix())))
            except OSError as error:
                log.warning("lineage: spilled file %s not delivered yet: %s", path, error)
                break
        if delivered:
            log.info("lineage: delivered %d spilled files to %s", len(delivered), self.writer.root)
        return delivered


def main(argv: list[str] | None = None) -> int:
    """Deliver this host's spilled files now (``python -m lineage.client.delivery``)."""
    del argv
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    settings = Settings.from_env()
    left = Delivery(EventLogWriter(settings.log_root), settings.spill_dir)
    delivered = left.deliver_spilled()
    remaining = len(list(settings.spill_dir.glob(f"dt=*/hour=*/*{LOG_SUFFIX}")))
    print(f"delivered {len(delivered)} spilled files to {settings.log_root}; {remaining} left in {settings.spill_dir}")
    return 1 if remaining else 0


if __name__ == "__main__":
    sys.exit(main())

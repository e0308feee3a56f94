"""Failpoints: named places in long work where the reliability tests stop a process from outside.

With ``LINEAGE_FAILPOINT=<name>`` in its environment, a process reaching ``failpoint(name)``
writes ``LINEAGE_FAILPOINT_FILE`` (its pid) and waits there, so a test can ``kill -9`` it at
that exact point; without the variable a failpoint costs one dictionary lookup. Nothing else
reads these variables: they are for tests (tests/reliability/), never for deployments.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

FAILPOINT = "LINEAGE_FAILPOINT"
FAILPOINT_FILE = "LINEAGE_FAILPOINT_FILE"


def failpoint(name: str) -> None:
    """Wait here to be killed when the environment names this failpoint."""
    if os.environ.get(FAILPOINT) != name:
        return
    marker = os.environ.get(FAILPOINT_FILE)
    if marker:
        Path(marker).write_text(str(os.getpid()))
    while True:  # until killed
        time.sleep(1)

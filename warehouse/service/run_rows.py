"""Runs as the stores read them for the run answers: a run linked to another (its parent, root
or a child) and a run's access to a dataset. They are the service's, not the stores', because
the service hides them (``warehouse.service.hidden``); ``warehouse.db.run_store`` and
``warehouse.db.lineage_store`` build them, the routes render them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from warehouse.service.run_hierarchy import RunRef


@dataclass(frozen=True, slots=True)
class LinkedRun:
    """A run named as another's parent or root (or naming another as its parent: a child), by
    its identity; ``recorded``: whether the warehouse holds the run itself (a parent may send
    no events of its own)."""

    run: RunRef
    recorded: bool


@dataclass(frozen=True, slots=True)
class ChildRun(LinkedRun):
    """A run naming another as its parent, with its status and start (None: not recorded)."""

    status: str | None
    started_at: datetime | None


@dataclass(frozen=True, slots=True)
class DatasetAccess:
    """What a run did to a dataset or stream (``access``: read, write...), through which
    ``component`` (None: the program itself), first at ``accessed_at``."""

    namespace: str
    type: str  # dataset | stream
    name: str
    access: str
    component: str | None
    accessed_at: datetime

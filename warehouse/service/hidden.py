"""What a caller sees in place of what it may not read, for the answers the routes assemble:
a run, a run's access, a dataset reference keep their place in the answer, not their names or
contents. (The graph's and field lineage's stand-ins are built where those answers are:
``lineage_graph.hide_unreadable``, ``field_hiding``.)"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from lineage.ids import ProgramRef
from warehouse.service.authorization import HIDDEN
from warehouse.service.run_hierarchy import RunRef
from warehouse.service.run_rows import ChildRun, DatasetAccess, LinkedRun

HIDDEN_RUN = RunRef(ProgramRef("", "", HIDDEN, ""), "")
HIDDEN_LINKED_RUN = LinkedRun(HIDDEN_RUN, recorded=False)
"""A linked run (parent, root) of a program the caller cannot read."""
HIDDEN_CHILD_RUN = ChildRun(HIDDEN_RUN, recorded=False, status=None, started_at=None)
"""A child run of a program the caller cannot read."""


def hidden_access(access: DatasetAccess) -> DatasetAccess:
    """A run's access to a dataset the caller cannot read: what and when, not where or through what."""
    return replace(access, namespace="", type=HIDDEN, name="", component=None)


def hidden_dataset_ref(ref: dict[str, Any]) -> dict[str, Any]:
    """A ``{"namespace", "dataset", ...}`` reference to a dataset the caller cannot read."""
    return {**ref, "namespace": "", "dataset": HIDDEN}

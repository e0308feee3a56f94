"""What a caller sees in place of what it may not read, for the answers the routes assemble:
a run, a run's access, a dataset reference keep their place in the answer, not their names or
contents. (The graph's and field lineage's stand-ins are built where those answers are:
``lineage_graph.hide_unreadable``, ``field_hiding``.)"""

from __future__ import annotations

from typing import Any

from warehouse.service.authorization import HIDDEN

_HIDDEN_RUN = {"namespace": "", "application": "", "type": HIDDEN, "program": "", "run_id": "", "recorded": False,
               "links": {}}


def hidden_run(linked: dict[str, Any]) -> dict[str, Any]:
    """A linked run (parent, root, child) of a program the caller cannot read."""
    return {**linked, **_HIDDEN_RUN, **({"status": None, "started_at": None} if "status" in linked else {})}


def hide_access(access: dict[str, Any]) -> None:
    """A run's access to a dataset the caller cannot read, in place."""
    access.update(namespace="", type=HIDDEN, name="", component=None, links={})


def hidden_dataset_ref(ref: dict[str, Any]) -> dict[str, Any]:
    """A ``{"namespace", "dataset", ...}`` reference to a dataset the caller cannot read."""
    return {**ref, "namespace": "", "dataset": HIDDEN}

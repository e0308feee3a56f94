"""Lineage warehouse's client distribution: what a pipeline imports to record lineage.

Packages by role: ``model`` (the vocabulary: events, field operations and paths, metadata,
schemas), ``naming`` (OpenLineage identities, the namespace map), ``client`` (a run's context
and delivery), ``transport`` (the raw log file, the OpenLineage in-process transport),
``openlineage`` (what an OpenLineage event becomes), ``spark`` (automatic capture from PySpark's
plans); ``ids``, ``errors``, ``settings`` and ``limits`` beside them. No psycopg, FastAPI,
Airflow, GX or dbt (import-linter checks it: ``.importlinter``).

The public names below are imported on first use, so ``import lineage.errors`` loads no client.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "RunContext": "lineage.client.run_context",
    "FieldInput": "lineage.model.field_operations",
    "FieldOperation": "lineage.model.field_operations",
    "Source": "lineage.model.field_operations",
}
__all__ = ["FieldInput", "FieldOperation", "RunContext", "Source", "__version__"]

if TYPE_CHECKING:
    from lineage.client.run_context import RunContext
    from lineage.model.field_operations import FieldInput, FieldOperation, Source


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'lineage' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value

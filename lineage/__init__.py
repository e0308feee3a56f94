"""Lineage warehouse: the pure core and the client library pipelines import."""

from __future__ import annotations

__version__ = "0.1.0"

from lineage.client import RunContext
from lineage.field_operations import FieldInput, FieldOperation, Source

__all__ = ["FieldInput", "FieldOperation", "RunContext", "Source", "__version__"]

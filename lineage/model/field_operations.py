"""Field operations a run records for a destination dataset (the *Field Level Lineage* design).

This module holds the values a pipeline builds; turning them into per-field paths belongs to
the field-lineage stage.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Source:
    """A dataset an operation reads from (a Source in the *Field Level Lineage* design)."""

    name: str
    namespace: str | None = None
    type: str = "dataset"

    def to_dict(self) -> dict[str, Any]:
        rendered: dict[str, Any] = {"type": self.type, "name": self.name}
        if self.namespace:
            rendered["namespace"] = self.namespace
        return rendered


@dataclass(frozen=True)
class FieldInput:
    """A field an operation reads; ``origin`` names the operation id that output it."""

    field: str
    origin: str | None = None

    def to_dict(self) -> dict[str, Any]:
        rendered: dict[str, Any] = {"field": self.field}
        if self.origin:
            rendered["origin"] = self.origin
        return rendered


@dataclass(frozen=True)
class FieldOperation:
    """One operation: a name, inputs (sources or fields), output field names."""

    name: str
    inputs: Sequence[Source | FieldInput | str] = ()
    outputs: Sequence[str] = ()
    description: str = ""
    id: str | None = None
    type: str | None = None

    def to_dict(self) -> dict[str, Any]:
        rendered: dict[str, Any] = {
            "name": self.name,
            "inputs": [_input_dict(item) for item in self.inputs],
            "outputs": list(self.outputs),
        }
        if self.description:
            rendered["description"] = self.description
        if self.id:
            rendered["id"] = self.id
        if self.type:
            rendered["type"] = self.type
        return rendered


def _input_dict(item: Source | FieldInput | str) -> dict[str, Any]:
    if isinstance(item, str):
        return {"field": item}
    if isinstance(item, Source):
        return {"source": item.to_dict()}
    return item.to_dict()

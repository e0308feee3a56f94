"""What a caller sees of field lineage that touches datasets they cannot read (the *Metadata Custom
Entities and Authorization* design's READ, applied as the lineage graph applies it): that
something hidden is there, and nothing of it.

In a stored path (``FieldPath.to_dict()``), a **read of an unreadable dataset** (any of its
sources unreadable) becomes an anonymous operation: id ``hidden:1``, ``hidden:2``, ... in the
path's order, name ``hidden``, no description, one hidden source, no inputs, and one output
field named ``hidden`` for all the fields it read. Every input taken from it then reads
``{"field": "hidden", "origin": "hidden:n"}`` (duplicates merged), and the path's source fields
of unreadable datasets become one hidden source field. The drawings (``field_views``) are made
from the hidden path, so their nodes and edges hold no hidden name either, and the path carries
the fingerprint of what is shown (the stored one would confirm a guess at the hidden names). Operations of the
readable pipeline keep their names: they are the destination's, which the caller may read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from lineage.authorization import HIDDEN
from lineage.field_paths import path_fingerprint

HIDDEN_SOURCE = {"namespace": "", "type": HIDDEN, "name": ""}
HIDDEN_SOURCE_FIELD = {**HIDDEN_SOURCE, "field": ""}

# (namespace, type, name) of a dataset or stream -> whether the caller may read it
Readable = Callable[[str, str, str], bool]


def _distinct(items: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    kept: list[dict[str, Any]] = []
    for item in items:
        if item not in kept:
            kept.append(item)
    return kept


def _shown(source: dict[str, Any], readable: Readable) -> bool:
    return source["type"] not in ("dataset", "stream") or readable(source["namespace"], source["type"],
                                                                    source["name"])


def hide_path(path: dict[str, Any], readable: Readable) -> dict[str, Any]:
    """``path`` as a caller who can read only what ``readable`` says sees it."""
    hidden_reads = [operation["id"] for operation in path["operations"]
                    if not all(_shown(source, readable) for source in operation["sources"])]
    if not hidden_reads and all(_shown(source, readable) for source in path["sources"]):
        return path
    alias = {op_id: f"{HIDDEN}:{number}" for number, op_id in enumerate(hidden_reads, start=1)}

    def shown_input(item: dict[str, Any]) -> dict[str, Any]:
        return {**item, "field": HIDDEN, "origin": alias[item["origin"]]} if item["origin"] in alias else item

    operations = [
        {**operation, "id": alias[operation["id"]], "name": HIDDEN, "sources": [HIDDEN_SOURCE], "inputs": [],
         "outputs": [HIDDEN], **({"description": ""} if "description" in operation else {})}
        if operation["id"] in alias else
        {**operation, "inputs": _distinct(shown_input(item) for item in operation["inputs"])}
        for operation in path["operations"]]
    sources = _distinct(source if _shown(source, readable) else HIDDEN_SOURCE_FIELD for source in path["sources"])
    origin = alias.get(path["origin"], path["origin"])
    return {**path, "origin": origin, "operations": operations, "sources": sources,
            "fingerprint": path_fingerprint(path["field"], origin, operations)}


def hide_unreadable_sources(value: Any, readable: Readable) -> Any:
    """``value`` (a field lineage answer or part of it) with every dataset or stream reference
    (``{"namespace", "type", "name", ...}``) the caller cannot read replaced by a ``hidden`` one."""
    if isinstance(value, list):
        return [hide_unreadable_sources(item, readable) for item in value]
    if not isinstance(value, dict):
        return value
    if {"namespace", "type", "name"} <= value.keys() and value["type"] in ("dataset", "stream") and not readable(
            value["namespace"], value["type"], value["name"]):
        return {**dict.fromkeys(value, ""), "type": HIDDEN}
    return {key: hide_unreadable_sources(item, readable) for key, item in value.items()}

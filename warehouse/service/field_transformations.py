"""How an input field reaches an output field (OpenLineage's column lineage vocabulary, kept on
each operation input as ``transformation``), and the "direct only" reading of field paths.

A transformation is DIRECT (IDENTITY, TRANSFORMATION, AGGREGATION: the input's value flows into
the output) or INDIRECT (JOIN, GROUP_BY, FILTER, SORT, WINDOW, CONDITIONAL: the input decides
which rows or how, without its value flowing), with a description and a masking flag.

**The rule: an edge is direct when its transformation is DIRECT or none was recorded.** Inputs
without one are the operations of our own client and of the *Field Level Lineage* design, and
inputs of OpenLineage facets without types (the old facet shape lists only the fields a value
is computed from): each says the output's value is computed from the input, which is what
DIRECT means, so asking for direct lineage keeps them. Any other type (INDIRECT, or a type this
code does not know yet) is not direct: "direct only" keeps only what is known to carry values.

A field's path (``FieldPath.to_dict()``) is a graph of operations from source fields to the
field; "direct only" narrows it to the chains whose every edge is direct (``direct_path``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from typing import Any, Literal

import orjson

from lineage.model.field_paths import path_fingerprint, path_origins
from warehouse.service.field_lineage_rows import PathDocument, PathRow

TransformationFilter = Literal["all", "direct"]
"""Which paths a field lineage answer keeps: all of them, or only their direct chains."""


def is_direct(transformation: Mapping[str, Any] | None) -> bool:
    """Whether an edge with ``transformation`` (None: none recorded) is direct (see the rule above)."""
    return transformation is None or transformation.get("type") == "DIRECT"


def transformation_key(transformation: Mapping[str, Any]) -> str:
    """A canonical text of ``transformation``: equal transformations, equal keys."""
    return orjson.dumps(transformation, option=orjson.OPT_SORT_KEYS).decode()


def sort_key(transformation: Mapping[str, Any] | None) -> tuple[str, str, str, bool, str]:
    """Transformations in order of type, subtype, description, masking (none recorded first)."""
    if transformation is None:
        return ("", "", "", False, "")
    return (str(transformation.get("type")), str(transformation.get("subtype") or ""),
            str(transformation.get("description") or ""), bool(transformation.get("masking")),
            transformation_key(transformation))


def distinct_transformations(transformations: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The distinct ``transformations``, in ``sort_key`` order."""
    distinct = {transformation_key(item): dict(item) for item in transformations}
    return sorted(distinct.values(), key=sort_key)


def direct_path(path: PathDocument) -> PathDocument | None:
    """The stored ``path`` narrowed to its chains of direct edges: the operations on them (each
    with only its direct inputs), the sources they start from, and the fingerprint of what is
    left. The path itself when every edge is direct; None when it had sources and no chain of
    direct edges reaches any of them."""
    if all(is_direct(item.get("transformation")) for op in path["operations"] for item in op["inputs"]):
        return path
    operations = {operation["id"]: operation for operation in path["operations"]}
    needed: set[str] = set()
    reached: set[tuple[str, str, str, str]] = set()  # (namespace, type, name, field) of sources
    stack = [(path["field"], origin) for origin in path_origins(path)]
    while stack:
        field, origin = stack.pop()
        operation = operations[origin]
        if operation["type"] == "read":
            reached.update((s["namespace"], s["type"], s["name"], field) for s in operation["sources"])
        if origin in needed:
            continue
        needed.add(origin)
        stack.extend((item["field"], item["origin"]) for item in operation["inputs"]
                     if is_direct(item.get("transformation")))
    sources = [s for s in path["sources"] if (s["namespace"], s["type"], s["name"], s["field"]) in reached]
    if path["sources"] and not sources:
        return None
    kept = [{**operation, "inputs": [item for item in operation["inputs"] if is_direct(item.get("transformation"))]}
            for operation in path["operations"] if operation["id"] in needed]
    return {**path, "operations": kept, "sources": sources,
            "fingerprint": path_fingerprint(path["field"], path_origins(path), kept)}


def kept_rows(rows: Iterable[PathRow], transformations: TransformationFilter) -> Iterator[PathRow]:
    """The path rows (``FieldLineageQueries.paths``) a ``transformations`` filter keeps: all, or
    each narrowed to its direct chains (``direct_path``) under the fingerprint of what is left,
    so rows that narrow to the same path merge."""
    for row in rows:
        if transformations == "all":
            yield row
            continue
        narrowed = direct_path(row.path)
        if narrowed is row.path:
            yield row
        elif narrowed is not None:
            yield replace(row, path=narrowed, path_fingerprint=narrowed["fingerprint"])

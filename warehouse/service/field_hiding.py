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

from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

from lineage.ids import DataRef
from lineage.model.field_paths import path_fingerprint
from warehouse.service.authorization import HIDDEN
from warehouse.service.field_lineage_rows import FlowRow, PathDocument

HIDDEN_SOURCE = {"namespace": "", "type": HIDDEN, "name": ""}
HIDDEN_PROGRAM = {"namespace": "", "application": "", "type": HIDDEN, "program": "", "entity": "PROGRAM"}
HIDDEN_SOURCE_FIELD = {**HIDDEN_SOURCE, "field": ""}

# (namespace, type, name) of a dataset or stream -> whether the caller may read it
Readable = Callable[[str, str, str], bool]
# a program (namespace, application, type, program) -> whether the caller may read it
ReadableProgram = Callable[[Mapping[str, Any]], bool]


def _distinct(items: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    kept: list[dict[str, Any]] = []
    for item in items:
        if item not in kept:
            kept.append(item)
    return kept


def _shown_ref(namespace: str, kind: str, name: str, readable: Readable) -> bool:
    """Whether a source or destination is shown: a dataset or stream the caller may read, or anything else."""
    return kind not in ("dataset", "stream") or readable(namespace, kind, name)


def _shown(source: Mapping[str, Any], readable: Readable) -> bool:
    return _shown_ref(source["namespace"], source["type"], source["name"], readable)


def hide_path(path: PathDocument, readable: Readable) -> PathDocument:
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
    origin = alias[path["origin"]] if path["origin"] in alias else path["origin"]
    return {**path, "origin": origin, "operations": operations, "sources": sources,
            "fingerprint": path_fingerprint(path["field"], origin, operations)}


def hide_flow(row: FlowRow, readable: Readable) -> FlowRow:
    """A stored flow row (where a source field went, ``field_lineage_store.flows``) as the caller
    sees it. Into an unreadable destination: nothing of the destination's record (no operations,
    fields, drops, runs or programs), only that a hidden dataset is there. Otherwise reads of
    unreadable datasets inside the flow are hidden as in a path."""
    destination = row.destination
    if not _shown_ref(destination.namespace, destination.type, destination.name, readable):
        return replace(row, destination=DataRef("", HIDDEN, ""), flow_fingerprint=HIDDEN, runs=(), programs=(),
                       descriptions={}, flow={"operations": [], "destinationFields": [], "drops": []})
    flow = row.flow
    hidden_reads = [operation["id"] for operation in flow["operations"]
                    if not all(_shown(source, readable) for source in operation.get("sources", []))]
    if not hidden_reads:
        return row
    alias = {op_id: f"{HIDDEN}:{number}" for number, op_id in enumerate(hidden_reads, start=1)}
    operations = [
        {**operation, "id": alias[operation["id"]], "name": HIDDEN, "sources": [HIDDEN_SOURCE], "inputs": [],
         "outputs": [HIDDEN]}
        if operation["id"] in alias else
        {**operation, "inputs": _distinct({**item, "field": HIDDEN, "origin": alias[item["origin"]]}
                                          if item.get("origin") in alias else item
                                          for item in operation.get("inputs", []))}
        for operation in flow["operations"]]
    return replace(row, flow={**flow, "operations": operations})


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


def hide_unreadable_programs(value: Any, readable: ReadableProgram) -> Any:
    """``value`` with each program info (``{"program": {... "entity": "PROGRAM"}, ...}``, as paths,
    flows and operation sets list the programs that ran them) the caller cannot read made
    anonymous; the hidden ones of one list merge into one (the latest). What holds nothing to hide
    is returned as it is, not copied (a wide record's impact is megabytes of operations, drawings
    and run ids: copied whole, it cost a caller who is no instance admin 250-380 ms), and a list
    the answer shares between paths (their runs and programs) is looked at once."""
    return _hide_programs(value, readable, {})


# What an answer builds from operation records and run ids, never from program infos: a record's
# operations (id, type, name, description, inputs, outputs, sources: the shape the raw format and
# field_paths.normalize fix), their drawings, run ids, source fields. Not walked: they are most of
# a wide answer.
_NO_PROGRAMS = frozenset({"operations", "graph", "runs", "sources", "destinationFields", "drops"})


def _hide_programs(value: Any, readable: ReadableProgram, seen: dict[int, tuple[Any, Any]]) -> Any:
    if isinstance(value, list):
        known = seen.get(id(value))
        if known is not None:
            return known[1]
        shown: list[Any] = value
        if any(isinstance(item, (dict, list)) for item in value):
            items = [_hide_programs(item, readable, seen) for item in value]
            hidden = [item for item in items if isinstance(item, dict) and item.get("program") == HIDDEN_PROGRAM]
            if hidden:
                items = [item for item in items if item not in hidden or item is hidden[0]]
            if len(items) != len(value) or any(new is not old for new, old in zip(items, value, strict=True)):
                shown = items
        seen[id(value)] = (value, shown)  # the list kept alive: its id stays its own
        return shown
    if not isinstance(value, dict):
        return value
    program = value.get("program")
    if isinstance(program, dict) and program.get("entity") == "PROGRAM" and program != HIDDEN_PROGRAM:
        return value if readable(program) else {**value, "program": HIDDEN_PROGRAM}
    changed: dict[str, Any] | None = None
    for key, item in value.items():
        if key not in _NO_PROGRAMS and isinstance(item, (dict, list)):
            new = _hide_programs(item, readable, seen)
            if new is not item:
                changed = changed if changed is not None else dict(value)
                changed[key] = new
    return changed if changed is not None else value


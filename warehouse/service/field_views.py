"""The two drawings of a field's path in the *Field Level Lineage* design, from a stored path
(``FieldPath.to_dict()``).

- simple: nodes are the source fields the path starts from and the field itself; one edge per
  source field carrying the set of operations between them (reads excluded, as the design draws
  ``body --parse, concat, create--> id``).
- detailed: every intermediate field is a node (``operation.<origin>.<field>``, the operation
  that output it and the field's name); each edge is one operation turning an input field into
  an output field.

Node ids are ``lineage.ids`` ids, never labels: the path's own field is ``field.<dataset>.<field>``.

Edges show how the input reaches the output (``warehouse.service.field_transformations``): a detailed edge
its input's ``transformation``, a simple edge the distinct ``transformations`` of the edges
between its source field and the field. Where none was recorded the key is absent.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from lineage import ids
from lineage.model.field_paths import path_origins
from warehouse.service.field_lineage_rows import PathDocument
from warehouse.service.field_transformations import distinct_transformations, sort_key, transformation_key


def field_node_id(dataset: str, field: str) -> str:
    """The drawing's node of the path's own field: ``field.<dataset>.<field>`` (``lineage.ids``)."""
    return ids.render(("field", dataset, field))


def operation_node_id(origin: str, field: str) -> str:
    """The node of the field ``field`` an operation ``origin`` output (a source field when the
    operation is a read): ``operation.<origin>.<field>``. The first parts differ and are escaped,
    so no operation's field shares an id with the path's own field, whatever the names hold."""
    return ids.render(("operation", origin, field))


def detailed_view(path: PathDocument, dataset: str) -> dict[str, Any]:
    """Nodes and edges of the detailed view; the field is the node ``dataset:field`` (every write
    of it leads there). The warnings a record was accepted with, on the path's operations, are
    shown as ``warnings``."""
    operations = {operation["id"]: operation for operation in path["operations"]}
    targets = [(path["field"], origin) for origin in path_origins(path)]
    nodes: dict[str, dict[str, Any]] = {}
    edges: dict[tuple[Any, ...], dict[str, Any]] = {}  # one per input (and transformation)
    stack, seen = list(targets), set()

    def node(ref: tuple[str, str]) -> str:
        if ref in targets:
            key = field_node_id(dataset, ref[0])
            nodes.setdefault(key, {"id": key, "field": ref[0], "dataset": dataset, "kind": "field"})
            return key
        operation = operations[ref[1]]
        key = operation_node_id(ref[1], ref[0])
        entry = {"id": key, "field": ref[0], "origin": ref[1], "kind": "intermediate"}
        if operation["type"] == "read":
            entry.update(kind="source", sources=operation["sources"])
        nodes.setdefault(key, entry)
        return key

    while stack:
        ref = stack.pop()
        if ref in seen:
            continue
        seen.add(ref)
        head = node(ref)
        operation = operations[ref[1]]
        for item in operation["inputs"]:
            parent = (item["field"], item["origin"])
            edge = {"from": node(parent), "to": head, "operation": operation["id"], "name": operation["name"]}
            transformation = item.get("transformation")
            if transformation is not None:
                edge["transformation"] = transformation
            edges[(edge["from"], head, operation["id"], operation["name"], sort_key(transformation))] = edge
            stack.append(parent)
    drawing: dict[str, Any] = {"nodes": sorted(nodes.values(), key=lambda n: n["id"]),
                               "edges": [edges[key] for key in sorted(edges)]}
    if path.get("warnings"):
        drawing["warnings"] = path["warnings"]
    return drawing


def simple_view(path: PathDocument, dataset: str) -> dict[str, Any]:
    """Nodes and edges of the simple view: source fields -> the field, each edge with its operations."""
    operations = {operation["id"]: operation for operation in path["operations"]}
    transformations: dict[str, dict[str, Any]] = {}  # transformation_key -> transformation

    @cache
    def routes(field: str, origin: str) -> dict[tuple[str, str], tuple[frozenset[str], frozenset[str]]]:
        """Source field (origin, field) -> the non-read operations between it and (field, origin),
        and the keys of the transformations of the edges between them."""
        operation = operations[origin]
        if operation["type"] == "read":
            return {(origin, field): (frozenset(), frozenset())}
        found: dict[tuple[str, str], tuple[frozenset[str], frozenset[str]]] = {}
        for item in operation["inputs"]:
            kinds: frozenset[str] = frozenset()
            if item.get("transformation") is not None:
                key = transformation_key(item["transformation"])
                transformations[key] = item["transformation"]
                kinds = frozenset({key})
            for source, (ops, carried) in routes(item["field"], item["origin"]).items():
                known_ops, known_kinds = found.get(source, (frozenset(), frozenset()))
                found[source] = (known_ops | ops | {origin}, known_kinds | carried | kinds)
        return found

    rank = {operation["id"]: index for index, operation in enumerate(path["operations"])}
    target = field_node_id(dataset, path["field"])
    nodes = [{"id": target, "field": path["field"], "dataset": dataset, "kind": "field"}]
    edges = []
    found: dict[tuple[str, str], tuple[frozenset[str], frozenset[str]]] = {}
    for write in path_origins(path):
        for source, (ops, kinds) in routes(path["field"], write).items():
            known_ops, known_kinds = found.get(source, (frozenset(), frozenset()))
            found[source] = (known_ops | ops, known_kinds | kinds)
    for (origin, field), (ops, kinds) in sorted(found.items()):
        key = operation_node_id(origin, field)
        nodes.append({"id": key, "field": field, "origin": origin, "kind": "source",
                      "sources": operations[origin]["sources"]})
        ordered = sorted(ops, key=rank.__getitem__)
        edge: dict[str, Any] = {"from": key, "to": target, "operations": ordered,
                                "names": [operations[op_id]["name"] for op_id in ordered]}
        if kinds:
            edge["transformations"] = distinct_transformations(transformations[kind] for kind in kinds)
        edges.append(edge)
    return {"nodes": sorted(nodes, key=lambda n: n["id"]), "edges": edges}

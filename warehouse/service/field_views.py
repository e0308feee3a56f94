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

from functools import cache, lru_cache
from typing import Any

from lineage import ids
from lineage.model.field_paths import path_origins
from warehouse.service.field_lineage_rows import PathDocument
from warehouse.service.field_transformations import distinct_transformations, sort_key, transformation_key


@lru_cache(maxsize=4096)
def field_node_id(dataset: str, field: str, namespace: str | None = None) -> str:
    """The drawing's node of the path's own field: ``field.<dataset>.<field>`` (``lineage.ids``);
    in an answer's one drawing (``graph=answer``, whose fields may be of several namespaces)
    ``field.<namespace>.<dataset>.<field>``."""
    return ids.render(("field", dataset, field) if namespace is None else ("field", namespace, dataset, field))


@lru_cache(maxsize=65536)  # the paths of one answer share most of their operations' fields
def operation_node_id(origin: str, field: str, scope: str | None = None) -> str:
    """The node of the field ``field`` an operation ``origin`` output (a source field when the
    operation is a read): ``operation.<origin>.<field>``; in an answer's one drawing
    ``operation.<scope>.<origin>.<field>``, the scope naming the operation's set in the answer,
    since operation ids are a record's own (every OpenLineage record has a ``read:1``). The first
    parts differ and are escaped, so no operation's field shares an id with a field's node,
    whatever the names hold."""
    return ids.render(("operation", origin, field) if scope is None else ("operation", scope, origin, field))


def _reads_again(operations: list[dict[str, Any]], targets: set[tuple[str, str]], memo: DetailedMemo) -> bool:
    """Whether an operation of a path takes one of its ``targets`` (the writes of its field) as an
    input; each operation's inputs read once per answer (the paths of a set share them)."""
    for operation in operations:
        refs = memo.inputs.get(id(operation))
        if refs is None:
            refs = memo.inputs[id(operation)] = (frozenset((item["field"], item["origin"])
                                                           for item in operation["inputs"]), operation)
        if not targets.isdisjoint(refs[0]):
            return True
    return False


class DetailedMemo:
    """What detailed drawings of one answer share: the paths of an operation set hold the same
    operation objects (``field_lineage_store`` rebuilds them from the set's), so an intermediate
    field's node and the edges into it are built once for all the paths through it (a wide
    record's impact draws dozens of paths of hundreds of operations each). Keyed by the
    operation object itself, which the memo keeps alive; live for one answer only."""

    def __init__(self) -> None:
        self.drawn: dict[tuple[int, str], tuple[dict[str, Any], list[tuple[tuple[str, str], tuple[Any, ...],
                                                                                dict[str, Any]]], Any]] = {}
        self.inputs: dict[int, tuple[frozenset[tuple[str, str]], Any]] = {}  # an operation's (field, origin) inputs


def detailed_view(path: PathDocument, dataset: str, memo: DetailedMemo | None = None) -> dict[str, Any]:
    """Nodes and edges of the detailed view; the field is the node ``dataset:field`` (every write
    of it leads there). The warnings a record was accepted with, on the path's operations, are
    shown as ``warnings``. ``memo``: what the answer's other drawings built (``DetailedMemo``)."""
    nodes: dict[str, dict[str, Any]] = {}
    edges: dict[tuple[Any, ...], dict[str, Any]] = {}  # one per input (and transformation)
    _draw_detailed(path, dataset, memo or DetailedMemo(), nodes, edges)
    drawing: dict[str, Any] = {"nodes": [nodes[key] for key in sorted(nodes)],
                               "edges": [edges[key] for key in sorted(edges)]}
    if path.get("warnings"):
        drawing["warnings"] = path["warnings"]
    return drawing


def _draw_detailed(path: PathDocument, dataset: str, memo: DetailedMemo, nodes: dict[str, dict[str, Any]],
                   edges: dict[tuple[Any, ...], dict[str, Any]], walked: set[tuple[int, str]] | None = None,
                   scope: str | None = None, namespace: str | None = None) -> None:
    """Add the detailed view of ``path`` to ``nodes`` and ``edges``. ``walked`` (an answer's one
    drawing): the intermediate fields (operation object, field) drawn already with everything
    before them, where the walk stops; it gains those this path draws, unless the path reads its
    own field again (a write's output read by a later operation: what lies before such a node is
    this path's own drawing). ``scope`` and ``namespace``: how an answer's one drawing names the
    nodes (``operation_node_id``, ``field_node_id``)."""
    operations = {operation["id"]: operation for operation in path["operations"]}
    field = path["field"]
    targets = {(field, origin) for origin in path_origins(path)}
    field_key = field_node_id(dataset, field, namespace)
    if walked is not None and _reads_again(path["operations"], targets, memo):
        walked = None  # this path's field is read again: draw all of it, share nothing of it

    def key_of(ref: tuple[str, str]) -> str:
        return field_key if ref in targets else operation_node_id(ref[1], ref[0], scope)

    def drawn(ref: tuple[str, str]) -> tuple[dict[str, Any], list[tuple[tuple[str, str], tuple[Any, ...],
                                                                       dict[str, Any]]], bool]:
        """The node of ``ref``, the edges into it with their sort keys, and whether they are the
        same in every path (not when it reads this path's field itself). The memo is keyed by
        the operation object, one per operation set, so one scope: a memo serves one naming."""
        operation = operations[ref[1]]
        target = ref in targets
        known = None if target else memo.drawn.get((id(operation), ref[0]))
        if known is not None and not any(parent in targets for parent, _, _ in known[1]):
            return known[0], known[1], True
        head = key_of(ref)
        if target:
            entry = {"id": head, "field": field, "dataset": dataset, "kind": "field"}
        elif operation["type"] == "read":
            entry = {"id": head, "field": ref[0], "origin": ref[1], "kind": "source", "sources": operation["sources"]}
        else:
            entry = {"id": head, "field": ref[0], "origin": ref[1], "kind": "intermediate"}
        op_id, name = operation["id"], operation["name"]
        into = []
        for item in operation["inputs"]:
            parent = (item["field"], item["origin"])
            source = key_of(parent)
            edge = {"from": source, "to": head, "operation": op_id, "name": name}
            transformation = item.get("transformation")
            if transformation is not None:
                edge["transformation"] = transformation
            into.append((parent, (source, head, op_id, name, sort_key(transformation)), edge))
        # the same in every path, unless it reads this path's field itself (a write's output read
        # again by a later operation), whose node is the path's own field node
        shared = not target and not any(parent in targets for parent, _, _ in into)
        if shared:
            memo.drawn[(id(operation), ref[0])] = (entry, into, operation)
        return entry, into, shared

    stack, seen = list(targets), set()
    while stack:
        ref = stack.pop()
        if ref in seen:
            continue
        seen.add(ref)
        if walked is not None and ref not in targets and (id(operations[ref[1]]), ref[0]) in walked:
            continue  # drawn by another path of the answer, with everything before it
        entry, into, shared = drawn(ref)
        nodes.setdefault(entry["id"], entry)
        for parent, sort, edge in into:
            edges[sort] = edge
            if parent not in seen:
                stack.append(parent)
        if walked is not None and shared:
            walked.add((id(operations[ref[1]]), ref[0]))  # its parents are on the stack: drawn by the end


class AnswerDrawing:
    """One drawing of a whole answer (``graph=answer``): the union of its paths' drawings in one
    view, each node and edge once. A detailed drawing stops at an intermediate field the answer
    drew already (the edges into it, and so everything before it, are drawn), so a wide record's
    impact costs its distinct operations, not the sum of its paths (each repeating the shared
    chain). Live for one answer: it keeps the operations it saw (their ids key what it drew)."""

    def __init__(self, view: str) -> None:
        self.view = view
        self.nodes: dict[str, dict[str, Any]] = {}
        self.edges: dict[tuple[Any, ...], dict[str, Any]] = {}
        self.warnings: list[dict[str, Any]] = []
        self._memo = DetailedMemo()
        self._walked: set[tuple[int, str]] = set()
        self._scopes: dict[str, str] = {}  # a set's own name -> its name in this answer

    def scope(self, path: PathDocument, namespace: str, dataset: str) -> str:
        """The name of ``path``'s operation set in this answer's node ids: ``s1``, ``s2``, ... in
        the order the answer draws them. Never the set's fingerprint: it digests the whole record,
        reads the caller may not see included (a guess at a hidden name would be confirmed)."""
        own = path.get("set") or f"dataset:{namespace}/{dataset}"
        return self._scopes.setdefault(own, f"s{len(self._scopes) + 1}")

    def add(self, path: PathDocument, namespace: str, dataset: str) -> None:
        """Draw ``path`` (a path of a field of ``dataset`` in ``namespace``) into the answer's
        drawing; its field's node is named with its namespace, its operations' in its operation set."""
        scope = self.scope(path, namespace, dataset)
        if self.view == "detailed":
            _draw_detailed(path, dataset, self._memo, self.nodes, self.edges, self._walked, scope, namespace)
        else:
            drawing = simple_view(path, dataset, scope, namespace)
            for node in drawing["nodes"]:
                self.nodes.setdefault(node["id"], node)
            for edge in drawing["edges"]:
                self.edges.setdefault((edge["from"], edge["to"], *edge["operations"],
                                       repr(edge.get("transformations"))), edge)
        self.warnings += [warning for warning in path.get("warnings") or [] if warning not in self.warnings]

    def graph(self) -> dict[str, Any]:
        drawing: dict[str, Any] = {"nodes": [self.nodes[key] for key in sorted(self.nodes)],
                                   "edges": [self.edges[key] for key in sorted(self.edges)]}
        if self.warnings:
            drawing["warnings"] = self.warnings
        return drawing


def simple_view(path: PathDocument, dataset: str, scope: str | None = None, namespace: str | None = None
                ) -> dict[str, Any]:
    """Nodes and edges of the simple view: source fields -> the field, each edge with its
    operations. ``scope`` and ``namespace``: how an answer's one drawing names its nodes."""
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
    target = field_node_id(dataset, path["field"], namespace)
    nodes = [{"id": target, "field": path["field"], "dataset": dataset, "kind": "field"}]
    edges = []
    found: dict[tuple[str, str], tuple[frozenset[str], frozenset[str]]] = {}
    for write in path_origins(path):
        for source, (ops, kinds) in routes(path["field"], write).items():
            known_ops, known_kinds = found.get(source, (frozenset(), frozenset()))
            found[source] = (known_ops | ops, known_kinds | kinds)
    for (origin, field), (ops, kinds) in sorted(found.items()):
        key = operation_node_id(origin, field, scope)
        nodes.append({"id": key, "field": field, "origin": origin, "kind": "source",
                      "sources": operations[origin]["sources"]})
        ordered = sorted(ops, key=rank.__getitem__)
        edge: dict[str, Any] = {"from": key, "to": target, "operations": ordered,
                                "names": [operations[op_id]["name"] for op_id in ordered]}
        if kinds:
            edge["transformations"] = distinct_transformations(transformations[kind] for kind in kinds)
        edges.append(edge)
    return {"nodes": sorted(nodes, key=lambda n: n["id"]), "edges": edges}

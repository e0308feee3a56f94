"""A Spark analyzed plan's JSON (``qe.analyzed().toJSON()``) read as a tree, in pure Python.

Spark serializes a plan as a JSON array of nodes in pre-order; a node holds ``class``,
``num-children`` and its fields, where a child is named by its index among the node's children
and an expression (or a list of them) is itself such an array. ``build_tree`` makes a ``Node``
of it; the rest reads the tree without interpreting it: its nodes in pre-order, the subquery
plans under it in the order Spark's ``subqueriesAll`` lists them, the expression that defined
each ``exprId``, a nested field's path, the catalog table a node names.
``lineage.spark.plan_analysis`` reads lineage from it; ``lineage.spark.plan_description`` names
and describes its expressions.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, TypeGuard


class Node:
    """One node of a plan or expression tree: its class's short name (Project,
    AttributeReference, ...), its serialized fields, its children. A plain class with slots: a
    200-operator plan builds thousands on every write the capture sees."""

    __slots__ = ("_trees", "children", "fields", "holds_plan", "kind")

    def __init__(self, kind: str, fields: dict[str, Any], children: list[Node]) -> None:
        self.kind = kind
        self.fields = fields
        self.children = children
        self._trees: dict[str, list[Node]] | None = None  # expression trees by field, built on first use
        # set on a tree's root by ``build_tree``: whether any node of it holds an inline plan (a
        # subquery), so the search for subqueries skips the trees, nearly all, that hold none
        self.holds_plan = True

    def __repr__(self) -> str:
        return f"Node({self.kind!r}, {len(self.children)} children)"

    def expression(self, name: str) -> Node | None:
        found = self.expressions(name)
        return found[0] if found and is_tree(self.fields.get(name)) else None

    def expressions(self, name: str) -> list[Node]:
        """The expression trees of a field, built once per node (the analysis and the naming of
        operations both read them)."""
        if self._trees is None:
            self._trees = {}
        if name not in self._trees:
            value = self.fields.get(name)
            if not isinstance(value, list):
                trees: list[Node] = []
            elif is_tree(value):  # one expression
                trees = [build_tree(value)]
            else:
                trees = [build_tree(item) for item in value if is_tree(item)]
            self._trees[name] = trees
        return self._trees[name]

    def child_field(self, name: str) -> Node | None:
        """A child named by a field (an index among the children), or an inline plan."""
        value = self.fields.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(self.children):
            return self.children[value]
        return build_tree(value) if is_tree(value) else None

    @property
    def expr_id(self) -> int | None:
        ident = self.fields.get("exprId")
        return ident.get("id") if isinstance(ident, dict) and isinstance(ident.get("id"), int) else None


def is_tree(value: Any) -> TypeGuard[list[dict[str, Any]]]:
    return isinstance(value, list) and bool(value) and isinstance(value[0], dict) and "class" in value[0]


def build_tree(nodes: list[dict[str, Any]]) -> Node:
    """The tree of a pre-order node array (iteratively: a plan of 200 operators holds thousands of
    expression nodes, built on every write the capture sees)."""
    root: Node | None = None
    pending: list[tuple[Node, int]] = []  # nodes still taking children, with how many they want
    holds_plan = False
    for raw in nodes:
        count = raw.get("num-children", 0)
        node = Node(_kind(raw.get("class", "")), raw, [])
        holds_plan = holds_plan or "plan" in raw
        if pending:
            parent, wanted = pending[-1]
            parent.children.append(node)
            if len(parent.children) == wanted:
                pending.pop()
        else:
            root = node
        if isinstance(count, int) and count > 0:
            pending.append((node, count))
        if not pending:
            break
    if root is None or pending:
        raise ValueError("a plan array that ends before its tree does has no tree")
    root.holds_plan = holds_plan
    return root


_KINDS: dict[str, str] = {}


def _kind(class_name: Any) -> str:
    """``org.apache.spark.sql.catalyst.expressions.Alias`` -> ``Alias`` (``Foo$`` -> ``Foo``)."""
    kind = _KINDS.get(class_name) if isinstance(class_name, str) else None
    if kind is None:
        kind = str(class_name).rsplit(".", 1)[-1].rstrip("$")
        if isinstance(class_name, str) and len(_KINDS) < 10_000:
            _KINDS[class_name] = kind
    return kind


def child_arrays(nodes: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The pre-order node arrays of the root's children (each a whole plan of its own)."""
    arrays: list[list[dict[str, Any]]] = []
    position = 1
    for _ in range(_count(nodes[0])):
        start, pending = position, 1
        while pending:
            pending += _count(nodes[position]) - 1
            position += 1
        arrays.append(nodes[start:position])
    return arrays


def _count(raw: dict[str, Any]) -> int:
    count = raw.get("num-children", 0)
    return count if isinstance(count, int) else 0


def walk_plan(node: Node) -> Iterator[Node]:
    """``node`` and its descendants in pre-order (a stack: nested generators would cost the
    plan's depth for every node)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def subquery_plan(expression: Node) -> Node | None:
    """The plan of a subquery expression (Spark's ``PlanExpression``: a scalar subquery, EXISTS,
    IN (SELECT ...), a lateral subquery), held inline in its ``plan`` field."""
    if not is_tree(expression.fields.get("plan")):
        return None
    found = expression.expressions("plan")
    return found[0] if found else None


def subquery_plans(plan: Node) -> list[Node]:
    """Every subquery plan under ``plan``, in the order of Spark's ``QueryPlan.subqueriesAll``:
    those of each node (pre-order), then theirs, so the leaves of ``plan`` and then of these
    number the leaves as ``collectLeaves`` over the query and its ``subqueriesAll`` do."""
    direct = [sub for node in walk_plan(plan) for sub in _node_subqueries(node)]
    return direct + [deeper for sub in direct for deeper in subquery_plans(sub)]


def _node_subqueries(node: Node) -> Iterator[Node]:
    for name, value in node.fields.items():
        if name in ("class", "num-children") or not isinstance(value, list):
            continue
        for tree in node.expressions(name):
            yield from _expression_subqueries(tree)


def _expression_subqueries(expression: Node) -> Iterator[Node]:
    if not expression.holds_plan:
        return
    for node in walk_plan(expression):
        found = subquery_plan(node)
        if found is not None:
            yield found


def named_expressions(plan: Node) -> dict[int, Node]:
    """exprId -> the Alias that defined it, anywhere in the plan (for operation names)."""
    found: dict[int, Node] = {}
    for node in walk_plan(plan):
        for key in ("projectList", "aggregateExpressions", "windowExpressions"):
            for expression in node.expressions(key):
                if expression.kind == "Alias" and expression.expr_id is not None:
                    found[expression.expr_id] = expression
    return found


def struct_path(expression: Node) -> tuple[Node | None, tuple[str, ...]]:
    """``GetStructField(GetStructField(address, geo), n)`` -> (address, ("geo", "n"))."""
    ordinals: list[int] = []
    node = expression
    while node.kind == "GetStructField" and node.children and isinstance(node.fields.get("ordinal"), int):
        ordinals.append(node.fields["ordinal"])
        node = node.children[0]
    if node.kind != "AttributeReference":
        return None, ()
    path = []  # names from the types, by ordinal (Spark leaves ``name`` out of a resolved field)
    data_type = node.fields.get("dataType")
    for ordinal in reversed(ordinals):
        fields = data_type.get("fields") if isinstance(data_type, dict) else None
        if not isinstance(fields, list) or not 0 <= ordinal < len(fields) or not isinstance(fields[ordinal], dict):
            return None, ()
        path.append(str(fields[ordinal].get("name")))
        data_type = fields[ordinal].get("type")
    return node, tuple(path)


def table_of(fields: Mapping[str, Any]) -> tuple[str, ...] | None:
    """(catalog, database, table) from a node's serialized CatalogTable or identifier, if any."""
    for key in ("tableMeta", "table", "catalogTable", "identifier", "tableIdentifier"):
        value = fields.get(key)
        if isinstance(value, dict):
            ident = value.get("identifier", value)
            if isinstance(ident, dict) and isinstance(ident.get("table"), str):
                return tuple(part for part in (ident.get("catalog"), ident.get("database"), ident["table"])
                             if isinstance(part, str) and part)
    return None


_WITH_CATALOG_TABLE = {"LogicalRelation", "InsertIntoHadoopFsRelationCommand"}  # an Option[CatalogTable] field


def tableless(node: Node) -> bool:
    """Whether the JSON shows that ``node`` has no catalog table: Spark leaves an Option that is
    None out of the JSON, and writes Some(table) as the table."""
    return node.kind in _WITH_CATALOG_TABLE and "catalogTable" not in node.fields

"""Column lineage from a Spark analyzed plan's JSON (``qe.analyzed().toJSON()``), in pure Python.

The plan is read as a tree (``lineage.spark.plan_tree``). Attributes carry an ``exprId``, so
following ids from the write back to the relations read gives each written column's sources.

``plan_lineage`` answers, for a write command: the columns written, each with the source
columns it comes from and how (the OpenLineage column lineage vocabulary: DIRECT IDENTITY /
TRANSFORMATION / AGGREGATION, INDIRECT CONDITIONAL per column; FILTER, JOIN, GROUP_BY, SORT,
WINDOW for the whole output, as ``indirect``), the function that made it (``concat_ws``) with a
description that reads like the code (``concat_ws(' ', first, last)``, by
``lineage.spark.plan_description``), and the leaves read, in the order Spark's
``collectLeaves`` lists them (then its subqueries'), so the caller can name each leaf's dataset.
It also answers step by step: each ``expr AS name`` of a select, an aggregate or a window, each
generator's output and each union column is a ``Step`` reading source columns or earlier steps'
outputs, which ``lineage.spark.operations`` turns into the field operations record (read, each
step, write); the per-column answer is those steps composed.

A node it does not know still gives lineage: its new attributes depend on every attribute its
expressions reference (DIRECT TRANSFORMATION), and its name is kept in ``unsupported``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from lineage.model.column_lineage import PER_COLUMN, compose
from lineage.model.field_paths import Transformation
from lineage.spark.plan_description import describe, function_name, innermost_call, same_type_cast, top_function
from lineage.spark.plan_tree import (
    Node,
    build_tree,
    is_tree,
    named_expressions,
    struct_path,
    subquery_plan,
    subquery_plans,
    table_of,
    tableless,
    walk_plan,
)

# -- what the analysis answers ----------------------------------------------------------------


@dataclass(frozen=True)
class SourceColumn:
    leaf: int  # the leaf's position among the query's leaves in pre-order (Spark's collectLeaves)
    column: str


@dataclass(frozen=True)
class StepColumn:
    """The output of a step: a column the job computed on the way (``split(body, ',')[0] AS
    first_name``), which later steps and the write read."""

    step: int  # the step's position in ``PlanLineage.steps``
    column: str


Column = SourceColumn | StepColumn


@dataclass(frozen=True)
class Edge:
    source: Column
    transformation: Transformation


@dataclass(frozen=True)
class Step:
    """One computed column as the code wrote it: ``expression AS column`` in a select, an
    aggregate or a window, a generator's output (``explode``), a union's column. Its inputs are
    the columns the expression reads (source columns or earlier steps' outputs) and how."""

    column: str
    operation: str  # the function at its top: concat_ws, sum, cast, explode, union...
    description: str  # the expression as code
    inputs: tuple[Edge, ...]
    # Steps of one select that compute from one call over the same inputs (``split(body, ',')[0]``,
    # ``split(body, ',')[1]``...) are one operation with several outputs, as a parser's would be:
    # (the select, the call's function, the call as code); None for a step of its own.
    shared: tuple[int, str, str] | None = None


@dataclass(frozen=True)
class ColumnLineage:
    column: str
    inputs: tuple[Edge, ...]
    operation: str  # identity, or the function that made the column (concat_ws, sum, cast...)
    description: str  # the expression as code, "" for a column passed through


@dataclass(frozen=True)
class Leaf:
    kind: str  # LogicalRelation, HiveTableRelation, LocalRelation, ...
    columns: tuple[str, ...]
    table: tuple[str, ...] | None = None  # (catalog, database, table) when the JSON names it
    # the JSON shows the relation has no catalog table (an absent Option is left out), so the JVM
    # need not be asked for one
    tableless: bool = False


@dataclass
class PlanLineage:
    """A write's column lineage twice: ``columns``/``indirect`` from the source columns (the
    OpenLineage column lineage facet's reading: each written column's sources, composed through
    every step), and ``steps``/``written`` step by step as the code computed them (what the
    field operations record holds: read, each step, write)."""

    command: str
    columns: list[ColumnLineage]
    indirect: list[Edge]
    leaves: dict[int, Leaf]  # by position among the query's leaves (see SourceColumn)
    target_table: tuple[str, ...] | None = None
    target_tableless: bool = False  # as ``Leaf.tableless``, for the write command
    unsupported: list[str] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    written: list[ColumnLineage] = field(default_factory=list)  # inputs: source columns or steps' outputs


WRITE_COMMANDS = {
    "InsertIntoHadoopFsRelationCommand", "CreateDataSourceTableAsSelectCommand", "InsertIntoHiveTable",
    "CreateHiveTableAsSelectCommand", "OptimizedCreateHiveTableAsSelectCommand", "SaveIntoDataSourceCommand",
    "InsertIntoDataSourceCommand", "AppendData", "OverwriteByExpression", "OverwritePartitionsDynamic",
    "CreateTableAsSelect", "ReplaceTableAsSelect", "InsertIntoStatement", "MergeIntoTable",
    "ReplaceData", "WriteDelta", "CreateTableAsSelectStatement",
}

# -- attribute dependencies -------------------------------------------------------------------

_DIRECT = "DIRECT"
_INDIRECT = "INDIRECT"


class Deps:
    """The columns (source columns or steps' outputs) an attribute is computed from, and how:
    each (column, kind) pair kept, so a column that reaches an attribute both as a value and as
    a condition (``CASE WHEN b > 0 THEN b ...``) is kept as both, DIRECT and INDIRECT. Of two ways
    of one kind the first met stays."""

    __slots__ = ("_by_kind",)

    def __init__(self, pairs: Iterable[tuple[Column, Transformation]] = ()) -> None:
        self._by_kind: dict[tuple[Column, str], Transformation] = {}
        for column, how in pairs:
            self.merge(column, how)

    def merge(self, column: Column, how: Transformation) -> None:
        self._by_kind.setdefault((column, how.type), how)

    def items(self) -> list[tuple[Column, Transformation]]:
        """(column, how) pairs, a column once per kind."""
        return [(column, how) for (column, _), how in self._by_kind.items()]

    def columns(self) -> list[Column]:
        return list(dict.fromkeys(column for column, _ in self._by_kind))

    def copy(self) -> Deps:
        return Deps(self.items())

    def __bool__(self) -> bool:
        return bool(self._by_kind)


_NONE = Deps()

_IDENTITY = Transformation(_DIRECT, "IDENTITY")
# Functions that hide the value they read (hashes, counts, lengths). A null test does not: `x IS
# NULL` in a filter or a CASE is an ordinary condition on x (the OpenLineage specification).
_MASKING_FUNCTIONS = {"Md5", "Sha1", "Sha2", "Crc32", "Murmur3Hash", "XxHash64", "HiveHash", "Count", "CountIf",
                      "ApproximateCountDistinct", "HyperLogLogPlusPlus", "Length", "OctetLength", "BitLength",
                      "Size"}
_PASS_THROUGH = {"SubqueryAlias", "View", "GlobalLimit",
                 "LocalLimit", "Limit", "Offset", "Tail", "Repartition", "RepartitionByExpression",
                 "RebalancePartitions", "Sample", "ResolvedHint", "UnresolvedHint", "WithWatermark",
                 "InMemoryRelation", "Subquery", "CollectMetrics", "ReturnAnswer", "WithCTE", "CTERelationDef",
                 "EventTimeWatermark", "Coalesce", "WriteFiles", "AnalysisBarrier"}
# Subquery expressions whose conditions are inputs of the expression they are in (not of every
# written column): a scalar subquery, EXISTS, x IN (SELECT ...)'s list query.
_SCOPED_SUBQUERIES = {"ScalarSubquery", "Exists", "ListQuery"}
_RANKING = {"Rank", "DenseRank", "PercentRank", "CumeDist", "RowNumber", "NTile"}
_LEAVES = {"LogicalRelation", "HiveTableRelation", "DataSourceV2Relation", "DataSourceV2ScanRelation",
           "LocalRelation", "LogicalRDD", "Range", "OneRowRelation", "StreamingRelation",
           "StreamingDataSourceV2Relation", "ExternalRDD", "LocalTableScan"}


def _merge(into: Deps, source: Column, how: Transformation) -> None:
    into.merge(source, how)


class _Analysis:
    def __init__(self, positions: dict[int, int]) -> None:
        self.positions = positions  # id(leaf node) -> its position among the query's leaves
        self.leaves: dict[int, Leaf] = {}
        self.indirect: dict[tuple[Column, str], Transformation] = {}  # a source can be a join key and filtered
        self.steps: list[Step] = []
        self.lists = 0  # select lists seen (a step's ``shared`` names its list)
        self._composed: dict[int, Deps] = {}  # a step -> its sources
        self.unsupported: list[str] = []
        self.attributes: dict[int, Deps] = {}  # exprId -> its sources
        # exprId of a struct built in the plan (named_struct, struct) -> its fields' own sources
        self.struct_fields: dict[int, list[Deps]] = {}  # by ordinal (a struct may repeat a name)
        self.ctes: dict[int, list[tuple[str, int | None]]] = {}  # CTE id -> its definition's outputs
        self.cte_conditions: dict[int, dict[tuple[Column, str], Transformation]] = {}  # CTE id -> its conditions

    # plan nodes: each returns its output attributes as (name, exprId) in order

    def plan(self, node: Node) -> list[tuple[str, int | None]]:
        kind = node.kind
        if kind == "CTERelationRef":
            return self._cte_ref(node)
        if kind in _LEAVES or (not node.children and kind not in WRITE_COMMANDS and node.expressions("output")):
            return self._leaf(node)
        if kind in ("Project",):
            self.plan(node.children[0])
            return self._named_list(node.expressions("projectList"))
        if kind == "Filter":
            outputs = self.plan(node.children[0])
            self._indirect(node.expression("condition"), "FILTER")
            return outputs
        if kind == "Join":
            left, right = self.plan(node.children[0]), self.plan(node.children[1])
            self._indirect(node.expression("condition"), "JOIN")
            join_type = str(node.fields.get("joinType"))
            return left if ("LeftSemi" in join_type or "LeftAnti" in join_type) else [*left, *right]
        if kind == "Aggregate":
            self.plan(node.children[0])
            for grouping in node.expressions("groupingExpressions"):
                self._indirect(grouping, "GROUP_BY")
            return self._named_list(node.expressions("aggregateExpressions"))
        if kind == "Distinct":  # SELECT DISTINCT: a GROUP BY on every column, as the optimizer rewrites it
            outputs = self.plan(node.children[0])
            self._indirect_outputs(outputs, "GROUP_BY")
            return outputs
        if kind in ("Deduplicate", "DeduplicateWithinWatermark"):  # dropDuplicates(keys): a GROUP BY on the keys
            outputs = self.plan(node.children[0])
            for key in node.expressions("keys"):
                self._indirect(key, "GROUP_BY")
            return outputs
        if kind == "Sort":
            outputs = self.plan(node.children[0])
            for order in node.expressions("order"):
                self._indirect(order, "SORT")
            return outputs
        if kind == "Window":  # its partition and order columns are inputs of its own outputs only
            outputs = self.plan(node.children[0])
            return [*outputs, *self._named_list(node.expressions("windowExpressions"))]
        if kind == "Union":
            return self._union(node)
        if kind == "Expand":
            return self._expand(node)
        if kind == "Generate":
            outputs = self.plan(node.children[0]) if node.children else []
            generator = node.expression("generator")
            structs = self._inlined_structs(generator) if generator is not None else None
            deps = Deps() if structs is not None or generator is None else self._expression_deps(generator)
            generated = []
            generated_deps = Deps((s, compose(_transformation("TRANSFORMATION"), t)) for s, t in deps.items())
            # posexplode's first output is the element's position: it shows none of the array's values
            position_deps = Deps((s, compose(_transformation("TRANSFORMATION", masking=True), t))
                                 for s, t in deps.items())
            for index, attribute in enumerate(node.expressions("generatorOutput")):
                name = str(attribute.fields.get("name"))
                if attribute.expr_id is not None:
                    at_position = index == 0 and generator is not None and generator.kind == "PosExplode"
                    own = position_deps if at_position else generated_deps
                    if structs is not None:  # inline(array(named_struct(...), ...)): each output its field's values
                        own = Deps()
                        for fields in structs:
                            for source, inner in fields[index].items() if index < len(fields) else ():
                                _merge(own, source, inner)
                    self.attributes[attribute.expr_id] = Deps([(self._step(
                        name, function_name(generator.kind) if generator else "generate",
                        describe(generator) if generator else "", own), _IDENTITY)])
                generated.append((name, attribute.expr_id))
            return [*outputs, *generated]
        if kind == "WithCTE":  # children: the CTE definitions, then the plan (the "plan" field says which)
            main = node.child_field("plan") or node.children[-1]
            for definition in node.children:
                if definition is not main:
                    self._cte(definition)
            return self.plan(main)
        if kind in _PASS_THROUGH and node.children:
            outputs = self.plan(node.children[0])
            for other in node.children[1:]:
                self.plan(other)
            return outputs
        return self._unknown(node)

    def _cte(self, definition: Node) -> None:
        """A CTE's definition: its outputs and its conditions (filters, joins...), kept by its id
        for the references to it: its conditions hold where it is read (in a subquery, for that
        subquery's expression only), not where it is defined."""
        outputs, inner_indirect = self._plan_apart(definition.children[0]) if definition.children else ([], {})
        cte_id = definition.fields.get("id")
        if isinstance(cte_id, int):
            self.ctes[cte_id] = outputs
            self.cte_conditions[cte_id] = inner_indirect

    def _plan_apart(self, node: Node) -> tuple[list[tuple[str, int | None]], dict[tuple[Column, str], Transformation]]:
        """``node``'s outputs, and the conditions (filters, joins, groupings...) planning it found,
        kept apart from the query's: a CTE's or a subquery's hold where it is read."""
        outer, self.indirect = self.indirect, {}
        try:
            return self.plan(node), self.indirect
        finally:
            self.indirect = outer

    def _cte_ref(self, node: Node) -> list[tuple[str, int | None]]:
        """A reference to a CTE: its attributes stand for the definition's, by position."""
        cte_id = node.fields.get("cteId")
        definition = self.ctes.get(cte_id, []) if isinstance(cte_id, int) else []
        for key, condition in self.cte_conditions.get(cte_id, {}).items() if isinstance(cte_id, int) else ():
            self.indirect.setdefault(key, condition)
        outputs = []
        for position, attribute in enumerate(node.expressions("output")):
            defined = definition[position][1] if position < len(definition) else None
            if attribute.expr_id is not None and defined is not None:
                self.attributes[attribute.expr_id] = self.attributes.get(defined, _NONE).copy()
            outputs.append((str(attribute.fields.get("name")), attribute.expr_id))
        return outputs

    def _leaf(self, node: Node) -> list[tuple[str, int | None]]:
        index = self.positions.get(id(node), -1 - len(self.leaves))
        outputs = []
        for attribute in node.expressions("output"):
            name = str(attribute.fields.get("name"))
            if attribute.expr_id is not None:
                self.attributes[attribute.expr_id] = Deps([(SourceColumn(index, name), _IDENTITY)])
            outputs.append((name, attribute.expr_id))
        self.leaves[index] = Leaf(node.kind, tuple(name for name, _ in outputs), table_of(node.fields),
                                  tableless(node))
        return outputs

    def _union(self, node: Node) -> list[tuple[str, int | None]]:
        branches = [self.plan(child) for child in node.children]
        if not branches:
            return []
        first = branches[0]
        for position, (name, expr_id) in enumerate(first):
            if expr_id is None:
                continue
            deps = self.attributes.get(expr_id, _NONE).copy()
            for branch in branches[1:]:
                other = branch[position][1] if position < len(branch) else None
                for source, how in self.attributes.get(other, _NONE).items() if other is not None else ():
                    _merge(deps, source, how)
            self.attributes[expr_id] = Deps([(self._step(name, "union", f"union of {len(branches)} queries' {name}",
                                                         deps), _IDENTITY)])
            self._union_struct(expr_id, [branch[position][1] if position < len(branch) else None
                                         for branch in branches[1:]])
        return first

    def _union_struct(self, expr_id: int, others: list[int | None]) -> None:
        """A struct column of a union built in every branch: each field the union of the branches'
        (the union's column keeps the first branch's id); else its fields are not told apart."""
        fields = self.struct_fields.get(expr_id)
        branches = [self.struct_fields.get(other) if other is not None else None for other in others]
        if fields is None:
            return
        if any(branch is None or len(branch) != len(fields) for branch in branches):
            del self.struct_fields[expr_id]
            return
        merged = [field.copy() for field in fields]
        for branch in branches:
            assert branch is not None
            for into, value in zip(merged, branch, strict=True):
                for source, how in value.items():
                    _merge(into, source, how)
        self.struct_fields[expr_id] = merged

    def _expand(self, node: Node) -> list[tuple[str, int | None]]:
        """ROLLUP / CUBE / GROUPING SETS: each output column is, row by row, one of the projections'."""
        for child in node.children:
            self.plan(child)
        rows = node.fields.get("projections")
        rows = rows if isinstance(rows, list) else []
        outputs = []
        for position, attribute in enumerate(node.expressions("output")):
            deps = Deps()
            for row in rows:
                item = row[position] if isinstance(row, list) and position < len(row) else None
                if is_tree(item):
                    for source, how in self._expression_deps(build_tree(item)).items():
                        _merge(deps, source, how)
            if attribute.expr_id is not None:
                self.attributes[attribute.expr_id] = deps
            outputs.append((str(attribute.fields.get("name")), attribute.expr_id))
        return outputs

    def _unknown(self, node: Node) -> list[tuple[str, int | None]]:
        self.unsupported.append(node.kind)
        outputs: list[tuple[str, int | None]] = []
        for child in node.children:
            outputs.extend(self.plan(child))
        referenced = Deps()
        for name, value in node.fields.items():
            if name in ("output",) or not isinstance(value, list):
                continue
            # the node's own (cached) trees: a subquery among them is the plan whose leaves were
            # numbered (a lateral join's subquery), not a copy its leaves are unknown in
            for expression in node.expressions(name):
                if expression.kind.endswith(("Relation", "Project", "Command")):
                    continue
                for source, how in self._expression_deps(expression).items():
                    _merge(referenced, source, compose(_transformation("TRANSFORMATION"), how))
        new_outputs = []
        for attribute in node.expressions("output"):
            if attribute.expr_id is not None and attribute.expr_id not in self.attributes:
                self.attributes[attribute.expr_id] = referenced.copy()
            new_outputs.append((str(attribute.fields.get("name")), attribute.expr_id))
        return new_outputs or outputs

    def _indirect(self, expression: Node | None, subtype: str) -> None:
        if expression is not None:
            self._add_indirect(self._expression_deps(expression), subtype)

    def _indirect_outputs(self, outputs: list[tuple[str, int | None]], subtype: str) -> None:
        """Every source of ``outputs`` as an INDIRECT input of ``subtype``."""
        for _, expr_id in outputs:
            if expr_id is not None:
                self._add_indirect(self.attributes.get(expr_id, _NONE), subtype)

    def _add_indirect(self, deps: Deps, subtype: str) -> None:
        for source, how in deps.items():
            self.indirect.setdefault((source, subtype), Transformation(_INDIRECT, subtype, masking=how.masking))

    def _named_list(self, expressions: list[Node]) -> list[tuple[str, int | None]]:
        """A project/aggregate/window list: each item an attribute passed through (or renamed, or
        a nested field read as is), or ``expr AS name``: a step."""
        self.lists += 1
        outputs = []
        for expression in expressions:
            name = str(expression.fields.get("name"))
            if expression.kind == "Alias" and expression.expr_id is not None:
                fields = self._built_struct(expression.children[0])
                if fields is None:
                    deps = self._expression_deps(expression.children[0])
                else:  # each value walked once (a subquery among them is planned once)
                    self.struct_fields[expression.expr_id] = fields
                    deps = _struct_deps(fields)
                top = top_function(expression)
                call = innermost_call(top) if top is not None else None
                shared = (self.lists, function_name(call.kind), describe(call)) if call is not None else None
                self.attributes[expression.expr_id] = deps if top is None else Deps([
                    (self._step(name, function_name(top.kind), describe(top), deps, shared), _IDENTITY)])
            outputs.append((name, expression.expr_id))
        return outputs

    def _step(self, column: str, operation: str, description: str, deps: Deps,
              shared: tuple[int, str, str] | None = None) -> StepColumn:
        self.steps.append(Step(column, operation, description,
                               tuple(Edge(source, how) for source, how in sorted(deps.items(), key=_edge_order)),
                               shared))
        return StepColumn(len(self.steps) - 1, column)

    def compose(self, deps: Deps) -> Deps:
        """``deps`` from the source columns: each step's output replaced by the step's own
        sources, the transformations combined (each kind of each source kept)."""
        found = Deps()
        for column, how in deps.items():
            if isinstance(column, StepColumn):
                for source, inner in self._step_sources(column.step).items():
                    _merge(found, source, compose(how, inner))
            else:
                _merge(found, column, how)
        return Deps((column, how) for column, how in found.items() if isinstance(column, SourceColumn))

    def _step_sources(self, index: int) -> Deps:
        if index not in self._composed:
            self._composed[index] = self.compose(Deps((edge.source, edge.transformation)
                                                      for edge in self.steps[index].inputs))
        return self._composed[index]

    def _expression_deps(self, expression: Node) -> Deps:
        """The sources an expression reads and how (walking functions down to attributes)."""
        deps = Deps()
        self._walk(expression, _IDENTITY, deps)
        return deps

    def _walk(self, expression: Node, how: Transformation, deps: Deps) -> None:
        kind = expression.kind
        if kind == "GetStructField" and self._struct_field(expression, how, deps):
            return
        if kind == "OuterReference" and expression.expr_id is None:  # a column of the outer query, in a
            # subquery: a leaf expression holding the column as its field ``e``
            referenced = expression.expression("e") or (expression.children[0] if expression.children else None)
            if referenced is not None:
                self._walk(referenced, how, deps)
            return
        if kind in ("AttributeReference", "OuterReference"):
            expr_id = expression.expr_id
            for source, inner in self.attributes.get(expr_id, _NONE).items() if expr_id is not None else ():
                _merge(deps, source, compose(how, inner))
            return
        if kind in ("Alias", "KnownNotNull", "KnownFloatingPointNormalized", "PromotePrecision", "SortOrder") \
                or same_type_cast(expression):
            for child in expression.children[:1]:
                self._walk(child, how, deps)
            return
        if kind in ("CaseWhen", "If"):
            self._conditional(expression, how, deps)
            return
        if kind == "Coalesce":  # coalesce, nvl, ifnull: each argument but the last is tested for null
            self._values_and_conditions(expression.children, expression.children[:-1], how, deps)
            return
        if kind == "NullIf":  # nullif(a, b): a's value, a and b compared (Spark keeps them as fields)
            left, right = expression.expression("left"), expression.expression("right")
            if left is not None and right is not None:
                self._values_and_conditions([left], [left, right], how, deps)
                return
        subquery = subquery_plan(expression)
        if subquery is not None and kind in _SCOPED_SUBQUERIES:  # (SELECT max(amount) ...), x IN (SELECT ...)
            # The subquery's own conditions (its filters, joins, groupings, the correlation with
            # the outer query through its outer references) decide this expression's value, not
            # the outer query's rows: they are its inputs, of their kinds. A WHERE over it makes
            # them conditions of every written column, as any input of a filter's condition is.
            outputs, inner_indirect = self._plan_apart(subquery)
            for (source, _), condition in inner_indirect.items():
                _merge(deps, source, compose(how, condition))
            # EXISTS (SELECT * ...) tests for rows: no value of the subquery's own is read
            step = compose(how, _transformation("TRANSFORMATION"))
            for _, expr_id in outputs if kind != "Exists" else ():
                for source, inner in self.attributes.get(expr_id, _NONE).items() if expr_id is not None else ():
                    _merge(deps, source, compose(step, inner))
            return  # its children are the outer columns it correlates with, read in its conditions
        if subquery is not None:  # another kind of subquery (a lateral one): its values, its conditions global
            step = compose(how, _transformation("TRANSFORMATION"))
            for _, expr_id in self.plan(subquery):
                for source, inner in self.attributes.get(expr_id, _NONE).items() if expr_id is not None else ():
                    _merge(deps, source, compose(step, inner))
        if kind == "WindowSpecDefinition":
            # the partition and order columns decide which rows the window's value is computed
            # over: INDIRECT WINDOW inputs of the window's output (not of every written column)
            self._values_and_conditions([], expression.children, how, deps, "WINDOW")
            return
        if kind in _RANKING:
            # a ranking function's children are its window's order columns again (rank() is
            # RANK(age)), whose values do not reach the rank: the window spec names them
            return
        step = _transformation("AGGREGATION" if kind == "AggregateExpression" or kind in _AGGREGATES
                               else "TRANSFORMATION", masking=kind in _MASKING_FUNCTIONS)
        combined = compose(how, step)
        for child in expression.children:
            self._walk(child, combined, deps)

    def _inlined_structs(self, generator: Node) -> list[list[Deps]] | None:
        """The structs ``inline`` (or ``inline_outer``) makes rows of, when they are built in the
        plan as an array of literal structs (``inline(array(named_struct(...), ...))``): each
        struct's fields with their own sources; None otherwise (every input then reaches every
        output)."""
        if generator.kind != "Inline" or len(generator.children) != 1 or generator.children[0].kind != "CreateArray":
            return None
        structs = [self._built_struct(element) for element in generator.children[0].children]
        return None if any(struct is None for struct in structs) else [s for s in structs if s is not None]

    def _built_struct(self, expression: Node) -> list[Deps] | None:
        """The fields of a struct built here (``named_struct('given', first, ...)``, ``struct(first,
        ...)``: Spark's ``CreateNamedStruct``, names and values in turn), in order, each with its
        value's own sources; None for any other expression."""
        if expression.kind != "CreateNamedStruct" or len(expression.children) % 2 \
                or any(name.kind != "Literal" for name in expression.children[::2]):
            return None
        return [self._expression_deps(value) for value in expression.children[1::2]]

    def _struct_field(self, expression: Node, how: Transformation, deps: Deps) -> bool:
        """``address.city`` read straight from a relation's column is that nested field, as is:
        the source is ``address.city``, not the whole ``address`` transformed. A field of a struct
        built in the plan (``named_struct('given', first, ...) AS s`` then ``s.given``) is that
        field's value: its own sources, not every input of the struct."""
        attribute, path = struct_path(expression)
        built = self.struct_fields.get(attribute.expr_id) if attribute is not None and attribute.expr_id is not None \
            else None
        ordinal = expression.fields.get("ordinal")
        if built is not None and len(path) == 1 and isinstance(ordinal, int) and 0 <= ordinal < len(built):
            for source, inner in built[ordinal].items():
                _merge(deps, source, compose(how, inner))
            return True
        passed = self.attributes.get(attribute.expr_id) if attribute is not None and attribute.expr_id is not None \
            else None
        if not path or not passed or any(inner != _IDENTITY or not isinstance(source, SourceColumn)
                                         for source, inner in passed.items()):
            return False
        for source in passed.columns():
            assert isinstance(source, SourceColumn)
            _merge(deps, SourceColumn(source.leaf, ".".join((source.column, *path))), compose(how, _IDENTITY))
        return True

    def _conditional(self, expression: Node, how: Transformation, deps: Deps) -> None:
        """CASE WHEN / IF: the conditions are INDIRECT CONDITIONAL, the values DIRECT."""
        children = expression.children
        if expression.kind == "If":
            conditions, values = children[:1], children[1:]
        else:  # CaseWhen: condition, value, condition, value, ..., [else]
            conditions = children[0:len(children) // 2 * 2:2]
            values = [child for index, child in enumerate(children) if index % 2 or index == len(children) - 1]
        self._values_and_conditions(values, conditions, how, deps)

    def _values_and_conditions(self, values: list[Node], conditions: list[Node], how: Transformation,
                               deps: Deps, subtype: str = "CONDITIONAL") -> None:
        """A conditional function: the ``values`` that may flow out DIRECT (a TRANSFORMATION), the
        ``conditions`` tested INDIRECT ``subtype`` (a column can be both: each kind is kept). A
        condition's own indirect inputs keep their kind: ``rank() over (order by sum(amount))`` of
        a GROUP BY person orders by the sums (amount WINDOW), person stays the grouping key."""
        value_how = compose(how, _transformation("TRANSFORMATION"))
        for value in values:
            self._walk(value, value_how, deps)
        condition_deps = Deps()
        for condition in conditions:
            self._walk(condition, _IDENTITY, condition_deps)
        for source, inner in condition_deps.items():
            _merge(deps, source, inner if inner.type == _INDIRECT and inner.subtype not in PER_COLUMN else
                   Transformation(_INDIRECT, subtype, masking=inner.masking))


def _struct_deps(fields: list[Deps]) -> Deps:
    """A built struct's own sources: every field's value, transformed into the struct (as any
    function's arguments are)."""
    deps = Deps()
    into = _transformation("TRANSFORMATION")
    for value in fields:
        for source, how in value.items():
            _merge(deps, source, compose(into, how))
    return deps


def _transformation(subtype: str, masking: bool = False) -> Transformation:
    return Transformation(_DIRECT, subtype, masking=masking)


_AGGREGATES = {"Sum", "Average", "Avg", "Min", "Max", "Count", "CountIf", "First", "Last", "CollectList",
               "CollectSet", "StddevPop", "StddevSamp", "VariancePop", "VarianceSamp", "ApproximateCountDistinct",
               "HyperLogLogPlusPlus", "Percentile", "ApproximatePercentile", "Median", "Mode", "MaxBy", "MinBy",
               "BoolAnd", "BoolOr", "BitAndAgg", "BitOrAgg", "BitXorAgg", "Corr", "CovPopulation", "CovSample",
               "Skewness", "Kurtosis", "AnyValue", "ListAgg", "Product", "RegrCount"}


# -- the answer ------------------------------------------------------------------------------


def plan_lineage(nodes: list[dict[str, Any]]) -> PlanLineage:
    """The column lineage of a write command's analyzed plan (see the module's doc)."""
    root = build_tree(nodes)
    if "query" in root.fields:
        query = root.child_field("query")
    else:  # a command whose query is its child, or a plain query plan
        query = root.children[0] if root.kind in WRITE_COMMANDS and root.children else root
    leaves = [node for plan in ([query, *subquery_plans(query)] if query is not None else [])
              for node in walk_plan(plan) if not node.children]
    analysis = _Analysis({id(node): position for position, node in enumerate(leaves)})
    outputs: list[tuple[str, int | None]] = analysis.plan(query) if query is not None else []
    expressions = named_expressions(query) if query is not None else {}
    names = _output_names(root, outputs)
    columns, written = [], []
    for name, (_, expr_id) in zip(names, outputs, strict=False):
        steps_deps = analysis.attributes.get(expr_id, _NONE) if expr_id is not None else _NONE
        deps = analysis.compose(steps_deps)
        top = top_function(expressions[expr_id]) if expr_id in expressions else None
        edges = tuple(Edge(source, how) for source, how in sorted(deps.items(), key=_edge_order))
        identity = top is None and all(edge.transformation.subtype == "IDENTITY" for edge in edges)
        operation = "identity" if identity else function_name(top.kind) if top is not None else "transform"
        description = "" if top is None else describe(top)
        columns.append(ColumnLineage(name, edges, operation, description))
        written.append(ColumnLineage(name, tuple(Edge(column, how) for column, how
                                                 in sorted(steps_deps.items(), key=_edge_order)),
                                     operation, description))
    flat: dict[tuple[SourceColumn, str], Transformation] = {}
    for (column, subtype), how in analysis.indirect.items():
        for source, inner in analysis.compose(Deps([(column, how)])).items():
            assert isinstance(source, SourceColumn)  # compose answers source columns only
            flat.setdefault((source, subtype), Transformation(_INDIRECT, subtype, masking=inner.masking))
    indirect = [Edge(source, how) for (source, subtype), how
                in sorted(flat.items(), key=lambda item: (item[0][0].leaf, item[0][0].column, item[0][1]))]
    return PlanLineage(root.kind, columns, indirect, analysis.leaves, table_of(root.fields), tableless(root),
                       sorted(set(analysis.unsupported)), analysis.steps, written)


def _column_order(column: Column) -> tuple[int, int, str]:
    """Source columns first (by leaf), then steps' outputs (by step): a stable order."""
    if isinstance(column, SourceColumn):
        return 0, column.leaf, column.column
    return 1, column.step, column.column


def _edge_order(item: tuple[Column, Transformation]) -> tuple[int, int, str, str]:
    """By column, then DIRECT before INDIRECT."""
    return (*_column_order(item[0]), item[1].type)


def _output_names(root: Node, outputs: list[tuple[str, int | None]]) -> list[str]:
    """The written column names: the command's ``outputColumnNames`` when it has them."""
    listed = root.fields.get("outputColumnNames")
    if isinstance(listed, str) and listed.startswith("["):
        names = [part.strip() for part in listed[1:-1].split(",") if part.strip()]
        if len(names) == len(outputs):
            return names
    if isinstance(listed, list) and len(listed) == len(outputs):
        return [str(name) for name in listed]
    return [name for name, _ in outputs]

"""The field operations record of a captured write, step by step: the *Field Level Lineage*
design's shape, as a hand-written record of the same job would have it.

A read per source dataset (its outputs: the columns the write uses), an operation per step the
code computed (``split(body, ',')[0] AS first_name``, then ``concat_ws(' ', first_name,
last_name) AS name``, then ``concat(...) AS id``: three operations on ``id``'s path, each named
for its function and described as code), and the write. A column passed through or renamed is
no operation: the write reads it from where it was made. Each input carries its transformation
(DIRECT or INDIRECT, and masking) for that step alone; composed along a path they give the
column lineage facet's reading (``PlanLineage.columns``).

What decides the rows of the whole output (a filter, a join's keys, a grouping, a sort) is an
INDIRECT input of the operation that makes each written column, named by the source columns it
reads (a filter on a computed column names the columns it was computed from, so no operation
ever depends on itself); a column passed through as is
gets an operation of its own for them, named for what they are (``filter``, ``join+filter``).
Every (source, kind) pair is an input: a column read as a value and also filtered, grouped or
tested on is an input of each kind (a grouping key written as is gets an operation of its own,
``group_by``, reading it DIRECTLY and INDIRECTLY).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lineage.model.field_paths import Transformation
from lineage.naming.identity import DatasetIdentity, NamespaceMap
from lineage.spark.plan_analysis import Column, Edge, PlanLineage, SourceColumn, StepColumn

_IDENTITY = Transformation("DIRECT", "IDENTITY")
MAX_DESCRIPTION = 1000


def captured_operations(lineage: PlanLineage, leaves: Mapping[int, tuple[DatasetIdentity, ...]],
                        target: DatasetIdentity, namespaces: NamespaceMap) -> dict[str, Any] | None:
    """The ``field_operations`` payload of a write (None when it writes no column).

    ``leaves`` names the datasets each leaf of the plan reads (by position, as
    ``lineage.leaves``: one relation can read the folders of several datasets, and each column it
    gives comes from each of them); ``target`` is the written dataset."""
    if not lineage.written:
        return None
    record = _Record(lineage, leaves, namespaces)
    for column in lineage.written:
        record.write(column.column, column.inputs, column.operation, column.description)
    return {"destination": namespaces.dataset_ref(target), "operations": record.operations(target)}


class _Record:
    def __init__(self, lineage: PlanLineage, leaves: Mapping[int, tuple[DatasetIdentity, ...]],
                 namespaces: NamespaceMap):
        self.lineage, self.leaves, self.namespaces = lineage, leaves, namespaces
        self.reads: dict[DatasetIdentity, dict[str, Any]] = {}
        self.ids: set[str] = set()
        self.step_ops: dict[int, dict[str, Any]] = {}  # step index -> its operation (shared by a group)
        self.made: list[dict[str, Any]] = []  # the steps' operations, in the plan's order
        self._group_steps(self._needed())
        self.own: list[dict[str, Any]] = []  # operations of one written column (rows' inputs, generic nodes)
        self.written: list[tuple[str, dict[str, Any]]] = []  # (written name, the write's input)

    def _needed(self) -> list[int]:
        """The steps the written columns come from, in the plan's order."""
        found: set[int] = set()
        stack = [edge.source for column in self.lineage.written for edge in column.inputs]
        while stack:
            column = stack.pop()
            if isinstance(column, StepColumn) and column.step not in found:
                found.add(column.step)
                stack.extend(edge.source for edge in self.lineage.steps[column.step].inputs)
        return sorted(found)

    def _group_steps(self, needed: list[int]) -> None:
        """One operation per step, or per group of steps of one select computed from one call over
        the same inputs (named for that call: ``split``, outputs ``first_name``, ``last_name``...)."""
        groups: dict[Any, list[int]] = {}
        for index in needed:
            step = self.lineage.steps[index]
            groups.setdefault((step.shared, step.inputs) if step.shared else index, []).append(index)
        for members in groups.values():
            steps = [self.lineage.steps[index] for index in members]
            first = steps[0]
            shared = first.shared
            name = shared[1] if len(steps) > 1 and shared else first.operation
            description = first.description if len(steps) == 1 else "; ".join(
                f"{step.description} AS {step.column}" for step in steps)
            operation = {"id": self._id(f"{name}:{first.column}"), "type": "transform", "name": name,
                         "description": description[:MAX_DESCRIPTION],
                         "inputs": [item for edge in first.inputs
                                    for item in self._inputs(edge.source, edge.transformation)],
                         "outputs": [step.column for step in steps]}
            self.made.append(operation)
            for index in members:
                self.step_ops[index] = operation

    def write(self, name: str, inputs: tuple[Edge, ...], operation: str, description: str) -> None:
        made_by = inputs[0].source if len(inputs) == 1 and inputs[0].transformation == _IDENTITY else None
        if isinstance(made_by, StepColumn):
            step = self.step_ops[made_by.step]
            for edge in self.lineage.indirect:
                for item in self._inputs(edge.source, edge.transformation):
                    if not _adds_nothing(item, step["inputs"]):
                        step["inputs"].append(item)
            self.written.append((name, {"field": made_by.column, "origin": step["id"]}))
            return
        rows = list(self.lineage.indirect)  # a column read directly and also filtered on: both kept
        if isinstance(made_by, SourceColumn) and not rows and len(self.leaves[made_by.leaf]) == 1:
            self.written.append((name, self._inputs(made_by, None)[0]))
        else:
            subtypes = sorted({edge.transformation.subtype or "" for edge in rows}) if made_by else []
            # a column passed as is: named for what chose its rows, else (read from the folders of
            # several datasets) a union of them
            named = ("+".join(subtype.lower() for subtype in subtypes if subtype) or "union") if made_by else operation
            own = {"id": self._id(f"{named}:{name}"), "type": "transform", "name": named,
                   "description": description or _rows_description(name, rows, subtypes),
                   "inputs": [item for edge in (*inputs, *rows)
                              for item in self._inputs(edge.source, edge.transformation)],
                   "outputs": [name]}
            self.own.append(own)
            self.written.append((name, {"field": name, "origin": own["id"]}))

    def operations(self, target: DatasetIdentity) -> list[dict[str, Any]]:
        write = {"id": "write", "type": "write", "name": "write", "description": f"write {target.render()}",
                 "inputs": [item for _, item in self.written], "outputs": [name for name, _ in self.written]}
        return [*self.reads.values(), *self.made, *self.own, write]

    def _inputs(self, column: Column, how: Transformation | None) -> list[dict[str, Any]]:
        """The inputs ``column`` stands for: a step's output, or a source column of each dataset
        its leaf reads."""
        if isinstance(column, SourceColumn):
            origins = []
            for identity in self.leaves[column.leaf]:
                read = self._read(identity)
                if column.column not in read["outputs"]:
                    read["outputs"].append(column.column)
                origins.append(read["id"])
        else:
            origins = [self.step_ops[column.step]["id"]]
        items: list[dict[str, Any]] = [{"field": column.column, "origin": origin} for origin in origins]
        if how is not None:
            for item in items:
                item["transformation"] = how.to_dict()
        return items

    def _read(self, identity: DatasetIdentity) -> dict[str, Any]:
        if identity not in self.reads:
            self.reads[identity] = {"id": self._id(f"read:{len(self.reads) + 1}"), "type": "read", "name": "read",
                                    "description": f"read {identity.render()}",
                                    "inputs": [{"source": self.namespaces.dataset_ref(identity)}], "outputs": []}
        return self.reads[identity]

    def _id(self, wanted: str) -> str:
        """``wanted``, or ``wanted#2``... when taken (one job can compute two columns of one name)."""
        found, count = wanted, 1
        while found in self.ids:
            count += 1
            found = f"{wanted}#{count}"
        self.ids.add(found)
        return found


def _adds_nothing(item: dict[str, Any], inputs: list[dict[str, Any]]) -> bool:
    """Whether an INDIRECT ``item`` is among ``inputs`` already (each (source, kind) pair is kept:
    a column read as a value and also filtered on is both)."""
    return item in inputs


def _rows_description(name: str, rows: list[Edge], subtypes: list[str]) -> str:
    by = ", ".join(f"{subtype.lower().replace('_', ' ')} on "
                   + ", ".join(sorted({edge.source.column for edge in rows if edge.transformation.subtype == subtype}))
                   for subtype in subtypes)
    return f"{name} as is, its rows chosen by {by}" if by else name

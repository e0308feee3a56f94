"""A field-operations record read as OpenLineage's column lineage: for each written field, the
source fields it comes from and how, the transformations on the way composed into one.

A record says step by step how a field was made (read, transforms, write); the ``columnLineage``
facet says only where each output field comes from and how (DIRECT IDENTITY / TRANSFORMATION /
AGGREGATION, INDIRECT JOIN / FILTER / GROUP_BY / SORT / WINDOW / CONDITIONAL). ``compose``
folds the steps of one path into that answer: a chain of identities is an identity, an
aggregation anywhere on a direct chain makes it an aggregation, any other direct step a
transformation, and an indirect step makes the whole chain indirect with that step's subtype.
Through two indirect steps, a dataset-wide one (filter, join, grouping, sort) gives its kind; a
per-column one (a CASE's test, a window's keys) keeps the kind of the step before it. Masking
sticks once set.

Every (source field, transformation) pair that reaches a field is kept: a source used as a
value and as a condition (``CASE WHEN b > 0 THEN b ...``) is there twice, once DIRECT and once
INDIRECT CONDITIONAL.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from lineage.model.field_paths import Transformation, written_positions

_DIRECT, _INDIRECT = "DIRECT", "INDIRECT"
IDENTITY = Transformation(_DIRECT, "IDENTITY")
PER_COLUMN = ("CONDITIONAL", "WINDOW")
"""Indirect kinds that are conditions of one column; the others (FILTER, JOIN, GROUP_BY, SORT)
decide the rows of the whole output."""


class ColumnSource(NamedTuple):
    """One source field of a written field and how it reaches it."""

    namespace: str
    name: str  # the source dataset's name
    field: str
    type: str
    subtype: str
    masking: bool = False


def compose(outer: Transformation, inner: Transformation) -> Transformation:
    """How a source reaches a field through an intermediate one: ``inner`` is the step nearer
    the source, ``outer`` the rest of the way."""
    if outer.type == _INDIRECT and inner.type == _INDIRECT:
        # a condition of one column (a CASE's test, a window's keys) over an input that already
        # decided the intermediate's rows keeps that input's kind: rank() over (order by
        # sum(amount)) of a GROUP BY person leaves person GROUP_BY; a filter on a column (a
        # dataset-wide condition) makes every input of it a FILTER input (where rn = 1)
        subtype = inner.subtype if outer.subtype in PER_COLUMN else outer.subtype
        return Transformation(_INDIRECT, subtype, masking=outer.masking or inner.masking)
    if outer.type == _INDIRECT or inner.type == _INDIRECT:
        indirect = outer if outer.type == _INDIRECT else inner
        return Transformation(_INDIRECT, indirect.subtype, masking=outer.masking or inner.masking)
    if "AGGREGATION" in (outer.subtype, inner.subtype):
        subtype = "AGGREGATION"
    elif outer.subtype == inner.subtype == "IDENTITY":
        subtype = "IDENTITY"
    else:
        subtype = "TRANSFORMATION"
    return Transformation(_DIRECT, subtype, masking=outer.masking or inner.masking)


def column_lineage(record: Mapping[str, Any]) -> dict[str, set[ColumnSource]]:
    """Each field the record's write outputs, with its source fields and how each reaches it
    (an input without a transformation: DIRECT IDENTITY, what our client's operations mean)."""
    operations = {op["id"]: op for op in record["operations"]}
    answer: dict[str, set[ColumnSource]] = {}
    for write in (op for op in record["operations"] if op["type"] == "write"):
        fields = [item.get("field", "") for item in write["inputs"]]
        for field in dict.fromkeys(write["outputs"]):
            found = answer.setdefault(field, set())
            for index in written_positions(fields, write["outputs"], field):
                _walk(operations, write["inputs"][index], IDENTITY, found)
    return answer


def _walk(operations: Mapping[str, Mapping[str, Any]], item: Mapping[str, Any], how: Transformation,
          found: set[ColumnSource]) -> None:
    if "origin" not in item:  # a source dataset given directly (our client's shorthand)
        return
    operation = operations[item["origin"]]
    if operation["type"] == "read":
        for inner in operation["inputs"]:
            if source := inner.get("source"):
                found.add(ColumnSource(source.get("namespace", ""), source["name"], item["field"], how.type,
                                       how.subtype or "", how.masking))
        return
    for inner in operation["inputs"]:
        raw = inner.get("transformation") or {"type": _DIRECT, "subtype": "IDENTITY"}
        step = Transformation(raw["type"], raw.get("subtype"), masking=bool(raw.get("masking")))
        _walk(operations, inner, compose(how, step), found)

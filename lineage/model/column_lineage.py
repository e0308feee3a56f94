"""A field-operations record read as OpenLineage's column lineage: for each written field, the
source fields it comes from and how, the transformations on the way composed into one.

A record says step by step how a field was made (read, transforms, write); the ``columnLineage``
facet says only where each output field comes from and how (DIRECT IDENTITY / TRANSFORMATION /
AGGREGATION, INDIRECT JOIN / FILTER / GROUP_BY / SORT / WINDOW / CONDITIONAL). ``compose``
folds the steps of one path into that answer: a chain of identities is an identity, an
aggregation anywhere on a direct chain makes it an aggregation, any other direct step a
transformation, and an indirect step makes the whole chain indirect with that step's subtype.
Through two indirect steps, the outer kind, unless the outer is a per-column one (a CASE's test,
a window's keys) and the inner a dataset-wide one (filter, join, grouping, sort), which is kept.
Masking sticks once set.

Every (source field, transformation) pair that reaches a field is kept: a source used as a
value and as a condition (``CASE WHEN b > 0 THEN b ...``) is there twice, once DIRECT and once
INDIRECT CONDITIONAL.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from lineage.model.field_paths import FieldRecord, FieldRef, SourceRef, Transformation, normalize, written_inputs
from lineage.model.metadata_entity import dataset_entity, entity

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
    dataset_type: str = "dataset"  # the source dataset's: dataset or stream


def compose(outer: Transformation, inner: Transformation) -> Transformation:
    """How a source reaches a field through an intermediate one: ``inner`` is the step nearer
    the source, ``outer`` the rest of the way."""
    if outer.type == _INDIRECT and inner.type == _INDIRECT:
        # a condition of one column (a CASE's test, a window's keys) over an input that decided the
        # rows of the whole intermediate keeps that input's kind: rank() over (order by
        # sum(amount)) of a GROUP BY person leaves person GROUP_BY; otherwise the outer kind: a
        # filter on a column makes every input of it a FILTER input (where rn = 1), a CASE inside
        # a window's order key is a WINDOW input
        subtype = inner.subtype if outer.subtype in PER_COLUMN and inner.subtype not in PER_COLUMN else outer.subtype
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


def column_lineage(record: Mapping[str, Any], namespace: str = "") -> dict[str, set[ColumnSource]]:
    """Each destination field of the record, with its source fields and how each reaches it (an
    input without a transformation: DIRECT IDENTITY, what our client's operations mean). The
    record is read as the compaction reads it (``normalize``: inputs without an origin resolved,
    destination fields from the writes); InvalidFieldOperationsError when it is malformed. Each
    (operation, field) is composed once, however many paths go through it."""
    return {field: set(sources) for field, sources in described_column_lineage(record, namespace).items()}


def described_column_lineage(record: Mapping[str, Any], namespace: str = ""
                             ) -> dict[str, dict[ColumnSource, tuple[str, ...]]]:
    """``column_lineage``, each source with the names of the transform steps on its ways to the
    field (sorted, once each): a step's transformation description, else its operation's name;
    not a step declared IDENTITY without a description, which passes the value on untouched. What a ``columnLineage``
    facet's transformation ``description`` says (and reads back the same)."""
    return described_record(normalize(record, namespace))


def described_record(checked: FieldRecord) -> dict[str, dict[ColumnSource, tuple[str, ...]]]:
    """``described_column_lineage`` of a checked record."""
    operations = {operation.id: operation for operation in checked.operations}
    Reached = frozenset[tuple[SourceRef, str, Transformation, frozenset[str]]]
    reached: dict[tuple[str, str], Reached] = {}

    def sources(ref: FieldRef) -> Reached:
        """(source, field, how it reaches ``ref``, the operations on the way) for the field ``ref``
        names, as its operation output it."""
        key = (ref.origin, ref.field)
        if key not in reached:
            operation = operations[ref.origin]
            if operation.type == "read":
                reached[key] = frozenset((source, ref.field, IDENTITY, frozenset()) for source in operation.sources)
            else:
                found: set[tuple[SourceRef, str, Transformation, frozenset[str]]] = set()
                inputs = operation.inputs if operation.type != "write" else written_inputs(operation, ref.field)
                for item in inputs:
                    step = item.transformation or IDENTITY
                    step = Transformation(step.type, step.subtype, masking=step.masking)  # kinds, not descriptions
                    # a step declared IDENTITY with nothing said of it passes the value on untouched: its
                    # operation is not named; a step is named by its transformation's description (an
                    # IDENTITY one too: a producer, or our export, said what the step was), else by its
                    # operation
                    declared = item.transformation.description if item.transformation is not None else ""
                    label = declared or operation.name
                    untouched = item.transformation is not None and step == IDENTITY and not declared
                    own = frozenset() if operation.type != "transform" or untouched else frozenset({label})
                    found.update((source, field, compose(step, inner), names | own)
                                 for source, field, inner, names in sources(item))
                reached[key] = frozenset(found)
        return reached[key]

    described: dict[str, dict[ColumnSource, tuple[str, ...]]] = {}
    for field, refs in checked.destination_fields.items():
        names_of: dict[ColumnSource, set[str]] = {}
        for ref in refs:
            for source, source_field, how, names in sources(ref):
                column = ColumnSource(source.namespace, source.name, source_field, how.type, how.subtype or "",
                                      how.masking, source.type)
                names_of.setdefault(column, set()).update(names)
        described[field] = {column: tuple(sorted(names)) for column, names in names_of.items()}
    return described


def field_edges(checked: FieldRecord) -> list[dict[str, Any]]:
    """The record's composed column lineage as rows, one per (source field, destination field,
    kind), with the destination field's metadata entity key: what tag propagation walks and
    search finds operations by (``lineage.field_edges``). Sorted, so a set's rows are the
    same each derivation."""
    destination = checked.destination
    dataset = dataset_entity(destination.namespace, destination.type, destination.name)

    def keys(written: str) -> dict[str, Any]:
        field = entity([*dataset.parts, ("field", written)])
        return {"field_key": field.render(), "field_details": field.to_dict()["details"],
                "dataset_key": dataset.render()}

    rows = [{"namespace": source.namespace, "type": source.dataset_type, "name": source.name,
             "field": source.field, "to": written, "kind": source.type, "subtype": source.subtype,
             "masking": source.masking, "operations": list(names), **keys(written)}
            for written, sources in described_record(checked).items() for source, names in sources.items()]
    return sorted(rows, key=lambda row: (row["namespace"], row["type"], row["name"], row["field"], row["to"],
                                         row["kind"], row["subtype"], row["masking"]))

"""Field-level lineage (the *Field Level Lineage* design): from a run's field operations to one
path per destination field.

A record is what a run reported for one destination dataset: a list of operations, each
with inputs (source datasets or fields) and output fields. ``normalize`` checks it and
resolves every field input to the operation that output it; ``field_paths`` then traces each
destination field back to the source datasets. Both are pure, so the compaction validates with
them and the Spark job computes paths with them.

Identity: two records with the same operations, inputs, outputs and sources have the same
``fingerprint`` (descriptions are not part of it), so the hourly run of an unchanged pipeline
stores nothing new; the same holds for each field's path.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from lineage.errors import InvalidFieldOperationsError

OPERATION_TYPES = ("read", "transform", "write")


@dataclass(frozen=True)
class SourceRef:
    namespace: str
    type: str
    name: str

    def to_dict(self) -> dict[str, str]:
        return {"namespace": self.namespace, "type": self.type, "name": self.name}


@dataclass(frozen=True)
class Transformation:
    """How an input field reaches an operation's outputs (OpenLineage's column lineage vocabulary):
    DIRECT (IDENTITY, TRANSFORMATION, AGGREGATION) or INDIRECT (JOIN, FILTER, GROUP_BY, SORT,
    WINDOW, CONDITIONAL); ``masking`` when the output does not reveal the input's value."""

    type: str
    subtype: str | None = None
    description: str = ""
    masking: bool = False

    def to_dict(self) -> dict[str, Any]:
        rendered: dict[str, Any] = {"type": self.type, "masking": self.masking}
        if self.subtype:
            rendered["subtype"] = self.subtype
        if self.description:
            rendered["description"] = self.description
        return rendered


@dataclass(frozen=True)
class FieldRef:
    """A field as an operation's input: ``field`` as output by operation ``origin``, and how it
    reaches the outputs when the producer said so."""

    field: str
    origin: str
    transformation: Transformation | None = None

    def to_dict(self) -> dict[str, Any]:
        rendered: dict[str, Any] = {"field": self.field, "origin": self.origin}
        if self.transformation is not None:
            rendered["transformation"] = self.transformation.to_dict()
        return rendered


@dataclass(frozen=True)
class Operation:
    id: str
    type: str
    name: str
    description: str
    sources: tuple[SourceRef, ...]
    inputs: tuple[FieldRef, ...]
    outputs: tuple[str, ...]

    def identity(self) -> dict[str, Any]:
        """What makes two operations the same (the description is not part of it)."""
        return {
            "id": self.id, "type": self.type, "name": self.name,
            "sources": [source.to_dict() for source in self.sources],
            "inputs": [ref.to_dict() for ref in self.inputs],
            "outputs": list(self.outputs),
        }

    def to_dict(self) -> dict[str, Any]:
        rendered = self.identity()
        rendered["description"] = self.description
        return rendered


@dataclass(frozen=True)
class FieldRecord:
    """A checked record: operations in a topological order, and what writes each destination field."""

    destination: SourceRef
    operations: tuple[Operation, ...]
    destination_fields: dict[str, FieldRef]

    @property
    def fingerprint(self) -> str:
        return _digest({
            "destination": self.destination.to_dict(),
            "operations": [operation.identity() for operation in self.operations],
            "fields": {name: [ref.field, ref.origin] for name, ref in sorted(self.destination_fields.items())},
        })

    def descriptions(self) -> dict[str, str]:
        return {operation.id: operation.description for operation in self.operations if operation.description}


@dataclass(frozen=True)
class FieldPath:
    """How one destination field was produced: the operations it depends on, and the source
    fields (read outputs) it starts from."""

    field: str
    origin: str  # the operation that writes the field
    operations: tuple[Operation, ...]
    source_fields: tuple[tuple[SourceRef, str], ...]

    @property
    def fingerprint(self) -> str:
        return path_fingerprint(self.field, self.origin, [operation.identity() for operation in self.operations])

    def to_dict(self) -> dict[str, Any]:
        return {
            "field": self.field,
            "origin": self.origin,
            "fingerprint": self.fingerprint,
            "operations": [operation.identity() for operation in self.operations],
            "sources": [{**source.to_dict(), "field": field} for source, field in self.source_fields],
        }


def path_fingerprint(field: str, origin: str, operations: Sequence[Mapping[str, Any]]) -> str:
    """The fingerprint of the path of ``field`` written by ``origin`` through ``operations``
    (their identities, as a stored path holds them): equal paths, equal fingerprints."""
    return _digest({"field": field, "origin": origin, "operations": list(operations)})


def _digest(value: Any) -> str:
    return hashlib.sha256(orjson.dumps(value, option=orjson.OPT_SORT_KEYS)).hexdigest()


def normalize(payload: Mapping[str, Any], namespace: str) -> FieldRecord:
    """Check a ``field_operations`` payload and resolve it; raises InvalidFieldOperationsError."""
    raw_operations: Sequence[Mapping[str, Any]] = payload.get("operations") or []
    if not raw_operations:
        raise InvalidFieldOperationsError("the operation list is empty")
    destination = _source(payload["destination"], namespace)
    ids = _operation_ids(raw_operations)
    outputs_by_id: dict[str, tuple[str, ...]] = {}
    operations: list[Operation] = []
    latest_output: dict[str, str] = {}  # field -> id of the latest operation that output it so far
    for raw, op_id in zip(raw_operations, ids, strict=True):
        sources = tuple(_source(item["source"], namespace) for item in raw.get("inputs", []) if "source" in item)
        declared = raw.get("type")
        op_type = declared or ("read" if sources else "transform")
        if op_type not in OPERATION_TYPES:
            raise InvalidFieldOperationsError(
                f"operation {op_id!r}: type {op_type!r} is not one of {', '.join(OPERATION_TYPES)}")
        if op_type == "read" and not sources:
            raise InvalidFieldOperationsError(f"read operation {op_id!r} names no source dataset")
        if op_type != "read" and sources:
            raise InvalidFieldOperationsError(f"{op_type} operation {op_id!r} has a source input; only reads do")
        inputs = []
        for item in raw.get("inputs", []):
            if "field" not in item:
                continue
            field, origin = item["field"], item.get("origin")
            if origin is None:
                origin = latest_output.get(field)
                if origin is None:
                    raise InvalidFieldOperationsError(
                        f"operation {op_id!r}: input field {field!r} is output by no earlier operation")
            elif origin not in ids:
                raise InvalidFieldOperationsError(f"operation {op_id!r}: origin {origin!r} names no operation")
            inputs.append(FieldRef(field, origin, _transformation(item.get("transformation"))))
        outputs = tuple(raw.get("outputs", []))
        if op_type == "write" and not outputs:
            outputs = tuple(ref.field for ref in inputs)  # a write keeps the names of what it writes
        operations.append(Operation(op_id, op_type, raw["name"], raw.get("description", ""), sources,
                                    tuple(inputs), outputs))
        outputs_by_id[op_id] = outputs
        for field in outputs:
            latest_output[field] = op_id
    for operation in operations:
        for ref in operation.inputs:
            if ref.field not in outputs_by_id[ref.origin]:
                raise InvalidFieldOperationsError(f"operation {operation.id!r}: input field {ref.field!r} "
                                                  f"is not an output of its origin {ref.origin!r}")
    if not any(operation.type == "read" for operation in operations):
        raise InvalidFieldOperationsError("there is no read operation: a path must start at a source dataset")
    ordered = _topological(operations)
    destination_fields = _destination_fields(operations, payload.get("destination_fields"), latest_output)
    if not destination_fields:
        raise InvalidFieldOperationsError(
            "no field reaches the destination: add a write operation or list destination_fields")
    return FieldRecord(destination, ordered, destination_fields)


def _transformation(raw: Mapping[str, Any] | None) -> Transformation | None:
    if not raw:
        return None
    return Transformation(raw["type"], raw.get("subtype"), raw.get("description", ""), raw.get("masking", False))


def _source(ref: Mapping[str, Any], namespace: str) -> SourceRef:
    return SourceRef(ref.get("namespace") or namespace, ref.get("type", "dataset"), ref["name"])


def _operation_ids(raw_operations: Sequence[Mapping[str, Any]]) -> list[str]:
    """Each operation's id: its own, else its name when unique, else ``name#n`` (n-th of that name)."""
    explicit = [raw["id"] for raw in raw_operations if raw.get("id")]
    repeated = sorted(op_id for op_id, count in Counter(explicit).items() if count > 1)
    if repeated:
        raise InvalidFieldOperationsError(f"operation id {repeated[0]!r} is used more than once")
    names = Counter(raw["name"] for raw in raw_operations if not raw.get("id"))
    seen: Counter[str] = Counter()
    ids = []
    for raw in raw_operations:
        if raw.get("id"):
            ids.append(raw["id"])
            continue
        seen[raw["name"]] += 1
        ids.append(raw["name"] if names[raw["name"]] == 1 else f"{raw['name']}#{seen[raw['name']]}")
    clashes = sorted(op_id for op_id, count in Counter(ids).items() if count > 1)
    if clashes:
        raise InvalidFieldOperationsError(f"operation id {clashes[0]!r} is used more than once")
    return ids


def _topological(operations: list[Operation]) -> tuple[Operation, ...]:
    """Operations with every origin before its consumers, ties kept in record order; a cycle fails."""
    position = {operation.id: index for index, operation in enumerate(operations)}
    waiting = {operation.id: {ref.origin for ref in operation.inputs} for operation in operations}
    ordered: list[Operation] = []
    done: set[str] = set()
    while len(ordered) < len(operations):
        ready = [op for op in operations if op.id not in done and waiting[op.id] <= done]
        if not ready:
            stuck = sorted((op.id for op in operations if op.id not in done), key=position.__getitem__)
            raise InvalidFieldOperationsError(f"the operations form a cycle through {', '.join(map(repr, stuck))}")
        ordered.append(ready[0])
        done.add(ready[0].id)
    return tuple(ordered)


def _destination_fields(operations: list[Operation], listed: Sequence[str] | None,
                        latest_output: Mapping[str, str]) -> dict[str, FieldRef]:
    writes = [operation for operation in operations if operation.type == "write"]
    if writes:
        return {field: FieldRef(field, write.id) for write in writes for field in write.outputs}
    fields: dict[str, FieldRef] = {}
    for field in listed or []:
        origin = latest_output.get(field)
        if origin is None:
            raise InvalidFieldOperationsError(f"destination field {field!r} is output by no operation")
        fields[field] = FieldRef(field, origin)
    return fields


def field_paths(record: FieldRecord) -> list[FieldPath]:
    """One path per destination field, fields in name order, operations in the record's topological order.

    A write that writes several fields appears in each field's path with only that field: its
    input of the same position (or name) and that output.
    """
    rank = {operation.id: index for index, operation in enumerate(record.operations)}
    paths = []
    for field, ref in sorted(record.destination_fields.items()):
        by_id = {operation.id: operation for operation in record.operations}
        if by_id[ref.origin].type == "write":
            by_id[ref.origin] = _write_of(by_id[ref.origin], field)
        needed: set[str] = set()
        sources: set[tuple[SourceRef, str]] = set()
        stack = [ref]
        while stack:
            current = stack.pop()
            operation = by_id[current.origin]
            if operation.type == "read":
                sources.update((source, current.field) for source in operation.sources)
            if operation.id in needed:
                continue
            needed.add(operation.id)
            stack.extend(operation.inputs)
        paths.append(FieldPath(
            field=field,
            origin=ref.origin,
            operations=tuple(sorted((by_id[op_id] for op_id in needed), key=lambda op: rank[op.id])),
            source_fields=tuple(sorted(sources, key=lambda item: (item[0].namespace, item[0].name, item[1]))),
        ))
    return paths


def _write_of(write: Operation, field: str) -> Operation:
    """``write`` narrowed to the one destination ``field``."""
    if len(write.inputs) == len(write.outputs):
        inputs = tuple(ref for ref, output in zip(write.inputs, write.outputs, strict=True) if output == field)
    else:
        inputs = tuple(ref for ref in write.inputs if ref.field == field) or write.inputs
    return Operation(write.id, write.type, write.name, write.description, (), inputs, (field,))

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

Nothing recorded is lost: several writes of one destination field union their paths (the
field has one origin per write), and, as CDAP does, an input its origin does not list among
its outputs is accepted with a warning (taken as derived from the origin's own inputs, or as
read from its source) instead of refusing the record.
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
DERIVATION = 4  # 4: a step declared IDENTITY with a description is named by it (column lineage round trip)
"""The version of what is derived from a record (paths, source field flows, field edges, warnings): a stored
operation set derived by an older version is derived again by the next field lineage job."""


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
class RecordWarning:
    """What a record was accepted with but should not have had, on the operation it concerns."""

    operation: str
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"operation": self.operation, "message": self.message}


@dataclass(frozen=True)
class FieldRecord:
    """A checked record: operations in a topological order, what writes each destination field
    (one ref per write of it), and the warnings it was accepted with."""

    destination: SourceRef
    operations: tuple[Operation, ...]
    destination_fields: dict[str, tuple[FieldRef, ...]]
    warnings: tuple[RecordWarning, ...] = ()

    @property
    def fingerprint(self) -> str:
        # The operations determine the destination fields; the latest write of each field stays
        # in the identity as before, so records stored before several writes were unioned keep
        # their fingerprints (and are derived again, not stored twice).
        return digest({
            "destination": self.destination.to_dict(),
            "operations": [operation.identity() for operation in self.operations],
            "fields": {name: [refs[-1].field, refs[-1].origin]
                       for name, refs in sorted(self.destination_fields.items())},
        })

    def descriptions(self) -> dict[str, str]:
        return {operation.id: operation.description for operation in self.operations if operation.description}


@dataclass(frozen=True)
class FieldPath:
    """How one destination field was produced: the operations it depends on, and the source
    fields (read outputs) it starts from."""

    field: str
    origins: tuple[str, ...]  # the operations that write the field (several writes: several)
    operations: tuple[Operation, ...]
    source_fields: tuple[tuple[SourceRef, str], ...]
    warnings: tuple[RecordWarning, ...] = ()

    @property
    def origin(self) -> str:
        return self.origins[0]

    @property
    def fingerprint(self) -> str:
        return path_fingerprint(self.field, self.origins, [operation.identity() for operation in self.operations])

    def to_dict(self) -> dict[str, Any]:
        rendered: dict[str, Any] = {
            "field": self.field,
            "origin": self.origin,
            "fingerprint": self.fingerprint,
            "operations": [operation.identity() for operation in self.operations],
            "sources": [{**source.to_dict(), "field": field} for source, field in self.source_fields],
        }
        if len(self.origins) > 1:
            rendered["origins"] = list(self.origins)
        if self.warnings:
            rendered["warnings"] = [warning.to_dict() for warning in self.warnings]
        return rendered


def path_origins(path: Mapping[str, Any]) -> list[str]:
    """The operations that write a stored path's field (``origins``, else its one ``origin``)."""
    origins: list[str] = path.get("origins") or [path["origin"]]
    return origins


def path_fingerprint(field: str, origin: str | Sequence[str], operations: Sequence[Mapping[str, Any]]) -> str:
    """The fingerprint of the path of ``field`` written by ``origin`` (one operation id, or the
    ids of its several writes) through ``operations`` (their identities, as a stored path holds
    them): equal paths, equal fingerprints. A path with one write keeps the fingerprint it had
    before several writes were unioned."""
    written_by: str | list[str] = origin if isinstance(origin, str) else (
        origin[0] if len(origin) == 1 else list(origin))
    return digest({"field": field, "origin": written_by, "operations": list(operations)})


def digest(value: Any) -> str:
    """SHA-256 of ``value`` as canonical JSON: the fingerprints of records, paths and flows."""
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
    if not any(operation.type == "read" for operation in operations):
        raise InvalidFieldOperationsError(f"there is no read operation among {', '.join(map(repr, ids))}: "
                                          "a path must start at a source dataset")
    ordered = _topological(operations)
    destination_fields = _destination_fields(operations, payload.get("destination_fields"), latest_output)
    if not destination_fields:
        raise InvalidFieldOperationsError(
            f"no field reaches the destination from {', '.join(map(repr, ids))}: "
            "add a write operation or list destination_fields")
    return FieldRecord(destination, ordered, destination_fields, _lenient_inputs(ordered, outputs_by_id))


def _lenient_inputs(operations: Sequence[Operation], outputs_by_id: Mapping[str, tuple[str, ...]]
                    ) -> tuple[RecordWarning, ...]:
    """A warning per input its origin does not list among its outputs: CDAP accepts such an
    input, and so do we (the field is taken as derived from the origin's inputs, or read from
    its source), keeping the warning with the record."""
    kinds = {operation.id: operation.type for operation in operations}
    warnings = []
    for operation in operations:
        for ref in operation.inputs:
            if ref.field not in outputs_by_id[ref.origin]:
                taken = "read by" if kinds[ref.origin] == "read" else "output by"
                warnings.append(RecordWarning(operation.id, f"input field {ref.field!r} is not an output of its "
                                                            f"origin {ref.origin!r}; taken as {taken} {ref.origin!r}"))
    return tuple(warnings)


def _transformation(raw: Mapping[str, Any] | None) -> Transformation | None:
    if not raw:
        return None
    return Transformation(raw["type"], raw.get("subtype"), raw.get("description", ""), raw.get("masking", False))


def stored_record(destination: Mapping[str, str], operations: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A record as it was checked, from what an operation set stores of it (its destination and
    its operations' ``identity()``): ``normalize`` reads it back to the same operations."""
    rebuilt = [{"id": op["id"], "type": op["type"], "name": op["name"], "description": op.get("description", ""),
                "inputs": [*({"source": source} for source in op.get("sources") or []), *(op.get("inputs") or [])],
                "outputs": list(op.get("outputs") or [])} for op in operations]
    return {"destination": dict(destination), "operations": rebuilt}


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
                        latest_output: Mapping[str, str]) -> dict[str, tuple[FieldRef, ...]]:
    """Each destination field's writers: every write that writes it (in record order), or, for a
    record without writes, the latest operation that output each listed field."""
    writes = [operation for operation in operations if operation.type == "write"]
    if writes:
        found: dict[str, list[FieldRef]] = {}
        for write in writes:
            for field in dict.fromkeys(write.outputs):
                found.setdefault(field, []).append(FieldRef(field, write.id))
        return {field: tuple(refs) for field, refs in found.items()}
    fields: dict[str, tuple[FieldRef, ...]] = {}
    for field in listed or []:
        origin = latest_output.get(field)
        if origin is None:
            raise InvalidFieldOperationsError(f"destination field {field!r} is output by no operation")
        fields[field] = (FieldRef(field, origin),)
    return fields


def field_paths(record: FieldRecord) -> list[FieldPath]:
    """One path per destination field, fields in name order, operations in the record's topological order.

    A write that writes several fields appears in each field's path with only that field: its
    input of the same position (or name) and that output. A field several writes write has all
    of them in its path, and the sources of each.
    """
    rank = {operation.id: index for index, operation in enumerate(record.operations)}
    paths = []
    for field, refs in sorted(record.destination_fields.items()):
        by_id = {operation.id: operation for operation in record.operations}
        for ref in refs:
            if by_id[ref.origin].type == "write":
                by_id[ref.origin] = _write_of(by_id[ref.origin], field)
        needed: set[str] = set()
        sources: set[tuple[SourceRef, str]] = set()
        stack = list(refs)
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
            origins=tuple(ref.origin for ref in refs),
            operations=tuple(sorted((by_id[op_id] for op_id in needed), key=lambda op: rank[op.id])),
            source_fields=tuple(sorted(sources, key=lambda item: (item[0].namespace, item[0].name, item[1]))),
            warnings=tuple(warning for warning in record.warnings if warning.operation in needed),
        ))
    return paths


def written_positions(input_fields: Sequence[str], outputs: Sequence[str], field: str) -> list[int]:
    """The positions of a write's inputs that become the destination ``field``: the input of the
    same position when inputs and outputs pair up, else the inputs of that name, else all."""
    if len(input_fields) == len(outputs):
        return [index for index, output in enumerate(outputs) if output == field]
    return [index for index, name in enumerate(input_fields) if name == field] or list(range(len(input_fields)))


def written_inputs(write: Operation, field: str) -> tuple[FieldRef, ...]:
    """The inputs of ``write`` that become the destination ``field`` (``written_positions``)."""
    return tuple(write.inputs[index]
                 for index in written_positions([ref.field for ref in write.inputs], write.outputs, field))


def path_operations(set_operations: Mapping[str, Mapping[str, Any]], operation_ids: Sequence[str], field: str
                    ) -> list[Mapping[str, Any]]:
    """A stored path's operations rebuilt from its operation set's (id -> identity) and the ids
    the path holds: each as the set has it, a write narrowed to ``field`` as ``field_paths`` does."""
    rebuilt: list[Mapping[str, Any]] = []
    for op_id in operation_ids:
        operation = set_operations[op_id]
        if operation["type"] == "write":
            inputs = operation["inputs"]
            kept = [inputs[i] for i in written_positions([item["field"] for item in inputs], operation["outputs"],
                                                           field)]
            operation = {**operation, "sources": [], "inputs": kept, "outputs": [field]}
        rebuilt.append(operation)
    return rebuilt


def _write_of(write: Operation, field: str) -> Operation:
    """``write`` narrowed to the one destination ``field``."""
    return Operation(write.id, write.type, write.name, write.description, (), written_inputs(write, field), (field,))

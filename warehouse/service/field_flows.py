"""Where each source field of a record goes (impact, FLL-1, inside one record): the destination
fields its values reach, the drops that end it, and the operations it goes through up to them.

A source field is a field a read operation outputs (or, leniently, one an operation takes from
a read that does not list it). From it the walk goes forward: an operation that takes the field
passes it to each of its outputs (every output of an operation depends on all its inputs, the
rule ``field_paths`` walks backward); a write ends it at the destination field that input
becomes; a transform with no outputs that nothing reads **drops** it. A source field that
reaches neither says so (``reachesNothing``): it was read and went nowhere.

Flows are derived once per distinct operation set, as paths are, and stored per source field.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lineage.model.field_paths import FieldRecord, FieldRef, Operation, SourceRef, digest, written_inputs


@dataclass(frozen=True)
class SourceFieldFlow:
    """Where ``field`` of ``source`` goes in one record."""

    source: SourceRef
    field: str
    operations: tuple[Operation, ...]  # record order: its reads, then what it went through
    destination_fields: tuple[str, ...]
    drops: tuple[str, ...]  # ids of the operations that dropped it

    @property
    def fingerprint(self) -> str:
        return digest({"source": self.source.to_dict(), "field": self.field,
                        "operations": [operation.identity() for operation in self.operations],
                        "destinationFields": list(self.destination_fields), "drops": list(self.drops)})

    def to_dict(self) -> dict[str, Any]:
        return {**self.source.to_dict(), "field": self.field, "fingerprint": self.fingerprint,
                "operations": [operation.identity() for operation in self.operations],
                "destinationFields": list(self.destination_fields), "drops": list(self.drops)}


def source_field_flows(record: FieldRecord) -> list[SourceFieldFlow]:
    """One flow per source field of ``record`` (sources and fields in name order)."""
    rank = {operation.id: index for index, operation in enumerate(record.operations)}
    consumers: dict[tuple[str, str], list[Operation]] = {}
    taken: dict[str, dict[str, None]] = {}  # origin -> fields others take from it (listed or not)
    for operation in record.operations:
        for ref in operation.inputs:
            consumers.setdefault((ref.field, ref.origin), []).append(operation)
            taken.setdefault(ref.origin, {})[ref.field] = None
    unwritten = {(ref.field, ref.origin): name for name, refs in record.destination_fields.items()
                 for ref in refs if _kind(record, ref) != "write"}  # records without writes

    writes = {operation.id: _written_as(operation) for operation in record.operations if operation.type == "write"}

    def outputs(operation: Operation) -> list[str]:
        return list(dict.fromkeys([*operation.outputs, *taken.get(operation.id, {})]))

    found: dict[tuple[SourceRef, str], tuple[set[str], set[str], set[str]]] = {}
    for read in (operation for operation in record.operations if operation.type == "read"):
        for field in outputs(read):
            needed, reached, drops = {read.id}, set(), set()
            stack, seen = [(field, read.id)], set()
            while stack:
                node = stack.pop()
                if node in seen:
                    continue
                seen.add(node)
                if node in unwritten:
                    reached.add(unwritten[node])
                for consumer in consumers.get(node, []):
                    needed.add(consumer.id)
                    if consumer.type == "write":
                        reached.update(writes[consumer.id].get(node, ()))
                    elif not outputs(consumer):
                        drops.add(consumer.id)
                    else:
                        stack.extend((output, consumer.id) for output in outputs(consumer))
            for source in read.sources:
                known = found.setdefault((source, field), (set(), set(), set()))
                known[0].update(needed)
                known[1].update(reached)
                known[2].update(drops)
    by_id = {operation.id: operation for operation in record.operations}
    return [SourceFieldFlow(source, field, tuple(by_id[op_id] for op_id in sorted(needed, key=rank.__getitem__)),
                            tuple(sorted(reached)), tuple(sorted(drops, key=rank.__getitem__)))
            for (source, field), (needed, reached, drops) in sorted(
                found.items(), key=lambda item: (item[0][0].namespace, item[0][0].name, item[0][1]))]


def _kind(record: FieldRecord, ref: FieldRef) -> str:
    return next(operation.type for operation in record.operations if operation.id == ref.origin)


def _written_as(write: Operation) -> dict[tuple[str, str], list[str]]:
    """Input (field, origin) of ``write`` -> the destination fields it becomes (``written_inputs`` inverted)."""
    targets: dict[tuple[str, str], list[str]] = {}
    for output in dict.fromkeys(write.outputs):
        for ref in written_inputs(write, output):
            targets.setdefault((ref.field, ref.origin), []).append(output)
    return targets

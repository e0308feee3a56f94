"""Reading captured field-operations records in tests: a written field's sources composed along
its path (``lineage.model.column_lineage``, the column lineage facet's reading of a step-by-step
record), and the operation that made it."""

from __future__ import annotations

from typing import Any

from lineage.model.column_lineage import column_lineage

Source = tuple[str, str, str, str]  # (source dataset's last name part, source field, type, subtype)


def short(name: str) -> str:
    return name.rsplit("/", 1)[-1].rsplit(".", 1)[-1]


def _written(record: dict[str, Any], field: str) -> dict[str, Any]:
    write = next(op for op in record["operations"] if op["type"] == "write")
    found: dict[str, Any] = write["inputs"][write["outputs"].index(field)]
    return found


def column_sources(record: dict[str, Any], field: str) -> set[Source]:
    """Each source field of the written ``field`` and how it reaches it: the transformations on
    the way, from the write back to the reads, combined (a pass-through column: DIRECT IDENTITY)."""
    return {(short(source.name), source.field, source.type, source.subtype)
            for source in column_lineage(record)[field]}


def made_by(record: dict[str, Any], field: str) -> tuple[str, str]:
    """(name, description) of the operation the write takes ``field`` from ("read" when the
    column is passed through from a source as is)."""
    origin = _written(record, field)["origin"]
    operation = next(op for op in record["operations"] if op["id"] == origin)
    return operation["name"], operation.get("description", "")


def steps(record: dict[str, Any], field: str) -> list[str]:
    """The names of the transform operations on ``field``'s path, in the record's order."""
    operations = {op["id"]: op for op in record["operations"]}
    needed: set[str] = set()
    stack = [_written(record, field)]
    while stack:
        item = stack.pop()
        if item["origin"] not in needed:
            needed.add(item["origin"])
            stack.extend(inner for inner in operations[item["origin"]]["inputs"] if "origin" in inner)
    return [op["name"] for op in record["operations"] if op["id"] in needed and op["type"] == "transform"]

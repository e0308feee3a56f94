"""What changed in a dataset's lineage: two windows' walks compared.

The walk of each window is the design's (``lineage_graph.walk_lineage``), so each side is the
graph a lineage answer of that window gives. Every relation (a program's access to a data), every
program and every data of either side is ``added`` (in the window only), ``removed`` (in the
base only) or ``unchanged`` (in both), with its runs counted on each side (``RunSpan``: how many,
first and last run time, the newest run). ``changed_only`` keeps the added and removed relations
and nodes, and the nodes the kept relations join (so the graph can be drawn), each marked with
its own change.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from lineage.model.dataset_schema import DatasetSchema, schema_changes
from warehouse.service.lineage_graph import DataRef, ProgramRef, Relation, RunSpan, node_entries, span_fields

Change = Literal["added", "removed", "unchanged"]
CHANGES: tuple[Change, ...] = ("added", "removed", "unchanged")

_Key = tuple[str, str, str]  # (data id, program id, access)


@dataclass(frozen=True)
class RelationChange:
    """One relation compared: its side in the window and in the base (None: not there)."""

    data: DataRef
    program: ProgramRef
    access: str
    current: RunSpan | None
    base: RunSpan | None
    in_current: bool
    in_base: bool

    @property
    def change(self) -> Change:
        return change_of(self.in_current, self.in_base)


def change_of(in_current: bool, in_base: bool) -> Change:
    if in_current and in_base:
        return "unchanged"
    return "added" if in_current else "removed"


def _by_key(relations: Iterable[Relation]) -> dict[_Key, Relation]:
    """The walk gives one relation per (data, program, access)."""
    return {(relation.data.id, relation.program.id, relation.access): relation for relation in relations}


def compare(current: Sequence[Relation], base: Sequence[Relation]) -> list[RelationChange]:
    """Each relation of either side, compared, in a stable order (data id, program id, access)."""
    now, before = _by_key(current), _by_key(base)
    changes = []
    for key in sorted(now.keys() | before.keys()):
        relation = now.get(key) or before[key]
        changes.append(RelationChange(
            relation.data, relation.program, relation.access,
            now[key].span if key in now else None, before[key].span if key in before else None,
            key in now, key in before))
    return changes


def _side(span: RunSpan | None, present: bool) -> dict[str, Any] | None:
    return span_fields(span) if present else None


def diff_response(windows: dict[str, int], changes: Sequence[RelationChange], *, changed_only: bool = False,
                  schemas: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """The diff's JSON: ``windows`` (start, end, baseStart, baseEnd), ``summary`` (counts of
    added, removed and unchanged relations, programs and data), ``relations`` (each with its
    ``change`` and its runs on each side, ``current`` and ``base``, null where absent), the
    ``programs`` and ``data`` they join, each with its ``change``, and ``schemas``: by data id,
    the schema changes (``schema_change``) of the data shown whose schema changed."""
    program_sides = _node_sides((c.program.id, c.in_current, c.in_base) for c in changes)
    data_sides = _node_sides((c.data.id, c.in_current, c.in_base) for c in changes)
    program_change = {key: change_of(*sides) for key, sides in program_sides.items()}
    data_change = {key: change_of(*sides) for key, sides in data_sides.items()}
    shown = [c for c in changes if not changed_only or c.change != "unchanged"]
    if changed_only:  # the changed nodes, and those a changed relation joins
        shown_programs = {c.program.id for c in shown} | {k for k, ch in program_change.items() if ch != "unchanged"}
        shown_data = {c.data.id for c in shown} | {k for k, ch in data_change.items() if ch != "unchanged"}
    else:
        shown_programs, shown_data = set(program_change), set(data_change)
    everything = [Relation(c.data, c.program, c.access, ()) for c in changes]
    programs, data = node_entries(everything)
    return {
        **windows,
        "summary": {
            "relations": _counts(c.change for c in changes),
            "schemas": len(schemas or {}),
            "programs": _counts(program_change.values()),
            "data": _counts(data_change.values()),
        },
        "relations": [
            {"data": c.data.id, "program": c.program.id, "access": c.access, "change": c.change,
             "current": _side(c.current, c.in_current), "base": _side(c.base, c.in_base)}
            for c in shown
        ],
        "programs": {key: {**entry, "change": program_change[key]}
                     for key, entry in programs.items() if key in shown_programs},
        "data": {key: {**entry, "change": data_change[key]} for key, entry in data.items() if key in shown_data},
        "schemas": {key: change for key, change in sorted((schemas or {}).items()) if key in shown_data},
    }


def schema_change(base: tuple[int, DatasetSchema] | None, current: tuple[int, DatasetSchema] | None
                  ) -> dict[str, Any] | None:
    """A dataset's schema at the end of the base window against at the end of the window, as
    (version, schema) or None (no schema yet): None when the version is the same, else both
    versions and the fields added, removed, retyped (a first schema adds every field)."""
    if (base and base[0]) == (current and current[0]):
        return None
    before = base[1] if base else DatasetSchema(())
    after = current[1] if current else DatasetSchema(())
    return {"baseVersion": base[0] if base else None, "currentVersion": current[0] if current else None,
            **schema_changes(before, after).to_dict()}


def _node_sides(rows: Iterable[tuple[str, bool, bool]]) -> dict[str, tuple[bool, bool]]:
    sides: dict[str, tuple[bool, bool]] = {}
    for key, in_current, in_base in rows:
        was_current, was_base = sides.get(key, (False, False))
        sides[key] = (was_current or in_current, was_base or in_base)
    return sides


def _counts(changes: Iterable[Change]) -> dict[str, int]:
    counts: dict[str, int] = dict.fromkeys(CHANGES, 0)
    for change in changes:
        counts[change] += 1
    return counts

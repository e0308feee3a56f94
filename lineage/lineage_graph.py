"""Dataset lineage as seed 001 shapes it: relations grouped with their runs, plus id maps.

The walk itself runs in the warehouse (one query per level over the whole frontier); this
module turns the access rows it found into the response: it drops an ``unknown`` access when
the same (data, program, run) has a known one, groups relations, and applies ``collapse``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from lineage.errors import LineageError

COLLAPSE_TYPES = ("access", "run", "component")


class InvalidLineageRequestError(LineageError, ValueError):
    """A lineage parameter (levels, collapse) is out of range."""


@dataclass(frozen=True)
class DataRef:
    namespace: str
    type: str  # dataset | stream
    name: str

    @property
    def id(self) -> str:
        return f"{self.type}.{self.namespace}.{self.name}"


@dataclass(frozen=True)
class ProgramRef:
    namespace: str
    application: str
    type: str
    name: str

    @property
    def id(self) -> str:
        return f"{self.type}.{self.namespace}.{self.application}.{self.name}"


@dataclass(frozen=True)
class Access:
    """One access row: a run of ``program`` accessed ``data``."""

    data: DataRef
    program: ProgramRef
    run_id: str
    access: str
    component: str = ""


def parse_collapse(values: Iterable[str]) -> frozenset[str]:
    chosen = frozenset(value.strip().lower() for value in values if value.strip())
    unknown = sorted(chosen - set(COLLAPSE_TYPES))
    if unknown:
        raise InvalidLineageRequestError(f"collapse {unknown[0]!r} is not one of {', '.join(COLLAPSE_TYPES)}")
    return chosen


def check_levels(levels: int) -> int:
    if not 1 <= levels <= 100:
        raise InvalidLineageRequestError(f"levels must be between 1 and 100, got {levels}")
    return levels


def drop_shadowed_unknown(accesses: Iterable[Access]) -> list[Access]:
    """Drop ``unknown`` accesses where the same (data, program, run) has a known access."""
    rows = list(accesses)
    known = {(a.data, a.program, a.run_id) for a in rows if a.access != "unknown"}
    return [a for a in rows if a.access != "unknown" or (a.data, a.program, a.run_id) not in known]


def build_relations(accesses: Iterable[Access], collapse: frozenset[str] = frozenset()) -> list[dict[str, Any]]:
    """Group accesses into relations, in a stable order.

    Without ``collapse``: one relation per (data, program, access) with its runs and components.
    ``collapse=access`` merges the access types of a (data, program) into one relation;
    ``run`` / ``component`` are already merged by default and are accepted for compatibility.
    """
    groups: dict[tuple[str, ...], dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for access in drop_shadowed_unknown(accesses):
        key = (access.data.id, access.program.id) + (() if "access" in collapse else (access.access,))
        group = groups[key]
        group["access"].add(access.access)
        group["runs"].add(access.run_id)
        if access.component:
            group["components"].add(access.component)
    relations = []
    for key in sorted(groups):
        group = groups[key]
        relations.append({
            "data": key[0],
            "program": key[1],
            "access": ",".join(sorted(group["access"])) if "access" in collapse else key[2],
            "runs": sorted(group["runs"]),
            "components": sorted(group["components"]),
        })
    return relations


def lineage_response(
    start: int, end: int, accesses: Iterable[Access], collapse: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """Seed 001's lineage output JSON: ``start``, ``end``, ``relations``, ``programs``, ``data``."""
    rows = list(accesses)
    programs: Mapping[str, ProgramRef] = {a.program.id: a.program for a in rows}
    data: Mapping[str, DataRef] = {a.data.id: a.data for a in rows}
    return {
        "start": start,
        "end": end,
        "relations": build_relations(rows, collapse),
        "programs": {
            key: {"id": {"namespace": p.namespace, "application": p.application, "type": p.type, "id": p.name}}
            for key, p in sorted(programs.items())
        },
        "data": {
            key: {"id": {"namespace": d.namespace, "type": d.type, "id": d.name}} for key, d in sorted(data.items())
        },
    }

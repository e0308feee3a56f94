"""What changed in a field's lineage: two windows' field lineage answers compared.

Each side is the answer the field lineage endpoint gives for its window
(``field_lineage_response.field_lineage``, levels 1). Incoming, the source fields the field was
computed from are ``added``, ``removed`` or ``unchanged``; outgoing, the fields computed from it
(``reached``). For each distinct path (an operation set's path, by fingerprint) the answer says
whether it is ``new`` (only in the window), ``gone`` (only in the base) or ``unchanged``, with its
runs on each side; a gone path is paired with the new path of the same field that replaced it
(the one sharing most of its source fields), and the pair says what differs: operations added
or removed (by name) and inputs whose transformation changed (a field that passed as
DIRECT/IDENTITY and is now masked, or the reverse).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from warehouse.service.field_transformations import distinct_transformations, sort_key

PathChange = Literal["new", "gone", "unchanged"]


def _side(path: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if path is None:
        return None
    return {"runCount": path["runCount"], "firstSeenInSeconds": path["firstSeenInSeconds"],
            "lastSeenInSeconds": path["lastSeenInSeconds"]}


def _source_key(source: Mapping[str, Any]) -> tuple[str, str, str, str]:
    return (source.get("namespace", ""), source.get("type", ""), source.get("name", ""), source.get("field", ""))


def _transformations(path: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Per input field name of the path's operations (but reads, whose inputs are the source
    fields themselves), the distinct transformations it went through (none recorded: none)."""
    found: dict[str, list[dict[str, Any]]] = {}
    for operation in path["operations"]:
        for item in operation.get("inputs") or []:
            if not isinstance(item, Mapping) or "field" not in item:
                continue
            transformation = item.get("transformation")
            found.setdefault(item["field"], [])
            if transformation is not None:
                found[item["field"]].append(dict(transformation))
    return {name: distinct_transformations(items) for name, items in found.items()}


def kind_text(transformation: Mapping[str, Any]) -> str:
    """``DIRECT/IDENTITY``, ``DIRECT/TRANSFORMATION masking``: a transformation as people read it."""
    text = "/".join(str(part) for part in (transformation.get("type"), transformation.get("subtype")) if part)
    return text + (" masking" if transformation.get("masking") else "")


def differences(gone: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """What differs from the ``gone`` path to the ``new`` one that replaced it."""
    before = Counter(operation["name"] for operation in gone["operations"])
    after = Counter(operation["name"] for operation in new["operations"])
    old_kinds, new_kinds = _transformations(gone), _transformations(new)
    changed = []
    for name in sorted(old_kinds.keys() & new_kinds.keys()):
        was, now = old_kinds[name], new_kinds[name]
        if sorted(map(sort_key, was)) != sorted(map(sort_key, now)):
            masked = any(t.get("masking") for t in now) and not any(t.get("masking") for t in was)
            unmasked = any(t.get("masking") for t in was) and not any(t.get("masking") for t in now)
            changed.append({"field": name, "before": was, "after": now,
                            "summary": f"{name}: {', '.join(map(kind_text, was)) or 'none recorded'} -> "
                                       f"{', '.join(map(kind_text, now)) or 'none recorded'}",
                            "masked": masked, "unmasked": unmasked})
    return {"operationsAdded": sorted((after - before).elements()),
            "operationsRemoved": sorted((before - after).elements()),
            "transformationsChanged": changed}


def compare_paths(field: Mapping[str, Any] | None, current: Sequence[Mapping[str, Any]],
                  base: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The paths of one field on both sides, each ``new``, ``gone`` or ``unchanged``; each gone
    path names the new one that replaced it (``replacedBy``) and what differs."""
    now = {path["fingerprint"]: path for path in current}
    before = {path["fingerprint"]: path for path in base}
    fresh = [now[key] for key in now if key not in before]
    answer = []
    for key in list(now) + [key for key in before if key not in now]:
        path = now.get(key) or before[key]
        change: PathChange = "unchanged" if key in now and key in before else "new" if key in now else "gone"
        entry: dict[str, Any] = {
            **({"field": dict(field)} if field is not None else {}),
            "fingerprint": key, "change": change,
            "operations": [operation["name"] for operation in path["operations"]],
            "sources": path["sources"], "current": _side(now.get(key)), "base": _side(before.get(key)),
        }
        if change == "gone" and fresh:
            sources = {_source_key(source) for source in path["sources"]}
            replacement = max(fresh, key=lambda candidate: len(sources & {
                _source_key(source) for source in candidate["sources"]}))
            entry["replacedBy"] = replacement["fingerprint"]
            entry["differences"] = differences(path, replacement)
        answer.append(entry)
    return answer


def _counts(changes: Iterable[str], names: Sequence[str]) -> dict[str, int]:
    counts = dict.fromkeys(names, 0)
    for change in changes:
        counts[change] += 1
    return counts


def _changed(in_current: bool, in_base: bool) -> str:
    return "unchanged" if in_current and in_base else "added" if in_current else "removed"


def _incoming(current: Mapping[str, Any], base: Mapping[str, Any]) -> tuple[list[dict[str, Any]],
                                                                          list[dict[str, Any]]]:
    now = {_source_key(s): s for path in current["paths"] for s in path["sources"]}
    before = {_source_key(s): s for path in base["paths"] for s in path["sources"]}
    nodes = [{**(now.get(key) or before[key]), "change": _changed(key in now, key in before)}
             for key in sorted(now.keys() | before.keys())]
    return nodes, compare_paths(None, current["paths"], base["paths"])


def _outgoing(current: Mapping[str, Any], base: Mapping[str, Any]) -> tuple[list[dict[str, Any]],
                                                                          list[dict[str, Any]]]:
    now = {(item["namespace"], item["dataset"], item["field"]): item for item in current["impacts"]}
    before = {(item["namespace"], item["dataset"], item["field"]): item for item in base["impacts"]}
    keys = sorted(now.keys() | before.keys())
    nodes = [{"namespace": key[0], "dataset": key[1], "field": key[2],
              "level": (now.get(key) or before[key])["level"], "change": _changed(key in now, key in before)}
             for key in keys]
    paths = [path for key in keys for path in compare_paths(
        {"namespace": key[0], "dataset": key[1], "field": key[2]},
        now[key]["paths"] if key in now else [], before[key]["paths"] if key in before else [])]
    return nodes, paths


def field_diff(windows: Mapping[str, int], current: Mapping[str, Any], base: Mapping[str, Any], *,
               changed_only: bool = False) -> dict[str, Any]:
    """The diff of two field lineage answers (same field and direction, levels 1)."""
    direction = current["direction"]
    nodes, paths = (_incoming if direction == "incoming" else _outgoing)(current, base)
    listing = "sources" if direction == "incoming" else "reached"
    return {
        "fieldName": current["fieldName"], "direction": direction, **windows,
        "summary": {listing: _counts((node["change"] for node in nodes), ("added", "removed", "unchanged")),
                    "paths": _counts((path["change"] for path in paths), ("new", "gone", "unchanged")),
                    "masked": sum(1 for path in paths
                                  for item in path.get("differences", {}).get("transformationsChanged", [])
                                  if item["masked"])},
        listing: [node for node in nodes if not changed_only or node["change"] != "unchanged"],
        "paths": [path for path in paths if not changed_only or path["change"] != "unchanged"],
    }

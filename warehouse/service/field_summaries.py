"""CDAP's field lineage answers, rendered from the warehouse's rows (``FieldLineageAdmin`` and
the lineage HTTP handler of cdapio/cdap, same JSON shapes):

- a field's summary (``FieldLineageSummary``): the source fields it comes from (incoming) or
  the destination fields computed from it (outgoing), grouped by dataset;
- a field's operations (``FieldLineageDetails``): per distinct operation set, the operations in
  topological order (read: endpoint in, fields out; transform: fields in and out; write: fields
  in, endpoint out) and the programs that ran it, each once with its latest run, newest first;
- a dataset's summary (``DatasetFieldLineageSummary``): every field's incoming and outgoing
  relations grouped by the other dataset, with that dataset's count of fields with lineage.

Nothing here reads the warehouse: ``warehouse.db.field_lineage_summaries`` answers with rows
(``field_lineage_rows``) and turns the paths and flows among them into ``OperationSet`` values.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from lineage.ids import DataRef
from warehouse.service.field_lineage_rows import FieldKey, ProgramLastRun

Direction = Literal["incoming", "outgoing", "both"]


def dataset_id(namespace: str, dataset: str) -> dict[str, str]:
    """CDAP's ``DatasetId`` as JSON."""
    return {"namespace": namespace, "dataset": dataset, "entity": "DATASET"}


def end_point(namespace: str, name: str, kind: str = "dataset") -> dict[str, str]:
    """CDAP's ``EndPoint`` (namespace, name), with the type of the source or destination."""
    return {"namespace": namespace, "name": name, "type": kind}


def wants(direction: Direction, side: Literal["incoming", "outgoing"]) -> bool:
    return direction in (side, "both")


def datasets_with_fields(fields: Iterable[FieldKey]) -> list[dict[str, Any]]:
    """CDAP's ``DatasetField`` list: fields grouped by dataset, datasets and fields in name order."""
    grouped: dict[tuple[str, str], set[str]] = {}
    for key in fields:
        grouped.setdefault((key.namespace, key.dataset), set()).add(key.field)
    return [{"dataset": dataset_id(*ds), "fields": sorted(names)} for ds, names in sorted(grouped.items())]


def field_summary(direction: Direction, incoming: Iterable[FieldKey], outgoing: Iterable[FieldKey]
                  ) -> dict[str, Any]:
    """A field's ``FieldLineageSummary``; a direction not asked for is absent (CDAP's null)."""
    summary: dict[str, Any] = {}
    if wants(direction, "incoming"):
        summary["incoming"] = datasets_with_fields(incoming)
    if wants(direction, "outgoing"):
        summary["outgoing"] = datasets_with_fields(outgoing)
    return summary


def program_infos(programs: Iterable[ProgramLastRun]) -> list[dict[str, Any]]:
    """CDAP's ``ProgramInfo`` list: each program once with its latest run start (epoch seconds),
    newest first (then by name); ``programs`` may hold a program several times."""
    latest: dict[tuple[str, str, str, str], int] = {}
    for item in programs:
        key = (item.namespace, item.application, item.type, item.program)
        latest[key] = max(latest.get(key, item.last_run_seconds), item.last_run_seconds)
    ordered = sorted(latest.items(), key=lambda entry: (-entry[1], entry[0]))
    return [{"program": {"namespace": ns, "application": app, "type": kind, "program": program, "entity": "PROGRAM"},
             "lastExecutedTimeInSeconds": last} for (ns, app, kind, program), last in ordered]


def operation_info(operation: Mapping[str, Any], description: str, destination: DataRef) -> dict[str, Any]:
    """One stored operation as CDAP's ``FieldOperationInfo``. The operation's id is its name (ids
    are unique in a record, as CDAP's names are, and inputs name their origin by it)."""
    fields_in = [{"origin": item["origin"], "name": item["field"],
                  **({"transformation": item["transformation"]} if "transformation" in item else {})}
                 for item in operation["inputs"]]
    if operation["type"] == "read":
        source = operation["sources"][0]
        inputs: dict[str, Any] = {"endPoint": end_point(source["namespace"], source["name"], source["type"])}
    else:
        inputs = {"fields": fields_in}
    if operation["type"] == "write":
        outputs: dict[str, Any] = {"endPoint": end_point(destination.namespace, destination.name, destination.type)}
    else:
        outputs = {"fields": list(operation["outputs"])}
    return {"name": operation["id"], "description": description, "inputs": inputs, "outputs": outputs,
            "type": operation["type"]}


@dataclass(frozen=True, slots=True, kw_only=True)
class OperationSet:
    """One operation set's operations toward ``destination``, as CDAP's details list them: the
    operations of ``document`` (a stored path or flow, ``field_lineage_rows.PathDocument`` or
    ``FlowDocument``: its ``operations`` in topological order, and ``warnings``), the set's
    descriptions and the programs whose runs recorded it in the window."""

    fingerprint: str  # of the path or flow (of what is shown, when parts are hidden)
    destination: DataRef
    document: Mapping[str, Any]
    descriptions: Mapping[str, str]
    described_at: datetime
    programs: Sequence[ProgramLastRun]
    last_seen: datetime


@dataclass(slots=True)
class _MergedSet:
    first: OperationSet
    latest: OperationSet  # the most recently described: its document and descriptions are shown
    programs: list[ProgramLastRun]
    last_seen: datetime


def operation_sets(rows: Iterable[OperationSet]) -> list[dict[str, Any]]:
    """CDAP's ``ProgramFieldOperationInfo`` list from rows of one direction, one per distinct set
    of operations (rows of one ``fingerprint`` and destination merge their programs; the most
    recently described row gives the descriptions), newest run first."""
    merged: dict[tuple[str, str, str], _MergedSet] = {}
    for row in rows:
        key = (row.destination.namespace, row.destination.name, row.fingerprint)
        entry = merged.get(key)
        if entry is None:
            merged[key] = _MergedSet(row, row, list(row.programs), row.last_seen)
            continue
        entry.programs.extend(row.programs)
        entry.last_seen = max(entry.last_seen, row.last_seen)
        if row.described_at > entry.latest.described_at:
            entry.latest = row
    answer = []
    for _, entry in sorted(merged.items(), key=lambda item: (-item[1].last_seen.timestamp(), item[0])):
        document, descriptions = entry.latest.document, entry.latest.descriptions
        rendered: dict[str, Any] = {
            "programs": program_infos(entry.programs),
            "operations": [operation_info(operation, descriptions.get(operation["id"], ""), entry.first.destination)
                           for operation in document["operations"]]}
        if document.get("warnings"):
            rendered["warnings"] = document["warnings"]
        answer.append(rendered)
    return answer


def dataset_summary(direction: Direction, start: int, end: int, key: tuple[str, str], fields: Sequence[str],
                    incoming: Iterable[tuple[FieldKey, str]], outgoing: Iterable[tuple[str, FieldKey]],
                    field_counts: Mapping[tuple[str, str], int]) -> dict[str, Any]:
    """CDAP's ``DatasetFieldLineageSummary`` of dataset ``key``: its ``fields``; ``incoming``
    (source field, this dataset's field) and ``outgoing`` (this dataset's field, destination
    field) relations grouped by the other dataset, each with its count of fields with lineage.
    ``start``/``end`` are epoch seconds; CDAP's ``start-ts``/``end-ts`` are milliseconds."""
    def grouped(pairs: Iterable[tuple[tuple[str, str], str, str]]) -> list[dict[str, Any]]:
        relations: dict[tuple[str, str], set[tuple[str, str]]] = {}
        for other, source, destination in pairs:
            relations.setdefault(other, set()).add((source, destination))
        return [{"entityId": dataset_id(*other), "fieldCount": field_counts.get(other, 0),
                 "relations": [{"source": source, "destination": destination} for source, destination in
                               sorted(found)]}
                for other, found in sorted(relations.items())]

    return {"direction": direction.upper(), "start-ts": start * 1000, "end-ts": end * 1000,
            "entityId": dataset_id(*key), "fields": sorted(fields),
            "incoming": grouped(((src.namespace, src.dataset), src.field, field) for src, field in incoming)
            if wants(direction, "incoming") else [],
            "outgoing": grouped(((dst.namespace, dst.dataset), field, dst.field) for field, dst in outgoing)
            if wants(direction, "outgoing") else []}

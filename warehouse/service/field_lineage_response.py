"""The field lineage answer of the *Field Level Lineage* design: a field's paths, its upstream
fields (provenance, FLL-2) or the fields generated from it (impact, FLL-1), walked level by
level and rendered from rows.

The warehouse stores each distinct operation set once and one small row per run (see
``warehouse.db.field_lineage_store``); it answers ``FieldLineageQueries`` with typed rows
(``field_lineage_rows``), one query per call over a whole set of fields. This module walks
(``graph_walk``) and renders: the rows of one path recorded by several operation sets merge into
one path with all their runs, the latest descriptions, and a drawing (``field_views``) when a
view is asked for. Asked for direct
lineage only, each path is first narrowed to its direct chains (``field_transformations``), so
the walk follows only those.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, Generic, Literal, Protocol, TypeVar

from lineage.gc_paused import paused_collection
from warehouse.service.authorization import HIDDEN
from warehouse.service.field_hiding import Readable, ReadableProgram, hide_flow, hide_path
from warehouse.service.field_lineage_rows import FieldKey as FieldKey  # re-exported: the walk's keys
from warehouse.service.field_lineage_rows import FlowRow, OperationSetRow, PathDocument, PathRow
from warehouse.service.field_summaries import program_infos
from warehouse.service.field_transformations import TransformationFilter, kept_rows
from warehouse.service.field_views import AnswerDrawing, DetailedMemo, detailed_view, simple_view
from warehouse.service.graph_walk import Bounded, walk_bounded

Documents = dict[tuple[FieldKey, str], PathDocument]
"""The path documents an answer rendered, by field and fingerprint (as shown), for its one drawing."""


class FieldLineageQueries(Protocol):
    """What the walk asks the warehouse, for one time window."""

    def paths(self, keys: Sequence[FieldKey]) -> list[PathRow]:
        """Per field of ``keys`` and operation set with a run in the window, the set's path of
        the field with the set's descriptions, runs and programs."""

    def flows(self, key: FieldKey) -> list[FlowRow]:
        """Per operation set with a run in the window that reads the source field ``key``: where
        it went (its flow), the set's destination, descriptions, runs and programs."""

    def fed_by(self, keys: Sequence[FieldKey]) -> Iterable[FieldKey]:
        """The fields whose paths start at any field of ``keys``, with a run in the window."""


Row = TypeVar("Row", bound=OperationSetRow)
Graph = Literal["path", "answer"]
"""Where a view's drawing goes: on each path, or once for the whole answer."""


@dataclasses.dataclass(slots=True)
class Merged(Generic[Row]):
    """The rows of one path (or flow) as one: the first row met, the most recently described one
    (``latest``: its document and descriptions are shown), every row (their runs and programs),
    and the first and last run times of them all."""

    first: Row
    latest: Row
    rows: list[Row]
    first_seen: datetime
    last_seen: datetime


Key = TypeVar("Key", bound=Hashable)


def merge_rows(rows: Iterable[Row], key_of: Callable[[Row], Key]) -> dict[Key, Merged[Row]]:
    """Rows of one key (a path's or a flow's fingerprint, with its field or destination) as one:
    their rows gather (``_seen`` merges their runs and programs), first and last seen widen, and
    the most recently described row gives the document (path or flow) and its descriptions."""
    merged: dict[Key, Merged[Row]] = {}
    for row in rows:
        key = key_of(row)
        entry = merged.get(key)
        if entry is None:
            merged[key] = Merged(row, row, [row], row.first_seen, row.last_seen)
            continue
        entry.rows.append(row)
        entry.first_seen = min(entry.first_seen, row.first_seen)
        entry.last_seen = max(entry.last_seen, row.last_seen)
        if row.described_at > entry.latest.described_at:
            entry.latest = row
    return merged


SeenMemo = dict[tuple[int, ...], tuple[list[OperationSetRow], list[str], list[dict[str, Any]]]]
"""Runs and programs as rendered, by the identity of the rows' run and program tuples, for one
rendering: the store shares one tuple per operation set among its fields (a wide record's 100
paths share 1,000 runs), so they are sorted once. Keeps the rows, whose tuples' ids key it."""


def _seen(entry: Merged[Any], memo: SeenMemo, readable_program: ReadableProgram | None = None) -> dict[str, Any]:
    """A merged entry's runs and programs and when they were first and last seen, as rendered
    (the lists are shared with the entries of the same rows: not to be changed in place). The
    runs of a program ``readable_program`` refuses are not listed (the program is shown hidden:
    ``field_hiding.hide_unreadable_programs``)."""
    key = tuple(id(part) for row in entry.rows for part in (row.runs, row.programs))
    known = memo.get(key)
    if known is None:
        listed = {run for row in entry.rows for run in row.runs}
        if readable_program is not None:
            listed -= {run for row in entry.rows for program in row.programs
                       if not readable_program(program.as_program()) for run in program.runs}
        known = memo[key] = (entry.rows, sorted(listed),
                             program_infos(program for row in entry.rows for program in row.programs))
    _, runs, programs = known
    return {"runs": runs, "runCount": len(runs), "programs": programs,
            "firstSeenInSeconds": int(entry.first_seen.timestamp()),
            "lastSeenInSeconds": int(entry.last_seen.timestamp())}


def render_paths(rows: Iterable[PathRow], keys: Iterable[FieldKey], view: str | None = None, *,
                 transformations: TransformationFilter = "all", readable: Readable | None = None,
                 documents: Documents | None = None, readable_program: ReadableProgram | None = None
                 ) -> dict[FieldKey, list[dict[str, Any]]]:
    """Each field's distinct paths as the API renders them, for every field of ``keys`` (an
    empty list for a field without rows): the rows of one path fingerprint merge (their runs,
    first and last seen; the most recently described row gives the path and its descriptions);
    paths in order of first run, then fingerprint. ``view`` adds a ``graph`` of that view;
    ``transformations="direct"`` keeps each path's direct chains only (``kept_rows``); with
    ``readable``, each path is rendered as that caller sees it (``field_hiding.hide_path``).
    ``documents``: no drawing per path; each path's document (as shown) is kept there instead,
    for the answer's one drawing. ``readable_program``: the runs of programs it refuses are not listed."""
    merged = merge_rows(kept_rows(rows, transformations), lambda row: (row.key, row.path_fingerprint))
    paths: dict[FieldKey, list[dict[str, Any]]] = {key: [] for key in keys}
    memo = DetailedMemo()  # the drawings of one set's paths share their operations' fields
    seen: SeenMemo = {}  # and their runs and programs
    ordered = sorted(merged.items(), key=lambda item: (item[0][0], item[1].first_seen, item[0][1]))
    for (field_key, fingerprint), entry in ordered:
        path, descriptions = entry.latest.path, entry.latest.descriptions
        if readable is not None and (shown := hide_path(path, readable)) is not path:
            path, fingerprint = shown, shown["fingerprint"]  # the fingerprint of what is shown
        rendered: dict[str, Any] = {
            "operations": _described(path["operations"], descriptions),
            "sources": path["sources"],
            **_seen(entry, seen, readable_program),
            "fingerprint": fingerprint,
        }
        if path.get("warnings"):
            rendered["warnings"] = path["warnings"]
        if documents is not None:  # a path shown with hidden reads numbers them its own way: drawn apart
            documents[(field_key, fingerprint)] = path if path is entry.latest.path else {
                **path, "set": f"{path.get('set')}/{fingerprint}"}
        elif view:
            rendered["graph"] = (detailed_view(path, field_key.dataset, memo) if view == "detailed"
                                 else simple_view(path, field_key.dataset))
        paths.setdefault(field_key, []).append(rendered)
    return paths


def _described(operations: list[dict[str, Any]], descriptions: Mapping[str, str]) -> list[dict[str, Any]]:
    """``operations`` (parsed for this answer only, so changed in place: a wide record's paths hold
    thousands) each with its latest description."""
    for operation in operations:
        operation["description"] = descriptions.get(operation["id"], "")
    return operations


def path_sources(paths: Iterable[Mapping[str, Any]]) -> list[FieldKey]:
    """The distinct source fields the rendered ``paths`` start from, in order of appearance."""
    return list(dict.fromkeys(FieldKey(s["namespace"], s["name"], s["field"]) for p in paths for s in p["sources"]))


@dataclasses.dataclass(frozen=True)
class Rendering:
    """How paths are rendered: the view drawn (None: no drawing), the transformations kept, and
    what the caller may read (None: everything). The walk follows the paths as stored; what the
    answer shows of each (hidden parts, drawing) is kept aside, by field and fingerprint.
    ``documents`` (``graph=answer``): no drawing per path, the documents kept for the answer's one."""

    view: str | None = None
    transformations: TransformationFilter = "all"
    readable: Readable | None = None
    shown: dict[tuple[FieldKey, str], dict[str, Any]] = dataclasses.field(default_factory=dict)
    documents: Documents | None = None
    readable_program: ReadableProgram | None = None  # the runs of programs it refuses are not shown

    def paths(self, rows: Iterable[PathRow], keys: Iterable[FieldKey]) -> dict[FieldKey, list[dict[str, Any]]]:
        if self.readable is None:
            return render_paths(rows, keys, self.view, transformations=self.transformations, documents=self.documents,
                                readable_program=self.readable_program)
        rows, keys = list(rows), list(keys)
        walked = render_paths(rows, keys, transformations=self.transformations)
        for key, rendered in render_paths(rows, keys, self.view, transformations=self.transformations,
                                          readable=self.readable, documents=self.documents,
                                          readable_program=self.readable_program).items():  # same order
            self.shown.update(((key, path["fingerprint"]), shown) for path, shown in zip(walked[key], rendered,
                                                                                          strict=True))
        return walked

    def show(self, key: FieldKey, paths: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        """``paths`` of ``key`` as the answer shows them."""
        return [self.shown.get((key, path["fingerprint"]), path) for path in paths]

    def drawing(self, body: Mapping[str, Any], key: FieldKey) -> dict[str, Any]:
        """The answer's one drawing (``graph=answer``): every path it shows, of ``key`` and of its
        upstream or impacted fields, in the view, each node and edge once."""
        assert self.view is not None and self.documents is not None
        drawing = AnswerDrawing(self.view)
        listed = [(key, path) for path in body.get("paths", [])]
        listed += [(FieldKey(item["namespace"], item["dataset"], item["field"]), path)
                   for listing in ("upstream", "impacts") for item in body.get(listing, []) for path in item["paths"]]
        for field_key, path in listed:
            drawing.add(self.documents[(field_key, path["fingerprint"])], field_key.namespace, field_key.dataset)
        return drawing.graph()

    def show_field(self, key: FieldKey, level: int, paths: Iterable[dict[str, Any]]) -> dict[str, Any]:
        """An upstream or impacted field: of a dataset the caller cannot read, only its place."""
        if self.readable is not None and not self.readable(key.namespace, "dataset", key.dataset):
            return {"namespace": "", "dataset": HIDDEN, "field": HIDDEN, "level": level, "paths": []}
        return {"namespace": key.namespace, "dataset": key.dataset, "field": key.field, "level": level,
                "paths": self.show(key, paths)}


def field_lineage(queries: FieldLineageQueries, key: FieldKey, start: int, end: int, *,
                  direction: str = "incoming", view: str | None = None, levels: int = 1,
                  transformations: TransformationFilter = "all", readable: Readable | None = None,
                  graph: Graph = "path", readable_program: ReadableProgram | None = None) -> dict[str, Any]:
    """The *Field Level Lineage* design's answer for the field ``key`` in the window [start, end) (epoch seconds, as
    ``queries`` was asked): its paths (incoming) with ``upstream`` fields up to ``levels``
    datasets away, or the fields generated from it up to ``levels`` datasets away (outgoing,
    ``impacts``). One query for the field's paths, then per level one (upstream) or two
    (downstream) queries over the whole level. ``transformations="direct"``: every path, and
    so every step of the walk, is narrowed to its chains of direct edges. ``readable``: what the
    caller may read (None: everything); the walk goes through what they cannot read, the answer
    shows only that something hidden is there (``warehouse.service.field_hiding``). ``truncated``:
    fields with lineage lay beyond ``levels`` (the walk looks one level further to know).
    ``graph="answer"`` (with a ``view``): one drawing of every path shown, ``graph`` at the
    answer's top, instead of one per path (``field_views.AnswerDrawing``). ``readable_program``:
    the programs the caller may read (None: all); the runs of the others are not listed (the
    caller hides the programs themselves: ``field_hiding.hide_unreadable_programs``)."""
    with paused_collection():  # a wide answer's objects die with it (lineage.gc_paused)
        body: dict[str, Any] = {"fieldName": key.field, "startTimeInSeconds": start, "endTimeInSeconds": end,
                                "direction": direction}
        paths: dict[FieldKey, list[dict[str, Any]]] = {}
        rendering = Rendering(view, transformations, readable, documents={} if view and graph == "answer" else None,
                              readable_program=readable_program)
        if direction == "incoming":
            paths.update(rendering.paths(queries.paths([key]), [key]))
            body["paths"] = rendering.show(key, paths[key])
            # levels=1 asks for the field's own paths only: no walk upstream, nothing to cut
            walked = upstream(queries, key, paths, rendering, levels - 1) if levels > 1 else Bounded([], False)
            body["upstream"] = _found(walked.levels, paths, rendering)
            body["truncated"] = walked.truncated
        else:
            flows = queries.flows(key)
            body["flows"] = render_flows(flows if readable is None else [hide_flow(row, readable) for row in flows],
                                         readable_program)
            walked = downstream(queries, key, paths, rendering, levels)
            body["impacts"] = _found(walked.levels, paths, rendering)
            body["truncated"] = walked.truncated
        if rendering.documents is not None:
            body["graph"] = rendering.drawing(body, key)
        return body


def render_flows(rows: Iterable[FlowRow], readable_program: ReadableProgram | None = None) -> list[dict[str, Any]]:
    """Where a source field goes, as the API renders it: per destination and distinct flow (rows
    merge their runs and programs; the most recently described gives the descriptions), the
    operations up to the write or the drop, the destination fields reached, the drops (operation
    id, name, description) and ``reachesNothing`` for a field read and neither written nor
    dropped; in order of first run."""
    merged = merge_rows(rows, lambda row: (row.destination.namespace, row.destination.name, row.flow_fingerprint))
    rendered: list[dict[str, Any]] = []
    seen: SeenMemo = {}
    for (namespace, dataset, fingerprint), entry in sorted(merged.items(),
                                                           key=lambda item: (item[1].first_seen, item[0])):
        flow, descriptions = entry.latest.flow, entry.latest.descriptions
        names = {operation["id"]: operation["name"] for operation in flow["operations"]}
        rendered.append({
            "destination": {"namespace": namespace, "type": entry.first.destination.type, "name": dataset},
            "operations": [{**operation, "description": descriptions.get(operation["id"], "")}
                           for operation in flow["operations"]],
            "destinationFields": flow["destinationFields"],
            "drops": [{"operation": op_id, "name": names[op_id], "description": descriptions.get(op_id, "")}
                      for op_id in flow["drops"]],
            "reachesNothing": not flow["destinationFields"] and not flow["drops"],
            **_seen(entry, seen, readable_program),
            "fingerprint": fingerprint,
        })
    return rendered


def upstream(queries: FieldLineageQueries, key: FieldKey, paths: dict[FieldKey, list[dict[str, Any]]],
             rendering: Rendering, levels: int) -> Bounded[FieldKey]:
    """The fields upstream of ``key`` (whose rendered paths ``paths`` holds), level by level:
    the sources of the previous level's paths that have lineage of their own in the window (a
    source without it ends the walk there). ``paths`` gains the paths of every field visited."""

    def sources(frontier: tuple[FieldKey, ...]) -> list[FieldKey]:
        return path_sources(path for field in frontier for path in paths[field])

    def with_lineage(_: tuple[FieldKey, ...], found: tuple[FieldKey, ...]) -> Iterator[FieldKey]:
        paths.update(rendering.paths(queries.paths(found), found))
        return (field for field in found if paths[field])

    return walk_bounded([key], sources, levels, with_lineage)


def downstream(queries: FieldLineageQueries, key: FieldKey, paths: dict[FieldKey, list[dict[str, Any]]],
               rendering: Rendering, levels: int) -> Bounded[FieldKey]:
    """The fields generated from ``key``, level by level: the fields fed by the previous level,
    each with only its paths that start at a field of the previous level (into ``paths``)."""

    def starting_at_frontier(frontier: tuple[FieldKey, ...], found: tuple[FieldKey, ...]) -> Iterator[FieldKey]:
        starts = set(frontier)
        rendered = rendering.paths(queries.paths(found), found)
        for field in found:
            paths[field] = [path for path in rendered[field] if starts.intersection(path_sources([path]))]
        return (field for field in found if paths[field])

    return walk_bounded([key], queries.fed_by, levels, starting_at_frontier)


def _found(levels: list[tuple[FieldKey, ...]], paths: Mapping[FieldKey, list[dict[str, Any]]],
           rendering: Rendering) -> list[dict[str, Any]]:
    return [rendering.show_field(field, level, paths[field])
            for level, fields in enumerate(levels, start=1) for field in fields]

"""Reads of the OpenLineage export: the events of a window in time order, a page at a time.

The window holds, by event time in ``[after, before)``: each OpenLineage RunEvent kept as it
came (``lineage.openlineage_events``), and for each run the warehouse has no such event of (our
client's, automatic capture's, or an OpenLineage run compacted before events were kept) its
start (at the run's time) and its end (at its end, once it ended), which the service layer
renders (``warehouse.service.openlineage_export``). An event is given only to a caller who may
read every namespace it touches (a kept event's recorded namespaces; a rendered run's own, its
datasets', its column lineage sources' and its parent and root runs'); the others are counted as
withheld. Of a namespace deleted and awaiting its cleanup, nothing from before its re-creation.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from lineage.model.column_lineage import ColumnSource
from lineage.openlineage import kept_parts
from warehouse.service.openlineage_export import (
    ColumnEdge,
    DatasetDescription,
    DatasetExport,
    DatasetRef,
    JobExport,
    LinkedRunRef,
    Program,
    RunExport,
    describe_dataset,
    run_events,
)

# Every event of the window, with the namespaces it touches; %(all)s: the caller reads everything.
_WINDOW = """
    with runs as (
        select r.run_key, r.run_at, r.stopped_at, r.status,
               -- every namespace its rendering names: its datasets, its column lineage's sources, its
               -- parent and root runs' programs; not gathered when nothing needs them (a caller who
               -- reads everything, and no namespace awaiting its cleanup: the race guard's)
               case when %(all)s and not exists (select from lineage.namespace_guards) then array[r.namespace]
               else array(select a.namespace from lineage.dataset_accesses a where a.run_key = r.run_key
                          union select d.namespace from lineage.field_lineage_runs f
                                join lineage.datasets d using (dataset_key) where f.run_key = r.run_key
                          union select p.source_namespace from lineage.field_lineage_runs f
                                join lineage.field_path_sources p on p.set_fingerprint = f.set_fingerprint
                                where f.run_key = r.run_key
                          union select l.namespace from lineage.run_parents l where l.run_key = r.run_key)
                    || r.namespace end as namespaces
        from lineage.runs r
        where (r.run_at >= %(after)s and r.run_at < %(before)s
               or r.stopped_at >= %(after)s and r.stopped_at < %(before)s)
          and not exists (select from lineage.openlineage_events o where o.run_key = r.run_key)),
    items as (
        select o.event_time as at, 'kept' as kind, o.event_key::text as event_key, o.run_key, l.namespaces
        from lineage.openlineage_events o
        join lineage.namespace_lists l on l.list_key = o.namespace_list
        where o.event_time >= %(after)s and o.event_time < %(before)s
        union all
        select t.at, t.kind, null, r.run_key, r.namespaces
        from runs r
        cross join lateral (values ('start', r.run_at),
                                   ('end', case when r.status <> 'running' then r.stopped_at end)) as t(kind, at)
        where t.at >= %(after)s and t.at < %(before)s)
    select at, kind, event_key, run_key, (%(all)s or namespaces <@ %(readable)s::text[]) as readable from items i
    -- the race guard: of a namespace deleted and awaiting its cleanup, nothing from before it was created again
    where not exists (select from lineage.namespace_guards g
                      where g.namespace = any(i.namespaces) and i.at < g.visible_since)"""


# The caller's events of the window, oldest first, as ``WindowItem`` rows (the export's stream).
WINDOW_IN_ORDER = (f"select at, kind, event_key, run_key from ({_WINDOW}) w where readable "
                   "order by at, kind = 'end', event_key, run_key")


@dataclass(frozen=True, slots=True)
class WindowItem:
    """One event of the window: a kept event (``event_key``) or a run's ``start`` or ``end``."""

    at: datetime
    kind: str
    event_key: str | None  # a kept event's key: md5 of its event id, as a UUID's text (migration 0046)
    run_key: int


@dataclass(frozen=True, slots=True)
class WindowPage:
    items: tuple[WindowItem, ...]
    total: int  # the caller's events in the window
    withheld: int  # events of the window touching a namespace the caller may not read


def window_page(conn: psycopg.Connection, after: datetime, before: datetime, readable: Sequence[str] | None, *,
                ascending: bool, limit: int, offset: int) -> WindowPage:
    """The caller's events of ``[after, before)`` in time order, ``limit`` from ``offset``
    (``readable``: the namespaces the caller may read; None: all)."""
    params = {"after": after, "before": before, "all": readable is None, "readable": list(readable or [])}
    direction = "asc" if ascending else "desc"
    with conn.cursor(row_factory=dict_row) as cursor:
        counts = cursor.execute(f"select count(*) filter (where readable) as total, "
                                f"count(*) filter (where not readable) as withheld from ({_WINDOW}) w",
                                params).fetchone()
        rows = cursor.execute(
            f"select * from ({_WINDOW}) w where readable "
            f"order by at {direction}, kind = 'end' {direction}, event_key {direction}, run_key {direction} "
            "limit %(limit)s offset %(offset)s", {**params, "limit": limit, "offset": offset}).fetchall()
    assert counts is not None
    return WindowPage(tuple(WindowItem(row["at"], row["kind"], row["event_key"], row["run_key"]) for row in rows),
                      counts["total"], counts["withheld"])


def kept_event_key(event_id: str) -> str:
    """The key a kept event's row has (``lineage.openlineage_events.event_key``, migration 0046):
    the MD5 of its event id as a UUID's text, as the compaction computes it."""
    return kept_parts.md5_uuid(event_id.encode())


def kept_events(conn: psycopg.Connection, event_keys: Sequence[str]) -> dict[str, dict[str, Any]]:
    """The kept OpenLineage events of ``event_keys`` (``kept_event_key``), as they came: each kept event with its parts
    put back (``lineage.openlineage.kept_parts``), the parts the events share read once."""
    rows = conn.execute("""select o.event_key::text,
                                  lineage.kept_skeleton(o.event_type, o.body, o.run_facets, o.rest),
                                  r.run_id, o.event_time
                           from lineage.openlineage_events o
                           join lineage.runs r on r.run_key = o.run_key
                           where o.event_key = any(%s::uuid[])""", (list(event_keys),)).fetchall()
    bodies = sorted({skeleton[kept_parts.BODY] for _, skeleton, _, _ in rows if kept_parts.BODY in skeleton})
    named = sorted({part_id for _, skeleton, _, _ in rows for part_id in kept_parts.skeleton_part_ids(skeleton)})
    parts: dict[str, Any] = {} if not named else dict(conn.execute(
        """select part_id::text, part from lineage.openlineage_parts where part_id = any(%(named)s::uuid[])
           union all
           select p.part_id::text, p.part
           from lineage.openlineage_parts b
           cross join lateral lineage.openlineage_body_part_ids(b.part) as body(part_id)
           join lineage.openlineage_parts p on p.part_id = body.part_id
           where b.part_id = any(%(bodies)s::uuid[])""", {"named": named, "bodies": bodies}).fetchall())
    return {event_key: kept_parts.assembled(skeleton, parts, run_id=run_id, event_time=event_time)
            for event_key, skeleton, run_id, event_time in rows}


def _kept_event_pages(conn: psycopg.Connection, columns: str) -> Iterator[list[tuple[Any, ...]]]:
    """Every kept event's ``event_id`` and ``columns`` (of ``o``, the event, and ``r``, its run),
    a thousand at a time in id order (a migration's backfill rewrites them as it goes). For the
    backfills of migrations 0041 and 0042, which run on the table as it was then (an id, one
    skeleton column: migration 0046 put both in other columns)."""
    after = ""
    while rows := conn.execute(
            f"""select o.event_id, {columns} from lineage.openlineage_events o
                join lineage.runs r on r.run_key = o.run_key
                where o.event_id > %s order by o.event_id limit 1000""", (after,)).fetchall():
        yield rows
        after = rows[-1][0]


def backfill_parts(conn: psycopg.Connection) -> int:
    """Migration 0041: split each event kept whole before it, a thousand at a time (each page's
    parts written once, its events in one statement); how many."""
    split = 0
    for rows in _kept_event_pages(conn, "r.namespace, o.event"):
        parts: dict[str, tuple[str, str, Jsonb]] = {}
        skeletons = []
        for event_id, namespace, event in rows:
            skeleton, named = kept_parts.split(namespace, event)
            parts.update((key, (key, namespace, Jsonb(part))) for key, part in named.items())
            skeletons.append((Jsonb(skeleton), event_id))
        with conn.cursor() as cursor:
            cursor.executemany("""insert into lineage.openlineage_parts (part_id, namespace, part)
                                  values (%s, %s, %s) on conflict (part_id) do nothing""", list(parts.values()))
            cursor.executemany("update lineage.openlineage_events set event = %s where event_id = %s", skeletons)
        split += len(rows)
    return split


def slim_skeletons(conn: psycopg.Connection) -> int:
    """Migration 0042: leave out of each kept skeleton what its row holds (its run's id, its time:
    ``kept_parts.slimmed``), a thousand at a time; how many changed."""
    slimmed = 0
    for rows in _kept_event_pages(conn, "o.event, r.run_id, o.event_time"):
        changed = [(Jsonb(slim), event_id) for event_id, skeleton, run_id, event_time in rows
                   if (slim := kept_parts.slimmed(skeleton, run_id=run_id, event_time=event_time)) != skeleton]
        if changed:
            with conn.cursor() as cursor:
                cursor.executemany("update lineage.openlineage_events set event = %s where event_id = %s", changed)
        slimmed += len(changed)
    return slimmed


def _keys(values: Sequence[int]) -> str:
    """An array of keys as one text parameter (``%s::bigint[]``): psycopg dumps a long list of
    ints element by element, a measurable part of the export's time."""
    return "{" + ",".join(map(str, values)) + "}"


@dataclass(slots=True)
class ExportCache:
    """What an export reads once however many runs name it: datasets' names by key and their
    facets, programs by key."""

    datasets: dict[int, DatasetRef] = field(default_factory=dict)
    described: dict[DatasetRef, DatasetDescription] = field(default_factory=dict)
    programs: dict[int, Program] = field(default_factory=dict)

    def load(self, conn: psycopg.Connection, dataset_keys: set[int], program_keys: set[int]) -> None:
        missing = dataset_keys - self.datasets.keys()
        if missing:
            for key, namespace, dataset_type, name in conn.execute(
                    "select dataset_key, namespace, dataset_type, dataset from lineage.datasets "
                    "where dataset_key = any(%s::bigint[])", (_keys(sorted(missing)),)):
                self.datasets[key] = DatasetRef(namespace, dataset_type, name)
            self.described.update(_dataset_descriptions(conn, {self.datasets[key] for key in missing
                                                               if key in self.datasets}))
        missing = program_keys - self.programs.keys()
        if missing:
            for key, *program in conn.execute(
                    "select program_key, namespace, application, program_type, program from lineage.programs "
                    "where program_key = any(%s::bigint[])", (_keys(sorted(missing)),)):
                self.programs[key] = Program(*program)


def run_exports(conn: psycopg.Connection, run_keys: Sequence[int], cache: ExportCache | None = None
                ) -> dict[int, RunExport]:
    """What the warehouse keeps of each of ``run_keys``, for the export to render; ``cache``
    holds what an export read so far (each dataset and program is read once)."""
    cache = ExportCache() if cache is None else cache
    return _assembled(_run_rows(conn, run_keys, cache), cache)


@dataclass(frozen=True, slots=True)
class _RunRows:
    """The rows of some runs, as read (``_run_rows``), before they are assembled (``_assembled``)."""

    runs: list[tuple[Any, ...]]
    accesses: list[tuple[Any, ...]]
    links: list[tuple[Any, ...]]
    facets: list[tuple[Any, ...]]
    sets: list[tuple[Any, ...]]


def _run_rows(conn: psycopg.Connection, run_keys: Sequence[int], cache: ExportCache) -> _RunRows:
    if not run_keys:
        return _RunRows([], [], [], [], [])
    keys = _keys(run_keys)
    with conn.cursor() as cursor:
        runs = cursor.execute(
            """select run_key, program_key, run_id, status, run_at, stopped_at, started_at is not null
               from lineage.runs where run_key = any(%s::bigint[])""", (keys,)).fetchall()
        accesses = cursor.execute(
            "select run_key, dataset_key, access from lineage.dataset_accesses where run_key = any(%s::bigint[])",
            (keys,)).fetchall()
        links = cursor.execute(
            """select run_key, relation, namespace, application, program_type, program, run_id
               from lineage.run_parents where run_key = any(%s::bigint[])""", (keys,)).fetchall()
        facets = cursor.execute(
            """select run_key, facet_of, name, facet from lineage.run_facets where run_key = any(%s::bigint[])
               order by name""", (keys,)).fetchall()
        sets = cursor.execute(  # each run's column lineage: its operation sets' edges
            """select f.run_key, f.dataset_key, e.source_namespace, e.source_type, e.source, e.source_field,
                      e.field, e.kind, e.subtype, e.masking, e.operations
               from lineage.field_lineage_runs f join lineage.field_edges e on e.set_fingerprint = f.set_fingerprint
               where f.run_key = any(%s::bigint[]) order by f.set_fingerprint""", (keys,)).fetchall()
    cache.load(conn, {row[1] for row in accesses} | {row[1] for row in sets}, {row[1] for row in runs})
    return _RunRows(runs, accesses, links, facets, sets)


def _assembled(rows: _RunRows, cache: ExportCache) -> dict[int, RunExport]:
    names = cache.datasets
    reads: dict[int, list[tuple[DatasetRef, str]]] = {}
    for run_key, dataset_key, access in rows.accesses:
        reads.setdefault(run_key, []).append((names[dataset_key], access))
    linked: dict[int, dict[str, LinkedRunRef]] = {}
    for run_key, relation, *program, run_id in rows.links:
        linked.setdefault(run_key, {})[relation] = LinkedRunRef(Program(*program), run_id)
    kept: dict[int, dict[str, dict[str, Any]]] = {}
    for run_key, facet_of, name, facet in rows.facets:
        kept.setdefault(run_key, {"run": {}, "job": {}})[facet_of][name] = facet
    records: dict[int, dict[DatasetRef, list[ColumnEdge]]] = {}
    for run_key, dataset_key, namespace, dataset_type, name, source_field, written, kind, subtype, masking, ops \
            in rows.sets:
        source = ColumnSource(namespace, name, source_field, kind, subtype, masking, dataset_type)
        records.setdefault(run_key, {}).setdefault(names[dataset_key], []).append(
            ColumnEdge(source, written, tuple(ops)))
    exports = {}
    no_facets: dict[str, dict[str, Any]] = {"run": {}, "job": {}}
    for run_key, program_key, run_id, status, run_at, stopped_at, started in rows.runs:
        uses = sorted(reads.get(run_key, ()))  # by dataset, then access: the same order every export
        # each dataset once a side (accesses are kept per component too); unknown: used, and never
        # said to be read
        read = tuple(dict.fromkeys(ref for ref, access in uses if access in ("read", "read_write", "unknown")))
        written = tuple(dict.fromkeys(ref for ref, access in uses if access in ("write", "read_write")))
        known = {ref for ref, access in uses if access in ("read", "read_write")}
        recorded = records.get(run_key)
        if recorded:
            written += tuple(ref for ref in recorded if ref not in written)  # recorded fields only
        facets_of = kept.get(run_key, no_facets)
        links_of = linked.get(run_key, {})
        exports[run_key] = RunExport(
            program=cache.programs[program_key], run_id=run_id, status=status, run_at=run_at, stopped_at=stopped_at,
            started=started, reads=read, writes=written,
            unknown=frozenset(ref for ref, access in uses if access == "unknown" and ref not in known),
            parent=links_of.get("parent"), root=links_of.get("root"),
            run_facets=facets_of["run"], job_facets=facets_of["job"], column_edges=recorded or {},
            datasets=cache.described)
    return exports


# What a namespace's incarnation before its deletion left (until its cleanup) is not shown: a row
# written before the namespace became visible again (``lineage.namespace_guards``).
_SINCE_GUARD = """not exists (select from lineage.namespace_guards g
                              where g.namespace = d.namespace and {at} < g.visible_since)"""

_DESCRIPTIONS = f"""
    select d.namespace, d.dataset_type, d.dataset,
           (select v.schema from lineage.dataset_schema_versions v
            where v.entity_key = d.entity_key and {_SINCE_GUARD.format(at="v.created_at")}
            order by v.version desc limit 1),
           (select jsonb_object_agg(f.name, f.facet) from lineage.dataset_facets f
            where f.dataset_key = d.dataset_key and {_SINCE_GUARD.format(at="f.event_time")}),
           (select jsonb_agg(jsonb_build_array(m.scope, m.kind, m.key, m.value) order by m.scope, m.kind, m.key)
            from lineage.metadata m where m.entity_key = d.entity_key and {_SINCE_GUARD.format(at="m.updated_at")})
    from unnest(%s::text[], %s::text[], %s::text[]) as k(namespace, dataset_type, dataset)
    join lineage.datasets d using (namespace, dataset_type, dataset)"""


def _dataset_descriptions(conn: psycopg.Connection, datasets: set[DatasetRef]) -> dict[DatasetRef, DatasetDescription]:
    """Each dataset's facets: its latest schema version, the facets kept, its tags and properties."""
    if not datasets:
        return {}
    refs = sorted(datasets, key=lambda ref: (ref.namespace, ref.dataset_type, ref.name))
    found = {}
    for namespace, dataset_type, name, schema, kept, metadata in conn.execute(_DESCRIPTIONS, (
            [ref.namespace for ref in refs], [ref.dataset_type for ref in refs], [ref.name for ref in refs])):
        fields = (schema or {}).get("fields") or []
        by_scope: dict[str, Any] = {}
        for scope, kind, key, value in metadata or ():
            entry = by_scope.setdefault("tags" if kind == "tag" else "properties", {})
            if kind == "tag":
                entry.setdefault(scope, []).append(key)
            else:
                entry.setdefault(scope, {})[key] = value
        if by_scope:
            by_scope = {"tags": by_scope.get("tags", {}), "properties": by_scope.get("properties", {})}
        found[DatasetRef(namespace, dataset_type, name)] = describe_dataset(
            [{"name": item["name"], "type": str(item.get("type") or ""), "nullable": item.get("nullable", True)}
             for item in fields if isinstance(item, dict) and "name" in item], kept or {}, by_scope)
    return found


@contextmanager
def snapshot(conn: psycopg.Connection) -> Iterator[None]:
    """One read-only REPEATABLE READ transaction on an autocommit ``conn``: the pages read in it
    (their counts, their events) see one state of the warehouse, however compactions run meanwhile."""
    with conn.transaction():
        conn.execute("set transaction isolation level repeatable read, read only")
        # JIT compiles the window's statement for seconds to save milliseconds (measured on the
        # lineage benchmark: 2.3 s of compiling for a 0.2 s statement)
        conn.execute("set local jit = off")
        yield


@dataclass(frozen=True, slots=True)
class ExportPage:
    """A page of the export: OpenLineage run events in time order, and the window's counts."""

    events: list[dict[str, Any]]
    total: int
    withheld: int


def export_page(conn: psycopg.Connection, after: datetime, before: datetime, readable: Sequence[str] | None, *,
                ascending: bool = True, limit: int = 100, offset: int = 0) -> ExportPage:
    """The window's events, ``limit`` from ``offset``: kept ones as they came, the others rendered."""
    page = window_page(conn, after, before, readable, ascending=ascending, limit=limit, offset=offset)
    cache = ExportCache()
    items, kept, runs = _read_chunk(conn, page.items, cache)
    return ExportPage(list(_events(items, kept, _assembled(runs, cache))), page.total, page.withheld)


def stream_window(conn: psycopg.Connection, after: datetime, before: datetime, readable: Sequence[str] | None, *,
                  chunk: int = 2000) -> Iterator[dict[str, Any]]:
    """Every event of the window the caller may read, oldest first, through one server-side
    cursor (call it inside ``snapshot``): ``chunk`` items at a time are fetched and rendered, so
    memory stays flat however long the window, and the window is read once (``export_page`` counts
    and skips it again for each page). A thread reads the next chunk (the cursor, the runs'
    rows) while the caller renders and writes this one; ``conn`` is the thread's until the
    generator ends."""
    params = {"after": after, "before": before, "all": readable is None, "readable": list(readable or [])}
    cache = ExportCache()
    ready: queue.Queue[_Chunk | BaseException | None] = queue.Queue(maxsize=2)
    stop = threading.Event()

    def read() -> None:
        try:
            with conn.cursor(name="openlineage_export") as cursor:
                cursor.execute(WINDOW_IN_ORDER, params)
                while not stop.is_set():
                    rows = cursor.fetchmany(chunk)
                    if not rows:
                        break
                    items = [WindowItem(*row) for row in rows]
                    _put(ready, stop, _read_chunk(conn, items, cache))
            _put(ready, stop, None)
        except BaseException as exc:  # the caller raises it
            _put(ready, stop, exc)

    reader = threading.Thread(target=read, name="openlineage-export-reader", daemon=True)
    reader.start()
    try:
        while (got := ready.get()) is not None:
            if isinstance(got, BaseException):
                raise got
            items, kept, runs = got
            yield from _events(items, kept, _assembled(runs, cache))  # assembled here: the reader is the busier
    finally:
        stop.set()
        if reader.is_alive():
            conn.cancel()  # a statement still running (the window's first fetch) ends now
        while reader.is_alive():  # unblock a reader waiting to hand over a chunk
            with suppress(queue.Empty):
                ready.get(timeout=0.1)
        reader.join()


_Chunk = tuple[Sequence["WindowItem"], dict[str, dict[str, Any]], _RunRows]


def _put(ready: queue.Queue[_Chunk | BaseException | None], stop: threading.Event,
         item: _Chunk | BaseException | None) -> None:
    while not stop.is_set():
        with suppress(queue.Full):
            ready.put(item, timeout=0.1)
            return


def _read_chunk(conn: psycopg.Connection, items: Sequence[WindowItem], cache: ExportCache) -> _Chunk:
    """What rendering ``items`` needs, as read: their kept events and their runs' rows."""
    kept = kept_events(conn, [item.event_key for item in items if item.event_key is not None])
    return items, kept, _run_rows(conn, sorted({item.run_key for item in items if item.event_key is None}), cache)


def _events(items: Sequence[WindowItem], kept: dict[str, dict[str, Any]], runs: dict[int, RunExport]
            ) -> Iterator[dict[str, Any]]:
    """The events of ``items``, in their order: kept ones as they came, the others rendered."""
    for item in items:
        if item.event_key is not None:
            yield kept[item.event_key]
        else:
            yield from run_events(runs[item.run_key], (item.kind,))


def quiet_datasets(conn: psycopg.Connection, after: datetime, before: datetime, readable: Sequence[str] | None
                   ) -> list[DatasetExport]:
    """The datasets with a schema or metadata that no run of ``[after, before)`` read or wrote
    (in the namespaces of ``readable``; None: all), each with its schema, facets and metadata."""
    rows = conn.execute(
        f"""select d.namespace, d.dataset_type, d.dataset,
                  greatest((select max(v.created_at) from lineage.dataset_schema_versions v
                            where v.entity_key = d.entity_key and {_SINCE_GUARD.format(at="v.created_at")}),
                           (select max(m.updated_at) from lineage.metadata m
                            where m.entity_key = d.entity_key and {_SINCE_GUARD.format(at="m.updated_at")}))
           from lineage.datasets d
           where (%(all)s or d.namespace = any(%(readable)s))
             and (exists (select from lineage.dataset_schema_versions v
                          where v.entity_key = d.entity_key and {_SINCE_GUARD.format(at="v.created_at")})
                  or exists (select from lineage.metadata m
                             where m.entity_key = d.entity_key and {_SINCE_GUARD.format(at="m.updated_at")}))
             and not exists (select from lineage.dataset_accesses a join lineage.runs r using (run_key)
                             where a.dataset_key = d.dataset_key
                               and (r.run_at >= %(after)s and r.run_at < %(before)s
                                    or r.stopped_at >= %(after)s and r.stopped_at < %(before)s))
           order by d.namespace, d.dataset_type, d.dataset""",
        {"all": readable is None, "readable": list(readable or []), "after": after, "before": before}).fetchall()
    refs = [DatasetRef(row[0], row[1], row[2]) for row in rows]
    described = _dataset_descriptions(conn, set(refs))
    return [DatasetExport(ref=ref, updated_at=row[3], description=described[ref])
            for ref, row in zip(refs, rows, strict=True) if row[3] is not None]


def declared_jobs(conn: psycopg.Connection, after: datetime, before: datetime, readable: Sequence[str] | None
                  ) -> list[JobExport]:
    """The programs whose latest declaration (declared lineage) was made in ``[after, before)``,
    each with what it declares it reads and writes (nothing, for a declaration that ended what the
    job declared); one touching a namespace outside ``readable`` (None: all) is left out whole, as
    a run's events are."""
    rows = conn.execute(
        """with declared as (  -- a declaration of no dataset (it ended what the job declared) too
               select s.program_key, s.declared_at,
                      coalesce(array_agg(array[d.namespace, d.dataset_type, d.dataset, a.access]
                                         order by d.namespace, d.dataset_type, d.dataset, a.access)
                               filter (where a.program_key is not null), '{}') as accesses,
                      coalesce(array_agg(distinct d.namespace) filter (where a.program_key is not null),
                               '{}') as namespaces
               from lineage.program_declarations s
               left join lineage.declared_accesses a
                 on a.program_key = s.program_key and a.declared_at = s.declared_at
               left join lineage.datasets d on d.dataset_key = a.dataset_key
               group by s.program_key, s.declared_at
           )
           select p.namespace, p.application, p.program_type, p.program, x.declared_at, x.accesses
           from declared x join lineage.programs p using (program_key)
           where x.declared_at >= %(after)s and x.declared_at < %(before)s
             and (%(all)s or p.namespace || x.namespaces <@ %(readable)s::text[])
             -- the race guard, as for runs: nothing of a deleted namespace from before it was created again
             and not exists (select from lineage.namespace_guards g
                             where g.namespace = any(p.namespace || x.namespaces) and x.declared_at < g.visible_since)
           order by x.declared_at, p.namespace, p.application, p.program_type, p.program""",
        {"all": readable is None, "readable": list(readable or []), "after": after, "before": before}).fetchall()
    jobs = []
    for namespace, application, program_type, program, declared_at, accesses in rows:
        reads = tuple(DatasetRef(*item[:3]) for item in accesses if item[3] in ("read", "read_write", "unknown"))
        writes = tuple(DatasetRef(*item[:3]) for item in accesses if item[3] in ("write", "read_write"))
        jobs.append(JobExport(Program(namespace, application, program_type, program), declared_at, reads, writes))
    return jobs

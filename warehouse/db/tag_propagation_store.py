"""Reads and writes of tag propagation (issue 33): field lineage edges in a window, out of or
into a set of fields, with the programs and runs that recorded them; the tags people assigned to
fields; and ``lineage.propagated_tags``, which the propagation stage rewrites whole."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson
import psycopg

from lineage.model.metadata_entity import MetadataEntity, dataset_entity, entity
from warehouse.service.tag_propagation import Edge, FieldNode, ProgramName, Propagation, edge_view

# The edges out of, or into, a list of fields, with the operation set each was recorded in.
_EDGES = """
    select e.set_fingerprint, e.source_namespace, e.source_type, e.source, e.source_field,
           s.destination_namespace, s.destination_type, s.destination, e.field, e.kind, e.subtype, e.masking,
           e.operations
    from unnest(%(namespaces)s::text[], %(types)s::text[], %(datasets)s::text[], %(fields)s::text[])
         as k(namespace, dataset_type, dataset, field)
    {join}"""
_OUT_OF = """
    join lineage.field_edges e on (e.source_namespace, e.source_type, e.source, e.source_field)
                                = (k.namespace, k.dataset_type, k.dataset, k.field)
    join lineage.field_operation_sets s on s.fingerprint = e.set_fingerprint"""
_INTO = """
    join lineage.field_operation_sets s
      on (s.destination_namespace, s.destination_type, s.destination) = (k.namespace, k.dataset_type, k.dataset)
    join lineage.field_edges e on e.set_fingerprint = s.fingerprint and e.field = k.field"""
# The runs that recorded each of some operation sets in the window, by program: how many, when,
# and the latest MAX_RUNS of them.
_SET_RUNS = """
    select f.set_fingerprint, p.namespace, p.application, p.program_type, p.program, count(*),
           min(f.recorded_at), max(f.recorded_at), (array_agg(r.run_id order by f.recorded_at desc))[1:%(most)s]
    from lineage.field_operation_sets s
    join lineage.datasets d on (d.namespace, d.dataset_type, d.dataset)
                             = (s.destination_namespace, s.destination_type, s.destination)
    join lineage.field_lineage_runs f on f.dataset_key = d.dataset_key and f.set_fingerprint = s.fingerprint
    join lineage.runs r on r.run_key = f.run_key
    join lineage.programs p on p.program_key = r.program_key
    where s.fingerprint = any(%(sets)s) and f.recorded_at >= %(start)s and f.recorded_at < %(end)s
    group by f.set_fingerprint, p.namespace, p.application, p.program_type, p.program"""
MAX_RUNS = 20  # an edge names its latest runs, and counts them all


def _columns(fields: Iterable[FieldNode]) -> dict[str, list[str]]:
    chosen = list(fields)
    return {"namespaces": [item.namespace for item in chosen], "types": [item.dataset_type for item in chosen],
            "datasets": [item.dataset for item in chosen], "fields": [item.field for item in chosen]}


@dataclass(frozen=True, slots=True)
class _SetRuns:
    program: ProgramName
    count: int
    first_seen: int
    last_seen: int
    runs: tuple[str, ...]


class EdgeQueries:
    """Field lineage edges recorded in ``[start, end)``: each edge of an operation set once per
    program whose runs recorded the set in the window (sets no run recorded in it are left out).
    The runs of each set are read once per walk, however many edges and levels share it."""

    def __init__(self, conn: psycopg.Connection, start: datetime, end: datetime) -> None:
        self._conn, self._window = conn, {"start": start, "end": end}
        self._set_runs: dict[str, list[_SetRuns]] = {}

    def out_of(self, fields: Sequence[FieldNode]) -> list[Edge]:
        """The edges whose source is one of ``fields``."""
        return self._edges(_OUT_OF, fields)

    def into(self, fields: Sequence[FieldNode]) -> list[Edge]:
        """The edges whose target is one of ``fields``."""
        return self._edges(_INTO, fields)

    def _edges(self, join: str, fields: Sequence[FieldNode]) -> list[Edge]:
        if not fields:
            return []
        rows = self._conn.execute(_EDGES.format(join=join), _columns(fields)).fetchall()
        self._load_runs({row[0] for row in rows})
        merged: dict[tuple[Any, ...], list[_SetRuns]] = {}
        for row in rows:
            for runs in self._set_runs[row[0]]:
                merged.setdefault((*row[1:12], tuple(row[12]), runs.program), []).append(runs)
        return [_edge(key, recorded) for key, recorded in merged.items()]

    def _load_runs(self, sets: set[str]) -> None:
        missing = sorted(sets - self._set_runs.keys())
        if not missing:
            return
        for fingerprint in missing:
            self._set_runs[fingerprint] = []
        for row in self._conn.execute(_SET_RUNS, {"sets": missing, "most": MAX_RUNS, **self._window}).fetchall():
            self._set_runs[row[0]].append(_SetRuns(ProgramName(*row[1:5]), row[5], int(row[6].timestamp()),
                                                   int(row[7].timestamp()), tuple(row[8])))


def _edge(key: tuple[Any, ...], recorded: list[_SetRuns]) -> Edge:
    """An edge of one program, over the sets of that program that hold it."""
    runs = tuple(dict.fromkeys(run for item in recorded for run in item.runs))[:MAX_RUNS]  # each set's latest first
    return Edge(source=FieldNode(*key[0:4]), target=FieldNode(*key[4:8]), kind=key[8], subtype=key[9],
                masking=key[10], operations=tuple(key[11]), program=key[12], runs=tuple(sorted(runs)),
                first_seen=min(item.first_seen for item in recorded),
                last_seen=max(item.last_seen for item in recorded), run_count=sum(item.count for item in recorded))


def _field_entity(node: FieldNode) -> MetadataEntity:
    return entity([("namespace", node.namespace), (node.dataset_type, node.dataset), ("field", node.field)])


def field_key(node: FieldNode) -> str:
    """The metadata entity key of a field (``namespace=ns,dataset=ds,field=f``)."""
    return _field_entity(node).render()


def assigned_tags(conn: psycopg.Connection, fields: Iterable[FieldNode]) -> dict[FieldNode, list[tuple[str, str]]]:
    """The tags people (or programs) assigned to each of ``fields``: (tag, scope), in order."""
    by_key = {field_key(node): node for node in fields}
    if not by_key:
        return {}
    rows = conn.execute("""select entity_key, key, scope from lineage.metadata
                           where entity_key = any(%s) and kind = 'tag' order by entity_key, key, scope""",
                        (list(by_key),)).fetchall()
    found: dict[FieldNode, list[tuple[str, str]]] = {}
    for entity_key, tag, scope in rows:
        found.setdefault(by_key[entity_key], []).append((tag, scope))
    return found


def tagged_fields(conn: psycopg.Connection, tags: Iterable[str]) -> dict[str, list[FieldNode]]:
    """Each of ``tags``: the fields it is assigned to (the origins of its propagation)."""
    rows = conn.execute(
        """select key, entity from lineage.metadata
           where entity_type = 'field' and kind = 'tag' and key = any(%s) order by key, entity_key""",
        (list(tags),)).fetchall()
    found: dict[str, list[FieldNode]] = {}
    for tag, parts in rows:
        pairs = [(part["key"], part["value"]) for part in parts]  # MetadataEntity.to_dict()'s details
        named = dict(pairs)
        kind = "stream" if "stream" in named else "dataset"
        if "namespace" in named and kind in named and "field" in named and len(pairs) == 3:
            found.setdefault(tag, []).append(FieldNode(named["namespace"], kind, named[kind], named["field"]))
    return found


def replace_propagated(conn: psycopg.Connection, propagations: Sequence[Propagation], start: datetime,
                       end: datetime) -> int:
    """Rewrite ``lineage.propagated_tags`` whole with ``propagations`` (in the open transaction)."""
    conn.execute("delete from lineage.propagated_tags")
    rows = [(r.field.namespace, r.field.dataset_type, r.field.dataset, r.field.field, r.tag,
             r.origin.namespace, r.origin.dataset_type, r.origin.dataset, r.origin.field, len(r.path),
             _path_json(r.path), sorted({run for edge in r.path for run in edge.runs}),
             datetime.fromtimestamp(min(edge.first_seen for edge in r.path)).astimezone(),
             datetime.fromtimestamp(max(edge.last_seen for edge in r.path)).astimezone(), start, end,
             field_key(r.field), orjson.dumps(_field_entity(r.field).to_dict()["details"]).decode(),
             dataset_entity(r.field.namespace, r.field.dataset_type, r.field.dataset).render())
            for propagation in propagations for r in propagation.reached]
    with conn.cursor() as cursor:
        cursor.executemany(
            """insert into lineage.propagated_tags (namespace, dataset_type, dataset, field, tag, origin_namespace,
                   origin_type, origin_dataset, origin_field, levels, path, runs, first_seen, last_seen,
                   window_start, window_end, field_key, field_details, dataset_key)
               values (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
               on conflict do nothing""", rows)
    return len(rows)


def propagated_digest(conn: psycopg.Connection) -> str:
    """A digest of what the tags reach (fields, tags, origins, levels), to tell a change."""
    row = conn.execute(
        """select md5(coalesce(string_agg(t::text, ',' order by t::text), '')) from (
               select namespace, dataset_type, dataset, field, tag, origin_namespace, origin_type, origin_dataset,
                      origin_field, levels from lineage.propagated_tags) t""").fetchone()
    return str(row[0]) if row else ""


def _path_json(path: Sequence[Edge]) -> str:
    return orjson.dumps([edge_view(edge) for edge in path]).decode()

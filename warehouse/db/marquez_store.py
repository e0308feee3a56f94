"""Reads of Marquez's read API (issue 34): datasets and jobs by their OpenLineage identity, the
OpenLineage namespaces they make, a job's runs, a run by id, schema versions and tags, in the
rows ``warehouse.service.marquez`` shapes.

Selection happens in two steps: a cheap query names the candidates (of the namespaces the
caller reads something in), the route keeps those the caller may read and pages them, and the
page's details are read in one query each. Of a namespace deleted and awaiting its cleanup,
nothing from before its re-creation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg

from lineage.ids import DataRef, ProgramRef
from lineage.model.metadata_entity import dataset_entity
from lineage.naming.identity import (
    NATIVE_SCHEME,
    PROGRAM_TYPE,
    DatasetIdentity,
    exported_job,
    parse_dataset,
)
from warehouse.db.lineage_store import run_in_window
from warehouse.service.marquez import DatasetRow, DatasetUse, ProgramRow, RunRow, SchemaField, SchemaVersion

# The raw (escaped) OpenLineage namespace of a dataset row, as ``exported_dataset`` derives it
# (None for a name of our own client); ``parse_dataset`` unescapes it.
_RAW_NAMESPACE = r"""
    case when d.dataset_type <> 'dataset' then null
         when d.dataset ~ '^[A-Za-z][A-Za-z0-9+.-]*://' then
              case when strpos(substr(d.dataset, strpos(d.dataset, '://') + 3), '/') > 0
                   then substring(d.dataset from '^[A-Za-z][A-Za-z0-9+.-]*://')
                        || split_part(substr(d.dataset, strpos(d.dataset, '://') + 3), '/', 1) end
         when strpos(d.dataset, '/') > 0 then split_part(d.dataset, '/', 1) end"""
# Hidden while a deletion of its namespace awaits its cleanup: what is older than its re-creation.
_VISIBLE = """not exists (select from lineage.namespace_guards g
                          where g.namespace = {alias}.namespace and {at} < g.visible_since)"""


@dataclass(frozen=True, slots=True)
class DatasetName:
    key: int
    namespace: str
    dataset_type: str
    name: str


@dataclass(frozen=True, slots=True)
class ProgramName:
    key: int
    namespace: str
    application: str
    program_type: str
    program: str


def ol_namespaces(conn: psycopg.Connection, namespaces: Sequence[str] | None
                  ) -> list[tuple[str, str, datetime, datetime]]:
    """Each OpenLineage namespace of a dataset or a job in warehouse namespace ``namespaces``
    (None: all), with that warehouse namespace, its first and latest creation time."""
    rows = conn.execute(f"""
        select d.namespace, d.dataset_type, {_RAW_NAMESPACE} as raw, min(d.created_at), max(d.created_at)
        from lineage.datasets d
        where (%(all)s or d.namespace = any(%(namespaces)s)) and {_VISIBLE.format(alias='d', at='d.created_at')}
        group by 1, 2, 3""", {"all": namespaces is None, "namespaces": list(namespaces or ())}).fetchall()
    found = []
    for namespace, dataset_type, raw, first, last in rows:
        if raw is not None:
            parsed = parse_dataset(raw + "/x")
            assert parsed is not None
            found.append((parsed.namespace, namespace, first, last))
        else:
            found.append((NATIVE_SCHEME + namespace + ("/streams" if dataset_type == "stream" else ""), namespace,
                          first, last))
    rows = conn.execute(f"""
        select case when p.program_type = %(ol)s then p.application
                    else %(scheme)s || p.namespace || '/' || p.application end, p.namespace,
               min(p.created_at), max(p.created_at)
        from lineage.programs p
        where (%(all)s or p.namespace = any(%(namespaces)s)) and {_VISIBLE.format(alias='p', at='p.created_at')}
        group by 1, 2""", {"all": namespaces is None, "namespaces": list(namespaces or ()), "ol": PROGRAM_TYPE,
                           "scheme": NATIVE_SCHEME}).fetchall()
    return found + [tuple(row) for row in rows]


def _rendered_prefix(ol_namespace: str) -> str:
    return DatasetIdentity(ol_namespace, "").render()


def dataset_names(conn: psycopg.Connection, ol_namespace: str, namespaces: Sequence[str] | None,
                  name: str | None = None) -> list[DatasetName]:
    """The datasets of OpenLineage namespace ``ol_namespace`` (or the one named ``name`` in it)
    in warehouse namespaces ``namespaces`` (None: all), by name."""
    params: dict[str, Any] = {"all": namespaces is None, "namespaces": list(namespaces or ())}
    if ol_namespace.startswith(NATIVE_SCHEME):
        own, _, kind = ol_namespace[len(NATIVE_SCHEME):].partition("/")
        if kind not in ("", "streams"):
            return []
        where = "d.namespace = %(own)s and d.dataset_type = %(type)s"
        params.update(own=own, type="stream" if kind else "dataset")
        if name is not None:
            where += " and d.dataset = %(name)s"
            params["name"] = name
    else:
        prefix = _rendered_prefix(ol_namespace)
        where = "d.dataset_type = 'dataset' and starts_with(d.dataset, %(prefix)s)"
        params["prefix"] = prefix
        if name is not None:
            where = "d.dataset_type = 'dataset' and d.dataset = %(name)s"
            params["name"] = prefix + name
    rows = conn.execute(f"""
        select d.dataset_key, d.namespace, d.dataset_type, d.dataset from lineage.datasets d
        where {where} and (%(all)s or d.namespace = any(%(namespaces)s))
          and {_VISIBLE.format(alias='d', at='d.created_at')}
        order by d.dataset, d.namespace""", params).fetchall()
    return [DatasetName(*row) for row in rows]


_DATASET_DETAILS = """
    select d.dataset_key, d.namespace, d.dataset_type, d.dataset, d.created_at, {times}
           v.version, v.created_at, v.schema,
           array(select m.key from lineage.metadata m where m.entity_key = d.entity_key and m.kind = 'tag'
                 group by m.key order by m.key),
           (select coalesce(jsonb_object_agg(f.name, f.facet), '{}') from lineage.dataset_facets f
            where f.dataset_key = d.dataset_key)
    from lineage.datasets d
    left join lateral (select version, created_at, schema from lineage.dataset_schema_versions s
                       where s.entity_key = d.entity_key order by version desc limit 1) v on true
    where d.dataset_key = any(%(keys)s)"""
_FIELD_TAGS = """
    select d.dataset_key, m.entity, m.key from lineage.datasets d
    join lineage.metadata m on m.namespace = d.namespace and m.entity_type = 'field' and m.kind = 'tag'
                           and starts_with(m.entity_key, d.entity_key || ',field=')
    where d.dataset_key = any(%(keys)s)
    order by m.key"""


def schema_fields(schema: Any) -> tuple[SchemaField, ...]:
    if not isinstance(schema, dict):
        return ()
    return tuple(SchemaField(item["name"], item.get("type"), item.get("description"))
                 for item in schema.get("fields", ()) if isinstance(item, dict) and "name" in item)


_TIMES = """(select max(a.accessed_at) from lineage.dataset_accesses a where a.dataset_key = d.dataset_key),
           (select max(a.accessed_at) from lineage.dataset_accesses a
            where a.dataset_key = d.dataset_key and a.access in ('write', 'read_write')),"""


def dataset_rows(conn: psycopg.Connection, keys: Sequence[int], *, times: bool = True) -> dict[int, DatasetRow]:
    """The details of datasets ``keys``: latest schema, tags (its own and its fields'), facets, and
    with ``times`` its latest access and write (all time: a scan of its accesses; a lineage graph
    takes them from its walk instead)."""
    if not keys:
        return {}
    field_tags: dict[int, dict[str, list[str]]] = {}
    for key, field_entity, tag in conn.execute(_FIELD_TAGS, {"keys": list(keys)}).fetchall():
        field_name = next((part["value"] for part in field_entity if part["key"] == "field"), None)
        if field_name is not None:
            field_tags.setdefault(key, {}).setdefault(field_name, []).append(tag)
    found = {}
    statement = _DATASET_DETAILS.replace("{times}", _TIMES if times else "null::timestamptz, null::timestamptz,")
    for row in conn.execute(statement, {"keys": list(keys)}).fetchall():
        key = row[0]
        found[key] = DatasetRow(
            namespace=row[1], dataset_type=row[2], name=row[3], created_at=row[4], last_access=row[5],
            last_write=row[6], schema_version=row[7], schema_at=row[8], fields=schema_fields(row[9]),
            tags=tuple(row[10]), field_tags={k: tuple(v) for k, v in field_tags.get(key, {}).items()},
            facets=row[11])
    return found


def schema_versions(conn: psycopg.Connection, row: DatasetRow) -> list[SchemaVersion]:
    """The dataset's schema versions, newest first."""
    key = dataset_entity(row.namespace, row.dataset_type, row.name).render()
    return [SchemaVersion(version, created_at, schema_fields(schema)) for version, created_at, schema in conn.execute(
        """select version, created_at, schema from lineage.dataset_schema_versions where entity_key = %s
           order by version desc""", (key,)).fetchall()]


def program_names(conn: psycopg.Connection, ol_namespace: str, namespaces: Sequence[str] | None,
                  name: str | None = None) -> list[ProgramName]:
    """The programs of OpenLineage job namespace ``ol_namespace`` (or the job named ``name`` in it)."""
    params: dict[str, Any] = {"all": namespaces is None, "namespaces": list(namespaces or ()), "ol": PROGRAM_TYPE}
    if ol_namespace.startswith(NATIVE_SCHEME):
        own, _, application = ol_namespace[len(NATIVE_SCHEME):].partition("/")
        where = "p.namespace = %(own)s and p.application = %(application)s and p.program_type <> %(ol)s"
        params.update(own=own, application=application)
        if name is not None:
            program_type, _, program = name.partition("/")
            where += " and p.program_type = %(type)s and p.program = %(program)s"
            params.update(type=program_type, program=program)
    else:
        where = "p.application = %(application)s and p.program_type = %(ol)s"
        params["application"] = ol_namespace
        if name is not None:
            where += " and p.program = %(program)s"
            params["program"] = name
    rows = conn.execute(f"""
        select p.program_key, p.namespace, p.application, p.program_type, p.program from lineage.programs p
        where {where} and (%(all)s or p.namespace = any(%(namespaces)s))
          and {_VISIBLE.format(alias='p', at='p.created_at')}
        order by p.program_type, p.program, p.namespace""", params).fetchall()
    return [ProgramName(*row) for row in rows]


_RUNS = """
    select r.run_key, r.run_id, r.status, r.started_at, r.stopped_at, r.first_event_at,
           (select coalesce(jsonb_object_agg(f.name, f.facet), '{}') from lineage.run_facets f
            where f.run_key = r.run_key and f.facet_of = 'run')
    from lineage.runs r"""
_USES = """
    select a.run_key, a.access, d.namespace, d.dataset_type, d.dataset,
           (select max(v.version) from lineage.dataset_schema_versions v
            where v.entity_key = d.entity_key and v.created_at <= coalesce(r.stopped_at, r.run_at, now()))
    from lineage.dataset_accesses a
    join lineage.runs r on r.run_key = a.run_key
    join lineage.datasets d on d.dataset_key = a.dataset_key
    where a.run_key = any(%(runs)s)
    order by d.namespace, d.dataset"""


def _run_rows(conn: psycopg.Connection, where: str, params: dict[str, Any]) -> list[tuple[int, RunRow]]:
    rows = conn.execute(f"{_RUNS} {where}", params).fetchall()
    keys = [row[0] for row in rows]
    inputs: dict[int, list[DatasetUse]] = {}
    outputs: dict[int, list[DatasetUse]] = {}
    if keys:
        for run_key, access, namespace, dataset_type, name, version in conn.execute(_USES, {"runs": keys}):
            use = DatasetUse(DataRef(namespace, dataset_type, name), version)
            if access in ("read", "read_write"):
                inputs.setdefault(run_key, []).append(use)
            if access in ("write", "read_write"):
                outputs.setdefault(run_key, []).append(use)
    return [(row[0], RunRow(row[1], row[2], row[3], row[4], row[5], row[6], tuple(inputs.get(row[0], ())),
                            tuple(outputs.get(row[0], ())))) for row in rows]


def program_runs(conn: psycopg.Connection, program_key: int, limit: int, offset: int) -> tuple[int, list[RunRow]]:
    """A program's runs, newest first, a page of them, and how many there are."""
    total = conn.execute("select count(*) from lineage.runs r where r.program_key = %s and " + _VISIBLE.format(
        alias="r", at="coalesce(r.run_at, now())"), (program_key,)).fetchone()
    runs = _run_rows(conn, """where r.program_key = %(program)s and {visible}
                              order by r.run_at desc nulls last, r.run_id limit %(limit)s offset %(offset)s""".format(
        visible=_VISIBLE.format(alias="r", at="coalesce(r.run_at, now())")),
        {"program": program_key, "limit": limit, "offset": offset})
    return (total[0] if total else 0), [row for _, row in runs]


def program_rows(conn: psycopg.Connection, programs: Sequence[ProgramName]) -> list[ProgramRow]:
    """The details of ``programs``: the latest run, its job facets and parent, the program's tags."""
    if not programs:
        return []
    keys = [p.key for p in programs]
    latest = conn.execute("""
        select p.program_key, p.created_at, l.run_key, l.run_id, l.status, l.started_at, l.stopped_at, l.first_event_at,
               (select coalesce(jsonb_object_agg(f.name, f.facet), '{}') from lineage.run_facets f
                where f.run_key = l.run_key and f.facet_of = 'job'),
               (select jsonb_build_array(q.namespace, q.application, q.program_type, q.program, q.run_id)
                from lineage.run_parents q where q.run_key = l.run_key and q.relation = 'parent'),
               array(select m.key from lineage.metadata m where m.entity_key = p.entity_key and m.kind = 'tag'
                     group by m.key order by m.key)
        from lineage.programs p
        left join lateral (select * from lineage.runs r where r.program_key = p.program_key
                           order by r.run_at desc nulls last limit 1) l on true
        where p.program_key = any(%(keys)s)""", {"keys": keys}).fetchall()
    runs = dict(_run_rows(conn, "where r.run_key = any(%(runs)s)",
                          {"runs": [row[2] for row in latest if row[2] is not None]}))
    by_key = {row[0]: row for row in latest}
    found = []
    for program in programs:
        row = by_key[program.key]
        parent, parent_program = None, None
        if row[9] is not None:
            namespace, application, program_type, name, parent_run = row[9]
            parent = (*exported_job(namespace, application, program_type, name), parent_run)
            parent_program = ProgramRef(namespace, application, program_type, name)
        found.append(ProgramRow(program.namespace, program.application, program.program_type, program.program,
                                row[1], runs.get(row[2]) if row[2] is not None else None, row[8], parent,
                                tuple(row[10]), parent_program))
    return found


def runs_by_id(conn: psycopg.Connection, run_id: str, namespaces: Sequence[str] | None
               ) -> list[tuple[ProgramName, RunRow]]:
    """The runs with id ``run_id`` (of any program) in warehouse namespaces ``namespaces``."""
    rows = conn.execute("""
        select r.run_key, p.program_key, p.namespace, p.application, p.program_type, p.program
        from lineage.runs r join lineage.programs p on p.program_key = r.program_key
        where r.run_id = %(id)s and (%(all)s or r.namespace = any(%(namespaces)s))
          and {visible}
        order by p.namespace, p.application, p.program_type, p.program""".format(
            visible=_VISIBLE.format(alias="r", at="coalesce(r.run_at, now())")),
                        {"id": run_id, "all": namespaces is None, "namespaces": list(namespaces or ())}).fetchall()
    if not rows:
        return []
    runs = dict(_run_rows(conn, "where r.run_key = any(%(runs)s)", {"runs": [row[0] for row in rows]}))
    return [(ProgramName(*row[1:]), runs[row[0]]) for row in rows]


def tags(conn: psycopg.Connection, namespaces: Sequence[str] | None, entity_keys: Sequence[str] = ()) -> list[str]:
    """Each tag assigned to something in warehouse namespaces ``namespaces`` (None: all) or to an
    entity of ``entity_keys`` (grant keys: an entity and what is under it)."""
    return [row[0] for row in conn.execute(
        """select distinct m.key from lineage.metadata m
           where m.kind = 'tag' and (%(all)s or m.namespace = any(%(namespaces)s) or m.grant_key = any(%(keys)s))
           order by m.key""",
        {"all": namespaces is None, "namespaces": list(namespaces or ()), "keys": list(entity_keys)}).fetchall()]


def entities_in(conn: psycopg.Connection, namespaces: Sequence[str]
                ) -> tuple[list[tuple[DataRef, datetime]], list[tuple[ProgramRef, datetime]]]:
    """Every dataset and program of warehouse namespaces ``namespaces``, with its creation time
    (for a caller who may read only some of them)."""
    datasets = conn.execute(f"""
        select d.namespace, d.dataset_type, d.dataset, d.created_at from lineage.datasets d
        where d.namespace = any(%s) and {_VISIBLE.format(alias='d', at='d.created_at')}""",
                            (list(namespaces),)).fetchall()
    programs = conn.execute(f"""
        select p.namespace, p.application, p.program_type, p.program, p.created_at from lineage.programs p
        where p.namespace = any(%s) and {_VISIBLE.format(alias='p', at='p.created_at')}""",
                            (list(namespaces),)).fetchall()
    return ([(DataRef(*row[:3]), row[3]) for row in datasets], [(ProgramRef(*row[:4]), row[4]) for row in programs])


def programs_created(conn: psycopg.Connection, refs: Sequence[ProgramRef]) -> dict[ProgramRef, datetime]:
    """When each of programs ``refs`` was first recorded (those that exist)."""
    if not refs:
        return {}
    rows = conn.execute("""
        select p.namespace, p.application, p.program_type, p.program, p.created_at
        from unnest(%s::text[], %s::text[], %s::text[], %s::text[]) as k(namespace, application, program_type, program)
        join lineage.programs p using (namespace, application, program_type, program)""",
                        ([r.namespace for r in refs], [r.application for r in refs], [r.type for r in refs],
                         [r.name for r in refs])).fetchall()
    return {ProgramRef(*row[:4]): row[4] for row in rows}


def program_datasets(conn: psycopg.Connection, program_key: int, window: tuple[datetime, datetime]) -> list[DataRef]:
    """The datasets the program's runs in ``window`` read or wrote, and those it declares it reads
    or writes (declared lineage, a JobEvent's: declared before the window's end)."""
    rows = conn.execute(f"""
        select d.namespace, d.dataset_type, d.dataset
        from lineage.runs r
        join lineage.dataset_accesses a on a.run_key = r.run_key
        join lineage.datasets d on d.dataset_key = a.dataset_key
        where r.program_key = %(program)s and {run_in_window('r')}
        union
        select d.namespace, d.dataset_type, d.dataset
        from lineage.declared_accesses a join lineage.datasets d using (dataset_key)
        where a.program_key = %(program)s and a.first_declared_at < %(end)s
        order by 1, 2, 3""", {"program": program_key, "start": window[0], "end": window[1]}).fetchall()
    return [DataRef(*row) for row in rows]


def written_fields(conn: psycopg.Connection, namespace: str, dataset_type: str, name: str) -> list[str]:
    """The fields any run's column lineage wrote to the dataset."""
    return [row[0] for row in conn.execute("""
        select distinct e.field from lineage.field_operation_sets s
        join lineage.field_edges e on e.set_fingerprint = s.fingerprint
        where (s.destination_namespace, s.destination_type, s.destination) = (%s, %s, %s)
        order by 1""", (namespace, dataset_type, name)).fetchall()]

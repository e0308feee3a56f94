"""The cleanup after a namespace deletion (the *System Applications (CDAP 6.0)* design, "Namespace
Deletion"), run by the ``lineage_namespace_cleanup`` DAG on the asset event the delete emits.

For each deletion not cleaned yet, one transaction removes the namespace's records from before
the deletion: metadata and its change records, watermarks and schema versions, runs of its
programs (with their parents, facets and warnings) and accesses to its datasets (with their
field lineage), declared accesses of its programs or to its datasets, dataset facets and
aliases, the programs and datasets left without any, operation sets writing into it, and
compacted events still pending. What a namespace re-created since then recorded is kept. Once
the marts are rebuilt, ``finish`` marks the deletion cleaned, which lifts the race guard, and
re-derives the namespace's search rows.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from datetime import datetime

import orjson
import psycopg
from psycopg import sql

from warehouse.db import metadata_search
from warehouse.db.compaction_store import lock_kept_event_parts
from warehouse.db.connection import connect
from warehouse.db.field_lineage_staging import lock_chunk, named_documents, remove_unnamed_documents
from warehouse.service.authorization import namespace_key

log = logging.getLogger(__name__)

# (label, statement) in dependency order; %(ns)s is the namespace, %(before)s the deletion time,
# %(key)s the namespace's entity key: its entities' keys are that key or start with it and ",".
# starts_with, not LIKE: a namespace name may hold "_", LIKE's any-character wildcard.
_OF_NAMESPACE = "(entity_key = %(key)s or starts_with(entity_key, %(key)s || ','))"
_STEPS: list[tuple[str, str]] = [
    ("metadata", "delete from lineage.metadata where namespace = %(ns)s and updated_at < %(before)s"),
    ("metadata_changes", f"""delete from lineage.metadata_changes
                            where {_OF_NAMESPACE} and changed_at < %(before)s"""),
    ("metadata_event_times", f"""delete from lineage.metadata_event_times
                                where {_OF_NAMESPACE} and written_at < %(before)s"""),
    ("dataset_schema_versions", """delete from lineage.dataset_schema_versions
                                   where namespace = %(ns)s and created_at < %(before)s"""),
    ("pending_events", "delete from lineage.pending_events where namespace = %(ns)s and event_time < %(before)s"),
    # runs of the namespace's programs from before the deletion, and what hangs on them
    ("old_runs", """create temp table old_runs on commit drop as
                    select run_key from lineage.runs
                    where namespace = %(ns)s and coalesce(started_at, stopped_at, '-infinity') < %(before)s"""),
    ("field_lineage_runs", """delete from lineage.field_lineage_runs f
                              where f.run_key in (select run_key from old_runs)
                                 or f.dataset_key in (select dataset_key from lineage.datasets where namespace = %(ns)s)
                                    and f.recorded_at < %(before)s"""),
    ("dataset_accesses", """delete from lineage.dataset_accesses a
                            where a.run_key in (select run_key from old_runs)
                               or a.dataset_key in (select dataset_key from lineage.datasets where namespace = %(ns)s)
                                  and a.accessed_at < %(before)s"""),
    ("declared_accesses", """delete from lineage.declared_accesses a
                             where a.declared_at < %(before)s
                               and (a.program_key in (select program_key from lineage.programs where namespace = %(ns)s)
                                    or a.dataset_key in (select dataset_key from lineage.datasets
                                                         where namespace = %(ns)s))"""),
    ("run_parents", "delete from lineage.run_parents where run_key in (select run_key from old_runs)"),
    ("run_facets", "delete from lineage.run_facets where run_key in (select run_key from old_runs)"),
    ("run_warnings", "delete from lineage.run_warnings where run_key in (select run_key from old_runs)"),
    ("openlineage_events", "delete from lineage.openlineage_events where run_key in (select run_key from old_runs)"),
    ("dataset_facets", """delete from lineage.dataset_facets f
                          where f.dataset_key in (select dataset_key from lineage.datasets where namespace = %(ns)s)
                            and f.event_time < %(before)s"""),
    ("dataset_incidents", """delete from lineage.dataset_incidents
                             where namespace = %(ns)s and created_at < %(before)s"""),
    ("dataset_aliases", """delete from lineage.dataset_aliases a
                           where (a.namespace = %(ns)s
                                  or a.dataset_key in (select dataset_key from lineage.datasets
                                                       where namespace = %(ns)s))
                             and a.event_time < %(before)s"""),
    ("runs", """delete from lineage.runs r using old_runs o where r.run_key = o.run_key
                and not exists (select from lineage.dataset_accesses a where a.run_key = r.run_key)
                and not exists (select from lineage.field_lineage_runs f where f.run_key = r.run_key)"""),
    ("program_declarations", """delete from lineage.program_declarations d
                                where d.declared_at < %(before)s
                                  and d.program_key in (select program_key from lineage.programs
                                                        where namespace = %(ns)s)"""),
    ("programs", """delete from lineage.programs p where p.namespace = %(ns)s and p.created_at < %(before)s
                    and not exists (select from lineage.runs r where r.program_key = p.program_key)
                    and not exists (select from lineage.declared_accesses a where a.program_key = p.program_key)
                    and not exists (select from lineage.program_declarations d where d.program_key = p.program_key)"""),
    ("datasets", """delete from lineage.datasets d where d.namespace = %(ns)s and d.created_at < %(before)s
                    and not exists (select from lineage.dataset_accesses a where a.dataset_key = d.dataset_key)
                    and not exists (select from lineage.declared_accesses a where a.dataset_key = d.dataset_key)
                    and not exists (select from lineage.field_lineage_runs f where f.dataset_key = d.dataset_key)
                    and not exists (select from lineage.dataset_facets f where f.dataset_key = d.dataset_key)
                    and not exists (select from lineage.dataset_aliases a where a.dataset_key = d.dataset_key)"""),
    # operation sets writing into the namespace that no run row uses any more
    ("old_sets", """create temp table old_sets on commit drop as
                    select fingerprint from lineage.field_operation_sets s
                    where s.destination_namespace = %(ns)s
                      and not exists (select from lineage.field_lineage_runs f
                                      where f.set_fingerprint = s.fingerprint)"""),
    # the path and flow documents those sets name: removed once no row names them (_remove_unused_documents)
    ("old_documents", "create temp table old_documents on commit drop as "
                      + named_documents("select * from old_sets")),
    ("field_path_sources", "delete from lineage.field_path_sources where set_fingerprint in (select * from old_sets)"),
    ("field_source_flows",
     "delete from lineage.field_source_flow_rows where set_fingerprint in (select * from old_sets)"),
    ("field_edges", "delete from lineage.field_edges where set_fingerprint in (select * from old_sets)"),
    ("field_paths", "delete from lineage.field_path_rows where set_fingerprint in (select * from old_sets)"),
    ("field_operation_sets", "delete from lineage.field_operation_sets where fingerprint in (select * from old_sets)"),
]
_TEMPORARY = {"old_runs", "old_sets", "old_documents"}


@dataclass(frozen=True)
class CleanupSummary:
    deletion_id: int
    namespace: str
    removed: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    def render(self) -> str:
        rows = ", ".join(f"{table} {count}" for table, count in self.removed.items() if count) or "nothing"
        return (f"namespace {self.namespace!r} (deletion {self.deletion_id}): removed {sum(self.removed.values())} "
                f"rows ({rows}) in {self.seconds:.1f}s")


def pending(conn: psycopg.Connection) -> list[tuple[int, str, datetime]]:
    """Deletions not cleaned yet, oldest first: (deletion id, namespace, deletion time)."""
    return [(int(i), str(ns), at) for i, ns, at in conn.execute(
        """select deletion_id, namespace, deleted_at from lineage.namespace_deletions
           where cleaned_at is null order by deletion_id""").fetchall()]


def clean(conn: psycopg.Connection, deletion_id: int, namespace: str, deleted_at: datetime) -> CleanupSummary:
    """Remove the namespace's records from before ``deleted_at`` in one transaction of its own
    (``conn`` must be in autocommit mode, so that each deletion commits or fails alone); idempotent."""
    if not conn.autocommit:
        raise ValueError("namespace cleanup needs an autocommit connection: each deletion is its own transaction")
    began = time.perf_counter()
    params = {"ns": namespace, "before": deleted_at, "key": namespace_key(namespace)}
    removed: dict[str, int] = {}
    with conn.transaction():
        # the field lineage lock first: the documents the removed sets named go in this transaction
        # (a field lineage job re-using one for a set of its own commits first, new ones wait)
        lock_chunk(conn)
        for label, statement in _STEPS:
            started = time.perf_counter()
            count = conn.execute(sql.SQL(statement), params).rowcount
            log.info("cleanup %s: %s: %d rows in %.1fs", namespace, label, count, time.perf_counter() - started)
            if label not in _TEMPORARY:
                removed[label] = count
        removed.update(_remove_unused_documents(conn))
        # "on commit drop" too, but not inside a caller's savepoint
        conn.execute("drop table pg_temp.old_runs, pg_temp.old_sets, pg_temp.old_documents")
        conn.execute("update lineage.namespace_deletions set removed = %s where deletion_id = %s",
                     (orjson.dumps(removed).decode(), deletion_id))
    removed["openlineage_parts"] = _remove_unused_parts(conn, namespace)
    removed["namespace_lists"] = _remove_unused_namespace_lists(conn, namespace)
    return CleanupSummary(deletion_id, namespace, removed, time.perf_counter() - began)


def _remove_unused_parts(conn: psycopg.Connection, namespace: str) -> int:
    """Remove the parts of the namespace's kept OpenLineage events (migration 0041) that no
    remaining event of its runs uses, in a transaction of its own once the events are gone: it
    waits for a running compaction to commit (which may be re-using such a part for an event of
    its own) and keeps new ones waiting until it ends. Left undone (an error here), the parts
    only take room until the namespace's next cleanup."""
    started = time.perf_counter()
    with conn.transaction():
        lock_kept_event_parts(conn)
        conn.execute("set local jit = off")
        count = conn.execute(
            """with still_used as (
                   select distinct u.part_id
                   from lineage.openlineage_events o
                   join lineage.runs r on r.run_key = o.run_key
                   cross join lateral lineage.openlineage_part_ids(
                       lineage.kept_skeleton(o.event_type, o.body, o.run_facets, o.rest)) as u(part_id)
                   where r.namespace = %(ns)s)
               delete from lineage.openlineage_parts p
               where p.namespace = %(ns)s
                 and not exists (select from still_used s where s.part_id = p.part_id)""",
            {"ns": namespace}).rowcount
    log.info("cleanup %s: openlineage_parts: %d rows in %.1fs", namespace, count, time.perf_counter() - started)
    return count


def _remove_unused_namespace_lists(conn: psycopg.Connection, namespace: str) -> int:
    """Remove the sets of namespaces naming the namespace (migration 0046) that no kept event
    uses any more, as the parts are: after a running compaction has committed."""
    with conn.transaction():
        lock_kept_event_parts(conn)
        return conn.execute(
            """delete from lineage.namespace_lists l
               where %(ns)s = any(l.namespaces)
                 and not exists (select from lineage.openlineage_events o where o.namespace_list = l.list_key)""",
            {"ns": namespace}).rowcount


def _remove_unused_documents(conn: psycopg.Connection) -> dict[str, int]:
    """Remove the field path and flow documents the removed operation sets named
    (``old_documents``) that no row names any more; in the cleanup's transaction, which holds the
    field lineage lock, so a retry after a failure finds them again."""
    started = time.perf_counter()
    removed = remove_unnamed_documents(conn, "old_documents")
    log.info("cleanup: documents: %s in %.1fs", removed, time.perf_counter() - started)
    return removed


def clean_pending(database_url: str) -> list[CleanupSummary]:
    """Clean every deletion not cleaned yet, oldest first, each in its own transaction: one that
    fails leaves those before it done (the next run retries it and those after it)."""
    with connect(database_url, autocommit=True) as conn:
        return [clean(conn, *deletion) for deletion in pending(conn)]


def finish(database_url: str, deletion_ids: list[int]) -> None:
    """Mark the deletions cleaned (after the marts were rebuilt): the race guard lifts, and the
    namespace's search rows are re-derived without it."""
    with connect(database_url) as conn, conn.transaction():
        namespaces = [row[0] for row in conn.execute(
            """update lineage.namespace_deletions set cleaned_at = clock_timestamp()
               where deletion_id = any(%s) and cleaned_at is null returning namespace""", (deletion_ids,)).fetchall()]
        for namespace in sorted(set(namespaces)):
            metadata_search.refresh_namespace(conn, namespace)

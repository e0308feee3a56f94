"""Metadata search and suggest over the search index (``lineage.search_index``), and the index's
upkeep: this module is its one writer.

The index holds the rows of the dbt view ``lineage_marts.metadata_search_terms`` (what a search
row is, derived from the staging models). ``rebuild`` replaces every row after each marts build
(``warehouse.pipeline.dbt_build``); between builds each API write re-derives its entity's rows
in its own transaction (``refresh``; ``forget_namespace`` and ``refresh_namespace`` for a
namespace's deletion and cleanup). A rebuild builds a new table aside and swaps it in; the
writes made meanwhile refresh the live table and note what they touched, which the rebuild
re-derives in its table just before the swap: nothing is lost, no margin of "changed since the
rebuild began" is needed, and a write waits for a rebuild only during that moment (the index's
lock: exclusive for the rebuild's start and swap, shared for every write).

Every term is a prefix range scan on an index of lower-cased values (``term``, or
``(key_term, term)`` for ``key:value``, ``tags:`` and ``field:``); entities are scored in one
statement (matched terms, then terms equal to a name of the entity, then exact matches) and only
the page's entities are read in full.
Suggest walks the same indexes as a skip scan (one index probe per distinct suggestion), so
its cost does not grow with the number of entities sharing a prefix.

Statements are never prepared: a prefix LIKE uses the index only when planned with its
pattern, and psycopg would otherwise switch a repeated statement to a generic plan (measured:
suggest went from 0.2 ms to 2 s per call after five calls).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg import sql
from psycopg.pq import TransactionStatus

from lineage.errors import MartNotBuiltError
from lineage.failpoints import failpoint
from lineage.model.metadata_entity import parse
from warehouse.db.connection import without_jit
from warehouse.service.authorization import Readable
from warehouse.service.search_query import Term, like_escape

INDEX = "lineage.search_index"  # migration 0022
BUILD = "lineage.search_index_build"  # the last rebuild's time and rows
REBUILD = "lineage.search_index_rebuild"  # the rebuild in progress (migration 0023)
PENDING = "lineage.search_index_pending"  # what the writes touched since it started
ASIDE = "lineage.search_index_aside"  # the table a rebuild builds, then swaps in (in its transaction only)
RETIRED = "lineage.search_index_retired"  # the table it swapped out, dropped after the swap's commit
TERMS_VIEW = "lineage_marts.metadata_search_terms"  # dbt's
_COLUMNS = ("entity_key, namespace, entity_type, entity_details, scope, kind, key, value, key_term, term, "
            "grant_key")
# ?target= names -> entity types in the index; "external" is every entity outside a namespace.
TARGETS = {"dataset": "dataset", "stream": "stream", "app": "application", "application": "application",
           "program": "program", "program_run": "program_run", "run": "program_run", "field": "field",
           "partition": "partition", "file": "file", "namespace": "namespace", "external": None}
# pg_get_indexdef's answer for an index of the index: made again on the table built aside
_INDEX_DEFINITION = re.compile(r"CREATE (UNIQUE )?INDEX \S+ ON (?:ONLY )?\S+ (USING .+)", re.DOTALL)


def _index_built(conn: psycopg.Connection) -> bool:
    """Whether the index was rebuilt once and its terms view is there (before the first
    rebuild there is nothing to keep current: the rebuild indexes everything). Read after
    taking the index's lock, so a refresh waiting on the first rebuild sees it built."""
    return conn.execute(f"select exists (select from {BUILD}) and to_regclass(%s) is not null",
                        (TERMS_VIEW,)).fetchone() == (True,)


def _check_built(conn: psycopg.Connection) -> None:
    """Raise MartNotBuiltError before the first rebuild. Asked only of an empty answer: until
    then the index holds no row, and a search that finds something pays nothing for it."""
    if conn.execute(f"select exists (select from {BUILD})").fetchone() != (True,):
        raise MartNotBuiltError(f"the search index ({INDEX}) is not built yet: run the lineage_compaction DAG "
                                "(or `make marts`) once")


def _lock(conn: psycopg.Connection, name: str, *, shared: bool = False) -> None:
    function = "pg_advisory_xact_lock_shared" if shared else "pg_advisory_xact_lock"
    conn.execute(sql.SQL("select {}(hashtextextended(%s, 0))").format(sql.Identifier(function)),
                 (f"search-index|{name}",))


def lock_as_a_writer(conn: psycopg.Connection) -> None:
    """Take the index's lock as every write does (shared, to the end of ``conn``'s transaction):
    what a rebuild makes a write wait for (``bench.metadata_search`` measures it)."""
    _lock(conn, "index", shared=True)


def rebuild(conn: psycopg.Connection) -> int | None:
    """Replace every index row with the terms view's without making writes wait: returns the
    rows indexed, or None when dbt has not built the view yet. ``conn`` must be outside a
    transaction (autocommit or idle): the rebuild commits each step.

    1. Under the index's lock, exclusive (it waits for the writes in flight, none waits long
       for it), the rebuild marks itself started (``REBUILD``) and commits.
    2. In one transaction, without the index's lock: a new table (``ASIDE``, the index's columns)
       filled from the view, then its indexes (the live table's, under temporary names); then
       the entities and namespaces the writes noted since step 1 (``PENDING``) re-derived in it
       from the view (their notes taken out).
    3. Still in it, under the index's lock exclusive again, for a moment: the notes made since
       re-derived the same way, the live table renamed out (``RETIRED``) and the new one in its
       place (and their indexes), the mark cleared, the rebuild recorded; commit. The table
       swapped out is dropped after, in a transaction of its own. (Before taking the lock, it
       waits for an autovacuum of the live table to be cancelled: that blocks no one.)

    A write that committed before step 1 is in step 2's rows (read after it committed); one that
    took the lock after step 1 noted what it touched, and step 3 waits for it to commit, then
    re-derives what step 2 has not: the new table is exactly the view's rows. A deleted
    namespace's rows come back from neither (the view hides them from its deletion on).
    Meanwhile writes refresh the live table as always and searches read it; both wait only for
    step 3's moment (the notes of a few hundred milliseconds, the swap). Rebuilds run
    one at a time (the ``rebuild`` lock, taken first by steps 1 and 2-3; a rebuild whose mark
    another one's step 1 replaced in between starts again). A rebuild that fails leaves the
    live table as it was, and its mark is cleared (or replaced by the next rebuild's)."""
    if conn.info.transaction_status != TransactionStatus.IDLE:
        raise ValueError("metadata_search.rebuild commits its steps: pass a connection outside a transaction")
    _drop_retired(conn)  # a rebuild that stopped after its swap
    while True:
        with conn.transaction():
            _lock(conn, "rebuild")
            if conn.execute("select to_regclass(%s)", (TERMS_VIEW,)).fetchone() == (None,):
                return None
            _lock(conn, "index")  # the writes in flight commit first: step 2 reads what they wrote
            row = conn.execute(f"""insert into {REBUILD} (rebuild_id, started_at)
                                   values (txid_current(), clock_timestamp())
                                   on conflict (only_row) do update set rebuild_id = excluded.rebuild_id,
                                                                        started_at = excluded.started_at
                                   returning rebuild_id""").fetchone()
            assert row is not None
            rebuild_id = row[0]
            conn.execute(f"delete from {PENDING}")  # a failed rebuild's notes: step 2 reads what they touched
        failpoint("search_index.started")
        try:
            rows = _build_aside_and_swap(conn, rebuild_id)
        except BaseException:
            _abandon(conn, rebuild_id)
            raise
        if rows is not None:
            _drop_retired(conn)
            return rows


def _build_aside_and_swap(conn: psycopg.Connection, rebuild_id: int) -> int | None:
    """Steps 2 and 3 of ``rebuild``, in one transaction; None when another rebuild started since
    step 1 (this one starts again)."""
    with conn.transaction():
        _lock(conn, "rebuild")
        if conn.execute(f"select rebuild_id from {REBUILD}").fetchone() != (rebuild_id,):
            return None
        indexes = conn.execute("""select index.relname, pg_get_indexdef(index.oid) from pg_index
                                  join pg_class as index on index.oid = pg_index.indexrelid
                                  where pg_index.indrelid = %s::regclass order by index.relname""",
                               (INDEX,)).fetchall()
        conn.execute(f"create table {ASIDE} (like {INDEX} including all excluding indexes)")
        rows = conn.execute(f"insert into {ASIDE} ({_COLUMNS}) select {_COLUMNS} from {TERMS_VIEW}").rowcount
        for name, definition in indexes:
            conn.execute(_aside(name, definition))
        conn.execute(f"analyze {ASIDE}")
        failpoint("search_index.built")
        conn.execute("set local jit = off")  # as a refresh: a few entities
        rows += _catch_up(conn)  # what the writes noted so far, without the lock
        # An autovacuum of the live table (of the rows the last swap brought in) would hold the renames
        # below, and the writes behind them, for deadlock_timeout (1 s) until PostgreSQL cancels it:
        # this waits for that first, and keeps it out, without blocking writes or searches.
        conn.execute(f"lock table {INDEX} in share update exclusive mode")
        _lock(conn, "index")  # the writes in flight commit first, with their notes
        rows += _catch_up(conn)  # the notes since: the lock is held for a few entities
        # the renames wait for the searches in flight (the next ones wait for the commit); the live
        # table is renamed, not dropped: a drop's commit unlinks its files (0.6-1.1 s at 1.3M rows)
        schema, table = INDEX.split(".")
        for old, new in ((INDEX, RETIRED.split(".")[1]), (ASIDE, table)):
            conn.execute(sql.SQL("alter table {} rename to {}").format(sql.SQL(old), sql.Identifier(new)))
        for name, _ in indexes:
            for old, new in ((name, f"{name}_retired"), (_aside_name(name), name)):
                conn.execute(sql.SQL("alter index {} rename to {}").format(
                    sql.Identifier(schema, old), sql.Identifier(new)))
        conn.execute(f"delete from {REBUILD}")
        _record_build(conn, rows)
    return rows


def _record_build(conn: psycopg.Connection, rows: int) -> None:
    """Record a rebuild that indexed ``rows`` rows (``BUILD``'s one row)."""
    conn.execute(f"""insert into {BUILD} (built_at, row_count) values (clock_timestamp(), %(rows)s)
                     on conflict (only_row) do update set built_at = excluded.built_at,
                                                          row_count = excluded.row_count""", {"rows": rows})


def _catch_up(conn: psycopg.Connection) -> int:
    """Re-derive in the table built aside what the writes noted (taking their notes out, in the
    rebuild's transaction: a later write to the same entity notes it again); returns the rows
    it added less those it deleted. Namespaces first: an entity of a noted namespace noted too
    has its rows inserted with the namespace's, then deleted and inserted once more."""
    noted = conn.execute(f"delete from {PENDING} returning namespace, entity_key").fetchall()
    added = 0
    for column, values in (("namespace", sorted({ns for ns, _ in noted if ns is not None})),
                           ("entity_key", sorted({key for _, key in noted if key is not None}))):
        if values:
            where = sql.SQL("where {} = any(%s)").format(sql.Identifier(column))
            added -= conn.execute(sql.SQL("delete from {} {}").format(sql.SQL(ASIDE), where), (values,)).rowcount
            added += conn.execute(sql.SQL("insert into {} ({}) select {} from {} {}").format(
                sql.SQL(ASIDE), sql.SQL(_COLUMNS), sql.SQL(_COLUMNS), sql.SQL(TERMS_VIEW), where), (values,)).rowcount
    return added


def _drop_retired(conn: psycopg.Connection) -> None:
    """Drop the table a rebuild swapped out, in a transaction of its own (under the rebuild's
    lock, not the index's): nothing reads it any more."""
    with conn.transaction():
        _lock(conn, "rebuild")
        conn.execute(f"drop table if exists {RETIRED}")


def _aside_name(name: str) -> str:
    """An index's name on the table built aside (it takes ``name`` back at the swap)."""
    return f"{name}_aside"


def _aside(name: str, definition: str) -> sql.Composed:
    """The live table's index ``name`` (``pg_get_indexdef``'s ``definition``) made on the table
    built aside: every index a migration gave the index is rebuilt, under the same name."""
    match = _INDEX_DEFINITION.fullmatch(definition)
    if match is None:
        raise ValueError(f"cannot rebuild the search index's index {name} aside: {definition}")
    unique, using = match.groups()
    return sql.SQL("create {}index {} on {} {}").format(
        sql.SQL(unique or ""), sql.Identifier(_aside_name(name)), sql.SQL(ASIDE), sql.SQL(using))


def _abandon(conn: psycopg.Connection, rebuild_id: int) -> None:
    """After a failed rebuild (its transaction rolled back: the live table as it was), clear its
    mark and the writes' notes so writes stop noting, when its connection still works and no
    other rebuild runs (otherwise the next rebuild's step 1 replaces them)."""
    if conn.broken or conn.closed:
        return
    try:
        with conn.transaction():
            if conn.execute("select pg_try_advisory_xact_lock(hashtextextended(%s, 0))",
                            ("search-index|rebuild",)).fetchone() != (True,):
                return
            if conn.execute(f"delete from {REBUILD} where rebuild_id = %s", (rebuild_id,)).rowcount:
                conn.execute(f"delete from {PENDING}")
    except psycopg.Error:
        pass  # the rebuild's own error is the one raised


def rebuild_in_place(conn: psycopg.Connection) -> int | None:
    """Replace every index row with the terms view's in the open transaction, holding the
    index's lock exclusive to the end (writes wait for it): for migration 0022's rebuild, made
    in the migration's transaction, before migration 0023 creates the tables ``rebuild`` uses.
    Returns the rows indexed, or None when dbt has not built the view yet."""
    with conn.transaction():
        _lock(conn, "index")
        if conn.execute("select to_regclass(%s)", (TERMS_VIEW,)).fetchone() == (None,):
            return None
        conn.execute(f"delete from {INDEX}")
        rows = conn.execute(f"insert into {INDEX} ({_COLUMNS}) select {_COLUMNS} from {TERMS_VIEW}").rowcount
        _record_build(conn, rows)
        conn.execute(f"analyze {INDEX}")
    return rows


def _note(conn: psycopg.Connection, column: str, values: Sequence[str]) -> None:
    """In a write's transaction, under the index's lock (shared): while a rebuild is in progress,
    note the entities or namespaces whose rows the write re-derives or drops, for the rebuild to
    re-derive them in the table it builds aside (see ``rebuild``)."""
    conn.execute(sql.SQL("insert into {} ({}) select unnest(%s::text[]) where exists (select from {})").format(
        sql.SQL(PENDING), sql.Identifier(column), sql.SQL(REBUILD)), (list(values),))


def refresh(conn: psycopg.Connection, entity_keys: Sequence[str]) -> None:
    """Re-derive the index rows of ``entity_keys`` in the open transaction (no-op before the
    first rebuild).

    The index's lock, shared (a rebuild waits for it at its start and swap, and it waits for
    those moments only; while a rebuild is in progress the keys are noted for it), then one lock
    per entity's index rows, held until the transaction ends (and its namespace's, shared): a second refresh
    of the entity (a USER and a SYSTEM change at once hold different metadata locks) waits,
    then reads what the first committed, so the rows stay exact: no duplicate, none missing.
    Locks are taken in key order, so two refreshes never deadlock."""
    lock_as_a_writer(conn)
    keys = sorted(set(entity_keys))
    _note(conn, "entity_key", keys)  # before the first rebuild too: it may be building its table aside
    if not _index_built(conn):
        return
    for namespace in sorted({ns for ns in (parse(key).namespace for key in keys) if ns is not None}):
        _lock(conn, f"namespace|{namespace}", shared=True)
    for key in keys:
        _lock(conn, f"entity|{key}")
    conn.execute("set local jit = off")
    conn.execute(f"delete from {INDEX} where entity_key = any(%s)", (keys,))
    conn.execute(f"insert into {INDEX} ({_COLUMNS}) select {_COLUMNS} from {TERMS_VIEW} where entity_key = any(%s)",
                 (keys,))


def forget_namespace(conn: psycopg.Connection, namespace: str) -> None:
    """Drop a deleted namespace's index rows (no-op before the first rebuild). A rebuild in
    progress re-derives the noted namespace from the view, which hides a deleted namespace's
    rows, so it cannot bring them back."""
    lock_as_a_writer(conn)
    _note(conn, "namespace", [namespace])
    if _index_built(conn):
        conn.execute(f"delete from {INDEX} where namespace = %s", (namespace,))


def refresh_namespace(conn: psycopg.Connection, namespace: str) -> None:
    """Re-derive every index row of ``namespace`` (after its cleanup: what a re-created
    namespace holds becomes searchable), excluding every entity refresh in it meanwhile."""
    lock_as_a_writer(conn)
    _note(conn, "namespace", [namespace])
    if not _index_built(conn):
        return
    _lock(conn, f"namespace|{namespace}")
    conn.execute(f"delete from {INDEX} where namespace = %s", (namespace,))
    conn.execute(f"insert into {INDEX} ({_COLUMNS}) select {_COLUMNS} from {TERMS_VIEW} where namespace = %s",
                 (namespace,))


def _filters(namespace: str | None, targets: Sequence[str], scope: str | None,
             readable: Readable | None) -> tuple[sql.Composable, dict[str, Any]]:
    """`` and ...`` conditions for the namespace, targets, scope and what the caller may read
    (``None``: everything), with named parameters."""
    clauses: list[sql.Composable] = []
    params: dict[str, Any] = {}
    if readable is not None:  # whole namespaces, granted entities and what is under them (the row's
        # grant_key, see metadata_search_terms), external resources
        clauses.append(sql.SQL(
            "(namespace = any(%(readable_namespaces)s) or grant_key = any(%(readable_keys)s)"
            + (" or namespace is null)" if readable.external else ")")))
        params.update(readable_namespaces=list(readable.namespaces), readable_keys=list(readable.entity_keys))
    if namespace is not None:
        clauses.append(sql.SQL("namespace = %(namespace)s"))
        params["namespace"] = namespace
    if targets:
        parts = []
        types = [TARGETS[t] for t in targets if TARGETS[t] is not None]
        if types:
            parts.append(sql.SQL("entity_type = any(%(types)s)"))
            params["types"] = types
        if "external" in targets:
            parts.append(sql.SQL("namespace is null"))
        clauses.append(sql.SQL("({})").format(sql.SQL(" or ").join(parts)))
    if scope is not None:
        clauses.append(sql.SQL("scope = %(scope)s"))
        params["scope"] = scope
    return sql.SQL("").join(sql.SQL(" and ") + c for c in clauses), params


def search(conn: psycopg.Connection, terms: Sequence[Term], *, namespace: str | None = None,
           targets: Sequence[str] = (), scope: str | None = None, limit: int = 20, offset: int = 0,
           readable: Readable | None = None) -> dict[str, Any]:
    """One page of matching entities the caller may read, best first, with the total and what
    matched each."""
    filters, params = _filters(namespace, targets, scope, readable)
    hits = []
    for number, term in enumerate(terms):
        where = [sql.SQL("term like {} escape '\\'").format(sql.Placeholder(f"pattern{number}"))]
        params[f"pattern{number}"] = term.like_pattern
        params[f"text{number}"] = term.text
        if term.kinds is not None:
            where.append(sql.SQL("key_term = {} and kind = any({})").format(
                sql.Placeholder(f"key{number}"), sql.Placeholder(f"kind{number}")))
            params[f"key{number}"], params[f"kind{number}"] = term.key, list(term.kinds)
        hits.append(sql.SQL("select entity_key, {number} as term_no, bool_or(term = {text}) as exact, "
                            "bool_or(term = {text} and kind = 'name') as named from {index} "
                            "where {where}{filters} group by entity_key").format(
            number=sql.Literal(number), text=sql.Placeholder(f"text{number}"), index=sql.SQL(INDEX),
            where=sql.SQL(" and ").join(where), filters=filters))
    params.update(required=[n for n, term in enumerate(terms) if term.required], limit=limit, offset=offset)
    statement = sql.SQL("""
        with hits as ({hits}),
        scored as (
            select entity_key, count(*) as matched, count(*) filter (where named) as name_matches,
                   count(*) filter (where exact) as exact_matches
            from hits group by entity_key
            having count(*) filter (where term_no = any(%(required)s)) = cardinality(%(required)s)
        )
        select (select count(*) from scored),
               (select coalesce(json_agg(json_build_array(entity_key, matched, name_matches, exact_matches)), '[]')
                from (select * from scored order by matched desc, name_matches desc, exact_matches desc, entity_key
                      limit %(limit)s offset %(offset)s) as page)""").format(hits=sql.SQL(" union all ").join(hits))
    with without_jit(conn):
        row = conn.execute(statement, params, prepare=False).fetchone()
        assert row is not None
        total, page = row
        if not total:
            _check_built(conn)
        details = _details(conn, [key for key, *_ in page], terms)
    results = [{**details[key], "score": {"matchedTerms": matched, "nameMatches": named, "exactMatches": exact}}
               for key, matched, named, exact in page]
    return {"total": total, "limit": limit, "offset": offset, "results": results}


def _details(conn: psycopg.Connection, keys: list[str], terms: Sequence[Term]) -> dict[str, dict[str, Any]]:
    """Each page entity's type and parts, and the index rows that matched a term."""
    if not keys:
        return {}
    rows = conn.execute(
        f"""select entity_key, entity_type, entity_details, scope, kind, key, value, key_term, term from {INDEX}
            where entity_key = any(%s) and term like any(%s)  -- backslash is LIKE's default escape
            order by entity_key, scope, kind, key, value""",
        (keys, list({t.like_pattern for t in terms})), prepare=False).fetchall()
    found: dict[str, dict[str, Any]] = {}
    for entity_key, entity_type, details, scope, kind, key, value, key_term, term in rows:
        entry = found.setdefault(entity_key, {"entity": {"type": entity_type, "details": details}, "matches": []})
        if any(t.matches(kind, key_term, term) for t in terms):
            entry["matches"].append({"scope": scope, "kind": kind, "key": key or None, "value": value})
    return found


def suggest(conn: psycopg.Connection, prefix: str, *, namespace: str | None = None,
            limit: int = 10, readable: Readable | None = None) -> list[dict[str, Any]]:
    """Autocomplete (the *Metadata and Data Discovery* design, Interactions 1, 2): for ``own``, the
    keys then the values that
    start with it (``owner:``, ``Owners team``); for ``owner:`` or ``owner:sa``, the values of
    that key. Values show as stored (first spelling in case-insensitive order)."""
    filters, params = _filters(namespace, (), None, readable)
    key, colon, rest = prefix.partition(":")
    with without_jit(conn):
        if colon:
            found = _skip_scan(conn, "term", "value", sql.SQL(" and key_term = %(key)s"), filters,
                               {**params, "key": key.lower()}, rest, limit)
            keys, values = [], found
        else:
            keys = _skip_scan(conn, "key_term", "key", sql.SQL(" and key_term <> ''"), filters, params, prefix, limit)
            values = _skip_scan(conn, "term", "value", sql.SQL(""), filters, params, prefix, limit - len(keys))
        if not keys and not values:
            _check_built(conn)
    if colon:
        return [{"type": "value", "key": key.lower(), "text": f"{key.lower()}:{value}"} for value in values]
    return ([{"type": "key", "key": k.lower(), "text": f"{k.lower()}:"} for k in keys]
            + [{"type": "value", "key": None, "text": v} for v in values])


def _skip_scan(conn: psycopg.Connection, column: str, shown: str, fixed: sql.Composable, filters: sql.Composable,
               params: dict[str, Any], prefix: str, limit: int) -> list[str]:
    """The first ``limit`` distinct ``column`` values starting with ``prefix``, in order, one
    index probe each; each shown as its first stored spelling (``shown``)."""
    if limit <= 0:
        return []
    step = sql.SQL("select {col} from {index} where {col} like %(pattern)s escape '\\'{fixed}{filters}{after} "
                   "order by {col} limit 1")
    col = sql.Identifier(column)
    first = step.format(col=col, index=sql.SQL(INDEX), fixed=fixed, filters=filters, after=sql.SQL(""))
    following = step.format(col=col, index=sql.SQL(INDEX), fixed=fixed, filters=filters,
                            after=sql.SQL(" and {} > found.value").format(col))
    statement = sql.SQL("""
        with recursive found(value) as (
            ({first}) union all select ({following}) from found where found.value is not null)
        select (select {shown} from {index} where {col} = found.value{fixed}{filters} limit 1)
        from (select value from found where value is not null limit %(limit)s) as found""").format(
        first=first, following=following, shown=sql.Identifier(shown), index=sql.SQL(INDEX), col=col,
        fixed=fixed, filters=filters)
    rows = conn.execute(statement, {**params, "pattern": like_escape(prefix.lower()) + "%", "limit": limit},
                        prepare=False).fetchall()
    return [row[0] for row in rows]

"""The quarantine: listing what was refused, and replaying it once the cause is fixed.

A replay re-validates quarantined lines (a namespace since created, a producer's event fixed by
hand in the row, a validation rule since relaxed) and writes the ones that pass into one new
file of the raw log (``replay-*.jsonl``), which the next compaction reads like any other: so a
replayed event goes through every rule again and is compacted once (its event id deduplicates a
second delivery). Each replayed row records when and where to, and is never replayed again.

Not replayable, and counted as such: a whole unreadable file (line 0: fix the file and copy it
back into the log), a line cut in the quarantine (over 64 Ki characters), and an event the
compaction already took (quarantined by a later stage: field lineage or metadata).
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
import psycopg
from psycopg.rows import class_row

from lineage.errors import InvalidEventError
from lineage.model.events import Rejection, parse_line, to_staged_row
from lineage.naming.identity import NO_MAPPING, NamespaceMap
from lineage.openlineage.mapping import KIND as OPENLINEAGE
from lineage.openlineage.mapping import expand
from lineage.transport.log_file import EventLogWriter

_CUT = re.compile(r"… \[cut: the line is \d+ bytes, sha256 [0-9a-f]{64}\]$")
COLUMNS = "quarantine_id, batch_id, source_file, line_number, reason, quarantined_at, replayed_at, replayed_to"


@dataclass(frozen=True)
class Selection:
    """Which quarantined rows: by batch, source file (substring), reason (substring); not yet replayed."""

    batch_id: str | None = None
    file: str | None = None
    reason: str | None = None
    include_replayed: bool = False

    def where(self) -> tuple[str, dict[str, Any]]:
        clauses = ["(%(batch)s::text is null or batch_id = %(batch)s)",
                   "(%(file)s::text is null or strpos(source_file, %(file)s) > 0)",
                   "(%(reason)s::text is null or strpos(reason, %(reason)s) > 0)"]
        if not self.include_replayed:
            clauses.append("replayed_at is null")
        return " and ".join(clauses), {"batch": self.batch_id, "file": self.file, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class QuarantineRow:
    """A quarantined line (line 0: a whole file), why, and where it was replayed to (once)."""

    quarantine_id: int
    batch_id: str
    source_file: str
    line_number: int
    reason: str
    quarantined_at: datetime
    replayed_at: datetime | None
    replayed_to: str | None


@dataclass(frozen=True, slots=True)
class QuarantinedLine(QuarantineRow):
    """A quarantined row with its text: the line as read, cut at 64 Ki characters, or the staged
    columns of an event refused at the merge ('' for a whole file)."""

    raw_text: str


def list_rows(conn: psycopg.Connection, selection: Selection, limit: int = 50) -> list[QuarantineRow]:
    where, params = selection.where()
    with conn.cursor(row_factory=class_row(QuarantineRow)) as cursor:
        return cursor.execute(f"select {COLUMNS} from lineage.quarantine where {where} "
                              "order by quarantine_id desc limit %(limit)s", {**params, "limit": limit}).fetchall()


def get_row(conn: psycopg.Connection, quarantine_id: int) -> QuarantinedLine | None:
    with conn.cursor(row_factory=class_row(QuarantinedLine)) as cursor:
        return cursor.execute(f"select {COLUMNS}, raw_text from lineage.quarantine where quarantine_id = %s",
                              (quarantine_id,)).fetchone()


@dataclass(frozen=True, slots=True)
class _Replayable:
    """What a replay reads of a selected row."""

    quarantine_id: int
    source_file: str
    line_number: int
    raw_text: str


@dataclass
class ReplaySummary:
    selected: int = 0
    replayed: int = 0  # written into the log for the next compaction
    still_refused: dict[str, int] = field(default_factory=dict)  # reason -> lines that fail again
    not_replayable: dict[str, int] = field(default_factory=dict)  # why -> lines
    file: str | None = None

    def render(self) -> str:
        parts = [f"replay: {self.selected} quarantined lines selected, {self.replayed} written to "
                 f"{self.file or 'no file'} for the next compaction"]
        for title, counts in (("still refused", self.still_refused), ("not replayable", self.not_replayable)):
            for reason, count in sorted(counts.items(), key=lambda item: -item[1]):
                parts.append(f"  {title}: {count} x {reason}")
        return "\n".join(parts)


def replay(conn: psycopg.Connection, log_root: str, selection: Selection, *, dry_run: bool = False,
           max_clock_skew_hours: int = 24, auto_create_namespaces: bool = False,
           namespace_map: NamespaceMap = NO_MAPPING,
           progress: Callable[[Iterable[Any]], Iterable[Any]] = lambda rows: rows) -> ReplaySummary:
    """Replay the selected rows (see the module's doc); ``dry_run`` only counts. ``namespace_map``:
    the compaction's (``LINEAGE_NAMESPACE_MAP``), for lines written before the ingest pinned one."""
    summary = ReplaySummary()
    where, params = selection.where()
    with conn.cursor(row_factory=class_row(_Replayable)) as cursor:
        rows = cursor.execute(f"select quarantine_id, source_file, line_number, raw_text from lineage.quarantine "
                              f"where {where} order by quarantine_id", params).fetchall()
    summary.selected = len(rows)
    latest = datetime.now(UTC) + timedelta(hours=max_clock_skew_hours)
    passing: list[tuple[int, dict[str, Any]]] = []
    for row in progress(rows):
        why = _not_replayable(row)
        line = None if why else _original_line(row)
        if line is None:
            why = why or "its source file is gone or unreadable from here"
            summary.not_replayable[why] = summary.not_replayable.get(why, 0) + 1
            continue
        parsed = parse_line(line, latest=latest)
        if isinstance(parsed, Rejection):
            reason = parsed.reason[:120]
            summary.still_refused[reason] = summary.still_refused.get(reason, 0) + 1
            continue
        passing.append((row.quarantine_id, parsed))
    known = _compacted_ids(conn, [(event["namespace"], event["event_id"]) for _, event in passing])
    namespaces = {row[0] for row in conn.execute("select namespace from lineage.namespaces").fetchall()}
    kept = []
    for quarantine_id, event in passing:
        if (event["namespace"], event["event_id"]) in known:
            why = "already compacted (quarantined by a later stage: field lineage or metadata)"
            summary.not_replayable[why] = summary.not_replayable.get(why, 0) + 1
        elif (missing := sorted(namespaces_of(event, namespace_map) - namespaces)) and not auto_create_namespaces:
            why = f"namespace {missing[0]!r} does not exist"
            summary.still_refused[why] = summary.still_refused.get(why, 0) + 1
        else:
            kept.append((quarantine_id, event))
    summary.replayed = len(kept)
    if dry_run or not kept:
        return summary
    summary.file = EventLogWriter(log_root).write([event for _, event in kept], prefix="replay")
    with conn.transaction():
        conn.execute("update lineage.quarantine set replayed_at = now(), replayed_to = %s "
                     "where quarantine_id = any(%s)", (summary.file, [quarantine_id for quarantine_id, _ in kept]))
    return summary


def namespaces_of(event: Mapping[str, Any], namespace_map: NamespaceMap = NO_MAPPING) -> set[str]:
    """The warehouse namespaces a raw event needs to exist, as the compaction's merge checks them:
    the namespace and dataset namespace of each event it stages (an OpenLineage line stands for
    several, mapped with its pinned map, else ``namespace_map`` as the compaction maps it). A
    namespace an OpenLineage line only names (a column-lineage input of another dataset) is not
    needed: the merge sets nothing aside for it."""
    staged: Sequence[Mapping[str, Any]] = [event]
    if event.get("kind") == OPENLINEAGE:
        try:
            staged = expand(event, namespace_map)
        except InvalidEventError:  # the compaction quarantines it again, for its own reason
            return {event["namespace"]}
    found = {event["namespace"]}
    for item in staged:
        row = to_staged_row(item, "", 0)
        found.add(row["namespace"])
        if row["dataset_namespace"] is not None:
            found.add(row["dataset_namespace"])
    return found


def _not_replayable(row: _Replayable) -> str | None:
    if row.line_number <= 0 or not row.raw_text:
        return "a whole file (fix it and copy it back into the log)"
    if _CUT.search(row.raw_text):
        return "cut in the quarantine (over 64 Ki characters): re-send it from its producer"
    return None


def _original_line(row: _Replayable) -> str | None:
    """The line as its producer wrote it: the quarantined text, or, for an event refused at the
    merge (its namespace unknown: the row keeps the staged columns), the line read again from its
    source file in the log (local log roots)."""
    staged = raw_json(row.raw_text)
    if not (isinstance(staged, dict) and "event_time_us" in staged):
        return row.raw_text
    path = row.source_file.removeprefix("file://").removeprefix("file:")
    try:
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8") as lines:
            for number, line in enumerate(lines, start=1):
                if number == row.line_number:
                    return line.rstrip("\n")
    except OSError:
        return None
    return None


def _compacted_ids(conn: psycopg.Connection, events: list[tuple[str, str]]) -> set[tuple[str, str]]:
    """The (namespace, event id) pairs the compaction's ledger holds (``lineage.event_ids``)."""
    if not events:
        return set()
    rows = conn.execute(
        """select e.namespace, e.event_id from unnest(%s::text[], %s::text[]) as e(namespace, event_id)
           join lineage.event_ids i on i.event_key = md5(e.namespace || '/' || e.event_id)::uuid""",
        ([namespace for namespace, _ in events], [event_id for _, event_id in events])).fetchall()
    return {(row[0], row[1]) for row in rows}


_DERIVED_ID = re.compile(r"(ol-[0-9a-f]{32})\.[0-9]+")  # an event an OpenLineage line stands for


def forget_old_partial_line_keys(conn: psycopg.Connection) -> int:
    """Migration 0043: before the ledger recorded an OpenLineage line once, a line some of whose
    events were set aside recorded each event merged, its kept event's id among them, which is
    now the line's own key: the line would be dropped whole as compacted, and what was set aside
    lost. Each such key of a line still in the quarantine (a row refused at the merge, not
    replayed, staged without ``line_id``) goes; how many went."""
    keys = []
    for (text,) in conn.execute("select raw_text from lineage.quarantine "
                                "where replayed_at is null and line_number > 0"):
        staged = raw_json(text)
        if not isinstance(staged, dict) or "event_time_us" not in staged or "line_id" in staged:
            continue
        derived = _DERIVED_ID.fullmatch(str(staged.get("event_id", "")))
        if derived and isinstance(staged.get("namespace"), str):
            keys.append(f"{staged['namespace']}/{derived.group(1)}")
    if not keys:
        return 0
    return conn.execute("delete from lineage.event_ids "
                        "where event_key in (select md5(k)::uuid from unnest(%s::text[]) as k)", (keys,)).rowcount


def raw_json(text: str) -> Any:
    """A quarantined line as JSON when it is (for ``show``), else None."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return None

"""``lineage``: the operations people run by hand, in one command.

    lineage migrate                          apply the warehouse migrations
    lineage compact [--interval-end T] [--late]
    lineage namespaces list | create NAME [--description TEXT] | delete NAME
    lineage grants list [--namespace NS] [--principal P] | put P ENTITY PRIVILEGE | revoke P ENTITY
    lineage quarantine list [--batch B] [--file F] [--reason R] | show ID | replay [...] [--dry-run]
    lineage quality status | check | acknowledge BATCH --reason TEXT
    lineage incidents list NS DATASET | from-gx RESULT.json NS DATASET [--at T]
                      | blast-radius NS DATASET [--levels 5] [--since T] [--json]
                                             a dataset's incidents; one from a failed GX validation;
                                             what its bad writes reached
    lineage status                           last batches, lag, files waiting, what blocks the marts
    lineage diff NS DATASET [--since 1d] [--base-since ...] [--field F] [--changed] [--json]
                                             what changed in a dataset's (or a field's) lineage
    lineage export [--since 1d] [--until now] (--out FILE.jsonl[.gz] | --to URL [--api-key K]) [--namespace NS]
                   [--datasets]
                                             the window's lineage as OpenLineage events

Each command is a thin shell over the module that owns the rule (``warehouse.*``,
``spark_jobs.compaction``). Exit codes: 0 done, 1 a refusal or a problem found (the message
says which), 2 a usage error.
"""

from __future__ import annotations

import os
import sys
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.progress import track
from rich.table import Table
from rich.text import Text

from lineage.errors import LineageError
from lineage.ids import DataRef
from lineage.settings import Settings

if TYPE_CHECKING:
    import psycopg

app = typer.Typer(help="Operate the lineage warehouse: migrations, compaction, namespaces, grants, the "
                       "quarantine, the quality gate, status.", no_args_is_help=True, add_completion=False,
                  pretty_exceptions_enable=False)
namespaces_app = typer.Typer(help="Namespaces: list, create, delete.", no_args_is_help=True)
grants_app = typer.Typer(help="Grants: list, put, revoke.", no_args_is_help=True)
quarantine_app = typer.Typer(help="The quarantine: list, show, replay.", no_args_is_help=True)
quality_app = typer.Typer(help="The quality gate: status, check, acknowledge.", no_args_is_help=True)
app.add_typer(namespaces_app, name="namespaces")
app.add_typer(grants_app, name="grants")
app.add_typer(quarantine_app, name="quarantine")
incidents_app = typer.Typer(help="Incidents (a dataset's bad writes): list, from-gx, blast-radius.",
                            no_args_is_help=True)
app.add_typer(quality_app, name="quality")
app.add_typer(incidents_app, name="incidents")
# What the warehouse holds is printed literally: no rich markup (``[link=...]``, ``[/]``) and no
# emoji codes are read in names, reasons or event contents.
out = Console(markup=False, emoji=False, highlight=False)
err = Console(stderr=True, markup=False, emoji=False, highlight=False)
CLI_USER = "cli"  # who the change records name for what this command does


def _settings() -> Settings:
    return Settings.from_env()


def _fail(message: str) -> typer.Exit:
    err.print(Text.assemble(("error:", "red"), f" {message}"))
    return typer.Exit(1)


def _dataset_key(conn: Any, namespace: str, dataset: str) -> int:
    """The dataset's key, or the error a user gets for a dataset that does not exist."""
    from warehouse.db import entity_keys

    key = entity_keys.dataset_key(conn, DataRef(namespace, "dataset", dataset))
    if key is None:
        raise _fail(f"dataset {dataset!r} not found in namespace {namespace!r}")
    return key


def _connect() -> Any:
    from warehouse.db.connection import connect

    return connect(_settings().database_url, autocommit=True)


def _table(columns: list[str], rows: list[list[Any]]) -> Table:
    table = Table(*columns, show_lines=False, highlight=False)
    for row in rows:
        table.add_row(*(Text("" if value is None else str(value)) for value in row))
    return table


@app.command()
def migrate() -> None:
    """Apply the warehouse migrations not yet applied."""
    from warehouse.db.migrate import apply_migrations

    applied = apply_migrations(_settings().database_url)
    out.print(f"migrations: {len(applied)} applied" + (f" ({', '.join(m.name for m in applied)})" if applied else ""))


@app.command("dags-folder")
def dags_folder() -> None:
    """Print the folder of this installation's DAGs, for an Airflow DAG bundle
    (``[dag_processor] dag_bundle_config_list``, a LocalDagBundle with this ``path``)."""
    from lineage.settings import DAGS_FOLDER

    typer.echo(str(DAGS_FOLDER))  # plain: a long path must not wrap


@app.command()
def compact(interval_end: Annotated[str | None, typer.Option(help="RFC 3339 time; default now")] = None,
            everything: Annotated[bool, typer.Option("--late", "--all", help="list every partition, however old, "
                                                     "and take the files delivered into hours older than the "
                                                     "lookback (late files)")] = False) -> None:
    """Compact the raw log files not yet compacted, once, and print the summary (with the late files taken)."""
    import logging

    from lineage.model.events import parse_time
    from spark_jobs.compaction.job import run_compaction

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    end = parse_time(interval_end) if interval_end else datetime.now(UTC)
    summary = run_compaction(None, interval_end=end, everything=everything)  # Spark starts only when needed
    out.print(summary.render(), highlight=False)


@namespaces_app.command("list")
def namespaces_list() -> None:
    """The namespaces, with their descriptions and creation times."""
    from warehouse.db.namespace_store import list_namespaces

    with _connect() as conn:
        found = list_namespaces(conn)
    out.print(_table(["namespace", "description", "created"],
                     [[n.namespace, n.description, n.created_at.astimezone(UTC).replace(microsecond=0).isoformat()]
                      for n in found]))


@namespaces_app.command("create")
def namespaces_create(name: str, description: Annotated[str | None, typer.Option()] = None) -> None:
    """Create a namespace (or say it exists)."""
    from lineage.model.namespaces import check_description, check_namespace
    from warehouse.db.namespace_store import create_namespace

    with _connect() as conn:
        created = create_namespace(conn, check_namespace(name),
                                   check_description(description) if description is not None else None)
    out.print(f"namespace {name!r} {'created' if created else 'already exists'}", highlight=False)


@namespaces_app.command("delete")
def namespaces_delete(name: str, yes: Annotated[bool, typer.Option("--yes", help="do not ask")] = False) -> None:
    """Delete a namespace: its records are hidden at once and removed by the cleanup DAG."""
    from warehouse.db.namespace_store import delete_namespace

    if not yes:
        typer.confirm(f"delete namespace {name!r} and everything in it?", abort=True)
    with _connect() as conn:
        deleted = delete_namespace(conn, name, CLI_USER)
    if deleted is None:
        raise _fail(f"namespace {name!r} not found")
    out.print(f"namespace {name!r} deleted; the cleanup DAG removes its records", highlight=False)


@grants_app.command("list")
def grants_list(namespace: Annotated[str | None, typer.Option()] = None,
                principal: Annotated[str | None, typer.Option()] = None) -> None:
    """Grants, of one namespace and/or one principal."""
    from warehouse.db.grant_store import list_grants

    with _connect() as conn:
        found = list_grants(conn, namespace, principal)
    out.print(_table(["principal", "entity", "privilege", "granted by"],
                     [[g["principal"], g["entity"], g["privilege"], g["grantedBy"]] for g in found]))


@grants_app.command("put")
def grants_put(principal: str, entity: Annotated[str, typer.Argument(
        help="instance, namespaces/NS, namespaces/NS/datasets/NAME, namespaces/NS/apps/APP/TYPE/PROGRAM")],
               privilege: Annotated[str, typer.Argument(help="READ, WRITE, EXECUTE or ADMIN")]) -> None:
    """Give PRINCIPAL exactly PRIVILEGE on ENTITY."""
    from warehouse.db.grant_store import put_grant
    from warehouse.db.namespace_store import get_namespace
    from warehouse.service.authorization import Privilege, check_principal, grant_subject, grant_target

    subject = grant_subject(entity)
    with _connect() as conn:
        if subject is not None and subject.namespace and get_namespace(conn, subject.namespace) is None:
            raise _fail(f"namespace {subject.namespace!r} not found")
        put_grant(conn, check_principal(principal), grant_target(subject), subject.namespace if subject else None,
                  Privilege.parse(privilege), CLI_USER)
    out.print(f"{principal} holds {privilege.upper()} on {grant_target(subject)}", highlight=False)


@grants_app.command("revoke")
def grants_revoke(principal: str, entity: str) -> None:
    """Take back what PRINCIPAL holds on ENTITY."""
    from warehouse.db.grant_store import revoke
    from warehouse.service.authorization import grant_subject, grant_target

    key = grant_target(grant_subject(entity))
    with _connect() as conn:
        if not revoke(conn, principal, key):
            raise _fail(f"{principal!r} holds no grant on {key}")
    out.print(f"revoked what {principal} held on {key}", highlight=False)


Batch = Annotated[str | None, typer.Option("--batch", help="one batch id")]
File = Annotated[str | None, typer.Option("--file", help="source files containing this text")]
Reason = Annotated[str | None, typer.Option("--reason", help="reasons containing this text")]


@quarantine_app.command("list")
def quarantine_list(batch: Batch = None, file: File = None, reason: Reason = None,
                    replayed: Annotated[bool, typer.Option(help="include rows already replayed")] = False,
                    limit: Annotated[int, typer.Option(min=1, max=10_000)] = 50) -> None:
    """Quarantined lines, newest first."""
    from warehouse.db.quarantine_store import Selection, list_rows

    with _connect() as conn:
        rows = list_rows(conn, Selection(batch, file, reason, include_replayed=replayed), limit)
    out.print(_table(["id", "batch", "file", "line", "reason", "replayed to"],
                     [[r.quarantine_id, r.batch_id, r.source_file, r.line_number, r.reason[:100], r.replayed_to]
                      for r in rows]))
    out.print(f"{len(rows)} rows" + (" (more with --limit)" if len(rows) == limit else ""), highlight=False)


@quarantine_app.command("show")
def quarantine_show(quarantine_id: int) -> None:
    """One quarantined line whole: where it came from, why, and its text."""
    from warehouse.db.quarantine_store import get_row, raw_json

    with _connect() as conn:
        row = get_row(conn, quarantine_id)
    if row is None:
        raise _fail(f"no quarantined line {quarantine_id}")
    for key in ("quarantine_id", "batch_id", "source_file", "line_number", "reason", "quarantined_at",
                "replayed_at", "replayed_to"):
        out.print(f"{key}: {getattr(row, key)}", highlight=False)
    parsed = raw_json(row.raw_text)
    if parsed is not None:
        out.print_json(data=parsed)
    else:
        out.print(row.raw_text, highlight=False, markup=False)


@quarantine_app.command("replay")
def quarantine_replay(batch: Batch = None, file: File = None, reason: Reason = None,
                      dry_run: Annotated[bool, typer.Option("--dry-run", help="count only")] = False,
                      compact_now: Annotated[bool, typer.Option("--compact", help="compact at once")] = False) -> None:
    """Re-validate quarantined lines (after a fix: a namespace created, a producer corrected) and
    write those that pass into the raw log, once, for the next compaction (or now, --compact)."""
    from warehouse.db.quarantine_store import Selection, replay

    settings = _settings()
    with _connect() as conn:
        summary = replay(conn, settings.log_root, Selection(batch, file, reason), dry_run=dry_run,
                         max_clock_skew_hours=settings.max_clock_skew_hours,
                         auto_create_namespaces=settings.auto_create_namespaces,
                         namespace_map=settings.namespace_map,
                         progress=lambda rows: track(rows, description="re-validating", console=err,
                                                     disable=not err.is_terminal))
    out.print(summary.render() + (" (dry run: nothing written)" if dry_run else ""), highlight=False)
    if compact_now and summary.replayed and not dry_run:
        compact()


@quality_app.command("status")
def quality_status() -> None:
    """The batches that block the marts (exit 1 when one failed its check)."""
    from warehouse.pipeline.quality import blocking

    found = blocking(_settings().database_url)
    out.print(_table(["batch", "quality", "detail"], [[b.batch_id, b.quality, b.detail] for b in found]))
    if any(batch.quality == "failed" for batch in found):
        raise typer.Exit(1)


@quality_app.command("check")
def quality_check() -> None:
    """Check every batch not yet passed, as the DAG's check task does."""
    from warehouse.pipeline.quality import gate

    results = gate(_settings().database_url)
    out.print(f"quality gate: passed ({len(results)} expectations)", highlight=False)


@quality_app.command("acknowledge")
def quality_acknowledge(batch_id: str, reason: Annotated[str, typer.Option(help="why it is accepted")]) -> None:
    """Accept a failed batch as it is, so the marts are built again."""
    from warehouse.pipeline.quality import acknowledge

    out.print(f"batch {batch_id}: {acknowledge(_settings().database_url, batch_id, reason).detail}",
              highlight=False)


def _incident_row(incident: Any) -> list[Any]:
    return [incident.incident_id, incident.bad_from.isoformat(), incident.bad_until.isoformat(), incident.source,
            incident.created_by, incident.reason]


_INCIDENT_COLUMNS = ["id", "from", "until", "source", "by", "reason"]


@incidents_app.command("list")
def incidents_list(namespace: str, dataset: str) -> None:
    """A dataset's incidents, oldest first."""
    from warehouse.db import incident_store

    with _connect() as conn:
        found = incident_store.incidents_of(conn, namespace, "dataset", dataset)
    out.print(_table(_INCIDENT_COLUMNS, [_incident_row(item) for item in found]))


@incidents_app.command("from-gx")
def incidents_from_gx(
        result: Annotated[str, typer.Argument(help="a GX 1.x result saved as JSON: ValidationResult.to_json_dict() "
                                                    "or CheckpointResult.describe_dict()")],
        namespace: str, dataset: str,
        at: Annotated[str | None, typer.Option(help="when the validation ran (epoch seconds or now-<n><s|m|h|d>); "
                                                    "default: the result's validation time, else now")] = None,
) -> None:
    """Record a failed Great Expectations validation of a dataset as its incident: the version it
    checked (the latest write at or before the validation) is bad, and its blast radius follows
    what that version reached. A result with no failed expectation records nothing."""
    import orjson

    from warehouse.db import incident_store
    from warehouse.service.failed_checks import gx_failures
    from warehouse.service.timespec import parse_timespec

    try:
        with open(result, "rb") as file:
            parsed = orjson.loads(file.read())
    except OSError as error:
        raise _fail(f"cannot read {result}: {error.strerror}") from error
    except orjson.JSONDecodeError as error:
        raise _fail(f"{result} is not JSON: {error}") from error
    failures = gx_failures(parsed)
    if not failures.checks:
        out.print(f"{result}: no failed expectation; no incident recorded")
        return
    checked_at = parse_timespec(_timespec(at), name="--at") if at else failures.checked_at or datetime.now(UTC)
    with _connect() as conn:
        key = _dataset_key(conn, namespace, dataset)
        incident = incident_store.record_check(conn, key, namespace, "dataset", dataset, checked_at, failures.checks,
                                               "great_expectations", CLI_USER)
    out.print(_table(_INCIDENT_COLUMNS, [_incident_row(incident)]))
    out.print(f"blast radius: GET /lineage/api/v3/namespaces/{namespace}/datasets/{dataset}/blast-radius")


@incidents_app.command("blast-radius")
def incidents_blast_radius(
        namespace: str, dataset: str,
        levels: Annotated[int, typer.Option(help="runs away, 1-100")] = 5,
        since: Annotated[str | None, typer.Option(help="only the bad writes at or after this time (1d, 6h, epoch "
                                                       "seconds or now-<n><s|m|h|d>)")] = None,
        as_json: Annotated[bool, typer.Option("--json", help="the API's answer, as JSON")] = False,
) -> None:
    """What a dataset's bad writes (its incidents' ranges) reached, level by level, and which of
    the datasets they reached hold good data again (the API's blast-radius, as an operator sees
    it: everything)."""
    import orjson

    from lineage.limits import check_levels
    from warehouse.db import blast_radius_store, incident_store
    from warehouse.service.blast_radius import blast_answer, incident_json, incident_ranges
    from warehouse.service.timespec import parse_timespec

    check_levels(levels)
    floor = None if since is None else parse_timespec(_timespec(since), name="--since")
    with _connect() as conn:
        key = _dataset_key(conn, namespace, dataset)
        incidents = incident_store.incidents_of(conn, namespace, "dataset", dataset)
        if not incidents:
            raise _fail(f"dataset {dataset!r} has no incident: record one first (POST .../incidents, or "
                        "lineage incidents from-gx)")
        found = blast_radius_store.reached(
            conn, key, incident_ranges([(item.bad_from, item.bad_until) for item in incidents], floor), levels)
    answer = blast_answer(DataRef(namespace, "dataset", dataset), [incident_json(item) for item in incidents],
                          found.blast, found.nodes, found.latest, found.fields, readable_data=lambda _: True,
                          readable_run=lambda _: True)
    if as_json:
        out.print(orjson.dumps(answer, option=orjson.OPT_INDENT_2).decode(), soft_wrap=True)
        return
    out.print(_table(_INCIDENT_COLUMNS, [_incident_row(item) for item in incidents]))
    rows = [[0, ", ".join(run["run_id"] for run in answer["badWrites"]), dataset, ""]]
    for level in answer["levels"]:
        for data in level["datasets"] or [{"name": "-", "fields": []}]:
            fields = data.get("fields")
            rows.append([level["level"], ", ".join(run["run_id"] for run in level["runs"]), data["name"],
                         "not recorded" if fields is None else ", ".join(f["name"] for f in fields)])
    out.print(_table(["level", "runs", "dataset", "fields holding bad data"], rows))
    out.print(f"recovered (rewritten since from good data): {', '.join(d['name'] for d in answer['recovered']) or '-'}")
    out.print(f"still affected: {', '.join(d['name'] for d in answer['stillAffected']) or '-'}"
              + (" (cut: more levels or runs lie beyond)" if answer["truncated"] else ""))


@app.command()
def status() -> None:
    """Last batches, the lag since the last compaction, files waiting in the log, blocked marts."""
    from warehouse.pipeline.quality import blocking

    settings = _settings()
    with _connect() as conn:
        batches = conn.execute(
            "select batch_id, started_at, interval_end, files, events_compacted, quarantined, late_files, quality "
            "from lineage.compaction_batches order by started_at desc limit 5").fetchall()
        waiting = _waiting_files(conn, settings.log_root, settings.lookback_hours)
    out.print(_table(["batch", "started", "interval end", "files", "events", "quarantined", "late", "quality"],
                     [list(row) for row in batches]))
    if batches:
        lag = datetime.now(UTC) - batches[0][1]
        out.print(f"last compaction started {int(lag.total_seconds() // 60)} minutes ago", highlight=False)
    else:
        out.print("no compaction yet", highlight=False)
    out.print(f"files waiting in {settings.log_root}: " + (
        "not counted (a remote log root; see the DAG's listing, `lineage compact --late` takes late files)"
        if waiting is None else f"{waiting[0]} ({waiting[1]} late: in hour partitions older than the "
                                f"{settings.lookback_hours}-hour lookback; the next compaction takes them)"),
              highlight=False)
    blocked = [batch for batch in blocking(settings.database_url) if batch.quality == "failed"]
    if blocked:
        out.print(Text.assemble((f"{len(blocked)} batches failed their check: the marts are blocked", "red"),
                                " (lineage quality status)"))
        raise typer.Exit(1)


Since = Annotated[str, typer.Option(help="the window's start: a duration back from now (1d, 6h, 30m), epoch "
                                        "seconds or now-<n><s|m|h|d>")]


def _timespec(text: str) -> str:
    """A time the CLI takes as the API takes it: ``1d`` (a duration back from now) is ``now-1d``."""
    value = text.strip()
    return f"now-{value}" if value[:1].isdigit() and value[-1:] in "smhd" else value


@app.command()
def diff(namespace: str, dataset: str, since: Since = "1d",
         until: Annotated[str, typer.Option(help="the window's end (as --since); default now")] = "now",
         base_since: Annotated[str | None, typer.Option(help="the base window's start; default: the window's "
                                                             "length before the window")] = None,
         base_until: Annotated[str | None, typer.Option(help="the base window's end; default: the window's start")
                               ] = None,
         levels: Annotated[int, typer.Option(help="levels of data -> programs -> data, 1-100")] = 10,
         stream: Annotated[bool, typer.Option("--stream", help="DATASET names a stream")] = False,
         field: Annotated[str | None, typer.Option(help="a field of DATASET: its field lineage's diff")] = None,
         direction: Annotated[str, typer.Option(help="with --field: incoming (its sources) or outgoing (what it "
                                                     "reached)")] = "incoming",
         changed: Annotated[bool, typer.Option("--changed", help="only what was added or removed")] = False,
         as_json: Annotated[bool, typer.Option("--json", help="print the API's JSON")] = False) -> None:
    """What changed in a dataset's lineage: the window against the base window (by default the
    window of the same length just before): each program's reads and writes added, removed or
    unchanged, with their runs on each side; with --field, the field's source (or reached) fields
    and paths, and what changed between a gone path and its replacement. Exit 0; the summary line
    counts the changes."""
    import orjson

    from lineage.limits import check_levels, check_window
    from warehouse.db import lineage_store
    from warehouse.service.lineage_graph import DataRef
    from warehouse.service.timespec import base_window, parse_window

    check_levels(levels)
    now = datetime.now(UTC)
    window = parse_window(_timespec(since), _timespec(until), now=now, names=("--since", "--until"))
    base = base_window(window, base_since and _timespec(base_since), base_until and _timespec(base_until), now=now)
    check_window(*window)
    check_window(*base)
    if field is not None:
        _field_diff(namespace, dataset, field, direction, window, base, changed, as_json)
        return
    with _connect() as conn:
        origin = lineage_store.dataset_named(conn, DataRef(namespace, "stream" if stream else "dataset", dataset))
        answer = lineage_store.diff(conn, origin, window, base, levels, changed_only=changed)
    answer.pop("nodes")
    if as_json:
        sys.stdout.write(orjson.dumps(answer, option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    _print_diff(answer, window, base)


@app.command()
def export(since: Since = "1d",
           until: Annotated[str, typer.Option(help="the window's end (as --since); default now")] = "now",
           out_file: Annotated[str | None, typer.Option("--out", help="write JSON lines here (.gz: gzip)")] = None,
           to: Annotated[str | None, typer.Option(help="post each event to this OpenLineage endpoint "
                                                      "(http://host/api/v1/lineage) with openlineage-python's "
                                                      "HTTP transport")] = None,
           api_key: Annotated[str | None, typer.Option(help="with --to: sent as 'Authorization: Bearer KEY'")] = None,
           namespace: Annotated[list[str] | None, typer.Option(help="only events touching these namespaces alone "
                                                                    "(repeat it); default all")] = None,
           datasets: Annotated[bool, typer.Option("--datasets", help="also a DatasetEvent for each dataset with a "
                                                                    "schema or metadata no run of the window names")
                               ] = False,
           workers: Annotated[int, typer.Option(help="with --out: processes rendering the window (default: the "
                                                     "machine's cores, at most 4; 1: this process alone)")] = 0
           ) -> None:
    """The window's lineage as OpenLineage run events (spec 2-0-2), oldest first: events that
    came in as OpenLineage as they came, runs of our own client rendered (docs/openlineage.md,
    "OpenLineage out"). To a file (--out) or to any OpenLineage consumer (--to); a summary line
    at the end."""
    from warehouse.service.timespec import parse_window

    if (out_file is None) == (to is None):
        raise _fail("give one of --out FILE or --to URL")
    if api_key and not to:
        raise _fail("--api-key goes with --to")
    start, end = parse_window(_timespec(since), _timespec(until), now=datetime.now(UTC), names=("--since", "--until"))
    if workers < 0:
        raise _fail(f"--workers {workers} is negative")
    processes = workers or min(4, os.cpu_count() or 1)
    if out_file and processes > 1:
        from warehouse.db.export_workers import export_lines

        with _connect() as conn, _FileSink(out_file) as file_sink:
            total = 0
            for lines, count in export_lines(conn, _settings().database_url, start, end, namespace or None,
                                             workers=processes, datasets=datasets):
                file_sink.write_lines(lines)
                total += count
        err.print(f"exported {total} OpenLineage events of {start.isoformat()} .. {end.isoformat()} "
                  f"to {out_file} ({processes} workers)", highlight=False)
        return
    sink = _FileSink(out_file) if out_file else _HttpSink(str(to), api_key)
    with _connect() as conn, sink:
        total = _export_window(conn, start, end, namespace or None, sink, datasets=datasets)
    err.print(f"exported {total} OpenLineage events of {start.isoformat()} .. {end.isoformat()} "
              f"to {out_file or to}", highlight=False)


def _export_window(conn: psycopg.Connection, start: datetime, end: datetime, namespaces: list[str] | None,
                   sink: Any, *, datasets: bool = False) -> int:
    from warehouse.db.openlineage_export_store import declared_jobs, quiet_datasets, snapshot, stream_window
    from warehouse.service.openlineage_export import dataset_event, job_event

    total = 0
    with snapshot(conn):  # one state of the warehouse, however compactions run meanwhile
        if datasets:
            for dataset in quiet_datasets(conn, start, end, namespaces):
                sink.write(dataset_event(dataset))
                total += 1
        for job in declared_jobs(conn, start, end, namespaces):  # declared lineage: JobEvents
            sink.write(job_event(job))
            total += 1
        for event in stream_window(conn, start, end, namespaces):
            sink.write(event)
            total += 1
    return total


class _FileSink:
    """JSON lines into a file (gzip when its name ends in .gz)."""

    def __init__(self, path: str) -> None:
        import gzip

        self._file = gzip.open(path, "wb") if path.endswith(".gz") else open(path, "wb", buffering=1 << 20)

    def write(self, event: dict[str, Any]) -> None:
        from lineage.openlineage.event import event_json

        self._file.write(event_json(event) + b"\n")

    def write_lines(self, lines: bytes) -> None:
        """Events already written as JSON lines."""
        self._file.write(lines)

    def __enter__(self) -> _FileSink:
        return self

    def __exit__(self, *_: object) -> None:
        self._file.close()


class _HttpSink:
    """Each event posted with openlineage-python's HTTP transport (its retries, gzip)."""

    def __init__(self, url: str, api_key: str | None) -> None:
        from urllib.parse import urlsplit

        from openlineage.client.transport.http import (
            ApiKeyTokenProvider,
            HttpCompression,
            HttpConfig,
            HttpTransport,
            TokenProvider,
        )

        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise _fail(f"--to {url[:80]!r} is not an http(s) URL")
        auth = ApiKeyTokenProvider({"apiKey": api_key}) if api_key else TokenProvider({})
        base, endpoint = f"{parts.scheme}://{parts.netloc}", parts.path.lstrip("/") or "api/v1/lineage"
        self._transport = HttpTransport(HttpConfig(url=base + "/", endpoint=endpoint, auth=auth, timeout=30.0,
                                                   compression=HttpCompression.GZIP))

    def write(self, event: dict[str, Any]) -> None:
        self._transport.emit(event)  # type: ignore[arg-type]  # a dict is what Serde.to_json takes too

    def __enter__(self) -> _HttpSink:
        return self

    def __exit__(self, *_: object) -> None:
        self._transport.close()


def _field_diff(namespace: str, dataset: str, field: str, direction: str, window: tuple[datetime, datetime],
                base: tuple[datetime, datetime], changed: bool, as_json: bool) -> None:
    import orjson

    from warehouse.db import field_lineage_store
    from warehouse.service.field_lineage_response import FieldKey

    if direction not in ("incoming", "outgoing"):
        raise _fail(f"--direction {direction!r} is not incoming or outgoing")
    with _connect() as conn:
        answer = field_lineage_store.diff(conn, FieldKey(namespace, dataset, field), window, base,
                                          direction=direction, changed_only=changed)
    if as_json:
        sys.stdout.write(orjson.dumps(answer, option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    colour = {"added": "green", "new": "green", "removed": "red", "gone": "red", "unchanged": "grey50"}
    listing = "sources" if direction == "incoming" else "reached"
    nodes = Table("change", "source field" if direction == "incoming" else "reached field", highlight=False)
    for node in answer[listing]:
        name = node.get("name", node.get("dataset"))
        nodes.add_row(Text(node["change"], colour[node["change"]]), Text(f"{node['namespace']}.{name}.{node['field']}"))
    paths = Table("path", "change", "operations", "runs", "base runs", "what changed", highlight=False)
    for path in answer["paths"]:
        found = path.get("differences") or {}
        what = [f"+{name}" for name in found.get("operationsAdded", [])] + [
            f"-{name}" for name in found.get("operationsRemoved", [])] + [
            item["summary"] for item in found.get("transformationsChanged", [])]
        paths.add_row(Text(path["fingerprint"][:12]), Text(path["change"], colour[path["change"]]),
                      Text(" > ".join(path["operations"])), Text(str((path["current"] or {}).get("runCount", ""))),
                      Text(str((path["base"] or {}).get("runCount", ""))), Text("; ".join(what)))
    out.print(nodes)
    out.print(paths)
    summary = answer["summary"]
    out.print(f"{listing}: {summary[listing]['added']} added, {summary[listing]['removed']} removed; paths: "
              f"{summary['paths']['new']} new, {summary['paths']['gone']} gone, {summary['paths']['unchanged']} "
              f"unchanged; {summary['masked']} newly masked")


def _print_diff(answer: dict[str, Any], window: tuple[datetime, datetime], base: tuple[datetime, datetime]) -> None:
    colour = {"added": "green", "removed": "red", "unchanged": "grey50"}
    table = Table("change", "program", "access", "data", "runs", "base runs", "last run", highlight=False)
    for relation in answer["relations"]:
        current, before = relation["current"] or {}, relation["base"] or {}
        last = current.get("lastRun") or before.get("lastRun")
        table.add_row(Text(relation["change"], colour[relation["change"]]), Text(relation["program"]),
                      Text(relation["access"]), Text(relation["data"]), Text(str(current.get("runCount") or "")),
                      Text(str(before.get("runCount") or "")),
                      Text(datetime.fromtimestamp(last, UTC).strftime("%Y-%m-%d %H:%M") if last else ""))
    out.print(table)
    for data, change in answer["schemas"].items():
        fields = [f"+{f['name']}" for f in change["added"]] + [f"-{f['name']}" for f in change["removed"]] + [
            f"{f['name']} {f['before']}->{f['after']}" for f in change["retyped"]]
        out.print(f"schema of {data}: version {change['baseVersion'] or 'none'} -> {change['currentVersion'] or 'none'}"
                  f": {', '.join(fields) or 'nullability or order'}")
    counts = answer["summary"]
    out.print(f"{window[0]:%Y-%m-%d %H:%M} to {window[1]:%Y-%m-%d %H:%M} against {base[0]:%Y-%m-%d %H:%M} to "
              f"{base[1]:%Y-%m-%d %H:%M} UTC: " + "; ".join(
                  f"{kind} {counts[kind]['added']} added, {counts[kind]['removed']} removed, "
                  f"{counts[kind]['unchanged']} unchanged" for kind in ("relations", "programs", "data")))


def _waiting_files(conn: psycopg.Connection, log_root: str, lookback_hours: int) -> tuple[int, int] | None:
    """Log files not yet compacted and how many of them are late (in hours older than the
    lookback), for a local log root (None for a remote one), found as the compaction finds them:
    the files of hour folders changed since they were last found fully compacted, asked of the
    manifest (its cost does not grow with the files already compacted)."""
    from spark_jobs.compaction.listing import changed, is_late, list_files, list_partitions, local_root
    from warehouse.db.compaction_store import compacted_paths, settled_partitions

    if local_root(log_root) is None:
        return None
    now = datetime.now(UTC)
    partitions = list_partitions(None, log_root, now + timedelta(days=1), None)
    files = list_files(None, changed(partitions, settled_partitions(conn, [item.path for item in partitions])))
    done = compacted_paths(conn, [item.path for item in files])
    waiting = [item.path for item in files if item.path not in done]
    return len(waiting), sum(is_late(path, now, lookback_hours) for path in waiting)


def main() -> None:
    try:
        app()
    except LineageError as error:  # a refusal from the core: its message, exit 1
        err.print(Text.assemble(("error:", "red"), f" {error}"))
        sys.exit(1)


if __name__ == "__main__":
    main()

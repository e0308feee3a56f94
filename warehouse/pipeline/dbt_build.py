"""Run ``dbt build`` on the marts project as a subprocess (dbt lives in its own venv), then
rebuild the metadata search index from the view dbt built (the marts stage).

The search index is no dbt model: dbt builds the view ``metadata_search_terms`` (what a search
row is) and ``warehouse.db.metadata_search``, the index's one writer, rebuilds its table from it
whenever a dbt invocation built that view (every full build; a ``--select`` leaving it out
leaves the index as it is).

With ``LINEAGE_DBT_OPENLINEAGE=true`` the build runs under ``dbt-ol`` (``openlineage-dbt``, in
the same venv), which sends one OpenLineage run per model (inputs, output, schema from the
models' yml, column lineage where its SQL parser finds it) and one for the whole invocation
through our in-process transport into the raw log; the next compaction records the marts' own
lineage. dbt-ol only logs an event it could not send: the result counts those.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qsl, unquote, urlsplit

import lineage
from lineage.errors import DbtBuildError
from lineage.settings import Settings, without_parameters
from warehouse.db import metadata_search
from warehouse.db.connection import connect

# The advisory lock every marts build holds in an open transaction while dbt runs, so the
# scheduled DAG and the refresh DAG never build the same tables at once (one waits).
_MARTS_LOCK = 7_265_403
_EMITTED_LINE = re.compile(r"Emitted (\d+) OpenLineage events")
_FAILED_EMIT = "OpenLineage client failed to emit event"
TRANSPORT = "lineage.transport.openlineage.RawLogTransport"
# Any of these in the environment configures dbt-ol's transport already: it is left as it is.
_OWN_TRANSPORT = ("OPENLINEAGE_CONFIG", "OPENLINEAGE_URL", "OPENLINEAGE__TRANSPORT")


@dataclass(frozen=True)
class DbtResult:
    passed: int
    warned: int
    output: str
    # OpenLineage events dbt-ol emitted, and those it failed to send (None when the build did not
    # run under dbt-ol).
    lineage_events: int | None = None
    lineage_failures: int | None = None
    # rows of the search index rebuilt after dbt (None: the build left the index as it was)
    search_rows: int | None = None

    def render(self) -> str:
        """``dbt build: 61 passed, 0 warnings`` (``, 54 OpenLineage events`` under dbt-ol, and
        ``, 2 NOT written (see dbt-ol's output)`` when some failed; ``; search index: 1,204
        rows`` when it was rebuilt)."""
        events = "" if self.lineage_events is None else f", {self.lineage_events} OpenLineage events"
        if self.lineage_failures:
            events += f", {self.lineage_failures} NOT written (see dbt-ol's output)"
        search = "" if self.search_rows is None else f"; search index: {self.search_rows:,} rows"
        return f"dbt build: {self.passed} passed, {self.warned} warnings{events}{search}"


# libpq parameters of a URL's query (an Airflow connection's extras) and the environment
# variables libpq reads them from: dbt-postgres' profile has no field for several of them
# (options, target_session_attrs), and libpq takes every one from its variable when the profile
# leaves it unset, so no parameter of the connection is lost.
LIBPQ_ENV = {"sslmode": "PGSSLMODE", "sslrootcert": "PGSSLROOTCERT", "sslcert": "PGSSLCERT", "sslkey": "PGSSLKEY",
             "sslcrl": "PGSSLCRL", "options": "PGOPTIONS", "connect_timeout": "PGCONNECT_TIMEOUT",
             "application_name": "PGAPPNAME", "target_session_attrs": "PGTARGETSESSIONATTRS",
             "channel_binding": "PGCHANNELBINDING", "gssencmode": "PGGSSENCMODE"}


def dbt_env(database_url: str, settings: Settings) -> dict[str, str]:
    """Environment for dbt: the connection parts of ``database_url`` (its query's libpq
    parameters as libpq's variables, ``LIBPQ_ENV``) and local paths."""
    parts = urlsplit(database_url)
    env = dict(os.environ)
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        if name in LIBPQ_ENV:
            env[LIBPQ_ENV[name]] = value
    env.update(
        LINEAGE_DBT_HOST=parts.hostname or "127.0.0.1",
        LINEAGE_DBT_PORT=str(parts.port or 5432),
        LINEAGE_DBT_USER=unquote(parts.username or "postgres"),
        LINEAGE_DBT_PASSWORD=unquote(parts.password or ""),
        LINEAGE_DBT_DBNAME=parts.path.lstrip("/") or "lineage",
        DBT_PROFILES_DIR=str(settings.dbt_project_dir),
        DBT_TARGET_PATH=str(settings.home / "dbt" / "target"),
        DBT_LOG_PATH=str(settings.home / "dbt" / "logs"),
        DBT_SEND_ANONYMOUS_USAGE_STATS="False",
    )
    return env


@dataclass(frozen=True)
class ParentRun:
    """The OpenLineage run that starts a dbt build and its root run, each ``namespace/job/run id``
    (dbt-ol's ``OPENLINEAGE_PARENT_ID`` and ``OPENLINEAGE_ROOT_PARENT_ID``)."""

    parent_id: str
    root_id: str | None = None


def airflow_parent_run() -> ParentRun | None:
    """The running Airflow task's OpenLineage run (and its DAG run's) when Airflow's OpenLineage
    provider is on, so a build started by a task is that task's child; None otherwise."""
    from airflow.providers.openlineage import conf

    if conf.is_disabled():
        return None
    from airflow.providers.openlineage.plugins.macros import lineage_parent_id, lineage_root_parent_id
    from airflow.sdk import get_current_context

    task_instance = get_current_context()["ti"]
    return ParentRun(lineage_parent_id(task_instance), lineage_root_parent_id(task_instance))


def openlineage_env(settings: Settings, env: dict[str, str], parent: ParentRun | None = None) -> dict[str, str]:
    """``env`` for ``dbt-ol``: our transport writing into ``settings.log_root`` (unless ``env``
    configures a transport of its own), the ``lineage`` package importable in dbt's venv, the
    ``dbt`` beside ``dbt-ol`` first on the PATH (dbt-ol runs ``dbt`` from the PATH), and the run
    that started the build as the parent of dbt's runs when given."""
    env = dict(env)
    if not any(name.startswith(_OWN_TRANSPORT) and value for name, value in env.items()):
        env.update(OPENLINEAGE__TRANSPORT__TYPE=TRANSPORT, OPENLINEAGE__TRANSPORT__LOG_ROOT=settings.log_root)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(_lineage_path(settings)), env.get("PYTHONPATH")]))
    bin_dir = Path(settings.dbt_bin).parent
    if str(bin_dir) != ".":
        env["PATH"] = os.pathsep.join(filter(None, [str(bin_dir), env.get("PATH")]))
    if parent is not None:
        env["OPENLINEAGE_PARENT_ID"] = parent.parent_id
        if parent.root_id:
            env["OPENLINEAGE_ROOT_PARENT_ID"] = parent.root_id
    return env


def _lineage_path(settings: Settings) -> Path:
    """A folder holding only the ``lineage`` package (a link to this one), for the PYTHONPATH of
    dbt's venv: dbt-ol imports our transport from it and sees nothing else of this environment."""
    folder = settings.home / "dbt" / "openlineage-path"
    link = folder / "lineage"
    package = Path(lineage.__file__).resolve().parent
    if not (link.is_symlink() and link.resolve() == package):
        folder.mkdir(parents=True, exist_ok=True)
        staged = folder / f".lineage-{os.getpid()}"
        staged.unlink(missing_ok=True)
        staged.symlink_to(package, target_is_directory=True)
        os.replace(staged, link)  # atomic: a concurrent build sees the old link or the new one
    return folder


def run_results(path: Path) -> tuple[int, int]:
    """(passed, warned) nodes of the dbt invocation that wrote ``path`` (dbt's own
    ``run_results.json``: models, seeds and snapshots ``success``, tests ``pass``; ``warn``)."""
    try:
        results = json.loads(path.read_text())["results"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise DbtBuildError(f"dbt left no readable {path} ({error})") from error
    statuses = [str(result.get("status")) for result in results if isinstance(result, dict)]
    return sum(status in ("success", "pass") for status in statuses), statuses.count("warn")


def built_models(path: Path) -> set[str]:
    """The models the dbt invocation that wrote ``path`` built (``run_results.json``)."""
    prefix = "model.lineage_warehouse."
    return {str(result["unique_id"]).removeprefix(prefix) for result in json.loads(path.read_text())["results"]
            if str(result.get("unique_id", "")).startswith(prefix) and result.get("status") == "success"}


def dbt_command(settings: Settings) -> list[str]:
    """``dbt``, or ``dbt-ol`` beside it with ``LINEAGE_DBT_OPENLINEAGE``."""
    if not settings.dbt_openlineage:
        return [settings.dbt_bin]
    dbt = Path(settings.dbt_bin)
    return [str(dbt.with_name("dbt-ol")) if str(dbt.parent) != "." else "dbt-ol"]


def build_marts(
    database_url: str, settings: Settings | None = None, *, command: str = "build", select: str | None = None,
    full_refresh: bool = False, openlineage_parent: ParentRun | None = None,
) -> DbtResult:
    """Run ``dbt <command>`` (build by default) in the project, on the ``select``ed models when
    given, rebuilding incremental models from scratch with ``full_refresh``, then the search
    index when dbt built its terms view; raises DbtBuildError on failure. Under dbt-ol
    (``LINEAGE_DBT_OPENLINEAGE``) ``openlineage_parent`` names the run that started the build.
    Both hold the marts lock, so two builds never interleave."""
    settings = settings or Settings.from_env()
    selection = ["--select", select] if select else []
    selection += ["--full-refresh"] if full_refresh else []
    env = dbt_env(database_url, settings)
    if settings.dbt_openlineage:
        env = openlineage_env(settings, env, openlineage_parent)
    # a transaction held open (also under transaction pooling), without the connection's libpq
    # ``options``: a statement_timeout there is meant for dbt's statements, and waiting here for
    # the build before this one is no statement to cancel
    with connect(without_parameters(database_url, "options")) as lock:
        lock.execute("select pg_advisory_xact_lock(%s)", (_MARTS_LOCK,))
        completed = subprocess.run(
            [*dbt_command(settings), command, "--project-dir", str(settings.dbt_project_dir), "--no-use-colors",
             *selection],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        output = completed.stdout + completed.stderr
        if completed.returncode != 0:
            tail = "\n".join(output.strip().splitlines()[-30:])
            raise DbtBuildError(f"dbt {command} failed (exit {completed.returncode}):\n{tail}")
        results = Path(env["DBT_TARGET_PATH"]) / "run_results.json"
        passed, warned = run_results(results)
        search_rows = None
        if metadata_search.TERMS_VIEW.rsplit(".", 1)[-1] in built_models(results):
            # on a connection of its own: the rebuild commits its steps, the marts lock stays held
            with connect(database_url, autocommit=True) as conn:
                search_rows = metadata_search.rebuild(conn)
    if not settings.dbt_openlineage:
        return DbtResult(passed=passed, warned=warned, output=output, search_rows=search_rows)
    emitted = _EMITTED_LINE.search(output)
    return DbtResult(passed=passed, warned=warned, output=output,
                     lineage_events=int(emitted.group(1)) if emitted else 0,
                     lineage_failures=output.count(_FAILED_EMIT), search_rows=search_rows)

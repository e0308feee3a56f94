"""Run ``dbt build`` on the marts project as a subprocess (dbt lives in its own venv)."""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from lineage.errors import DbtBuildError
from lineage.settings import Settings

_DONE_LINE = re.compile(r"Done\. PASS=(\d+) WARN=(\d+) ERROR=(\d+) SKIP=(\d+)")


@dataclass(frozen=True)
class DbtResult:
    passed: int
    warned: int
    output: str


def dbt_env(database_url: str, settings: Settings) -> dict[str, str]:
    """Environment for dbt: the connection parts of ``database_url`` and local paths."""
    parts = urlsplit(database_url)
    env = dict(os.environ)
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


def build_marts(
    database_url: str, settings: Settings | None = None, *, command: str = "build", select: str | None = None,
    full_refresh: bool = False,
) -> DbtResult:
    """Run ``dbt <command>`` (build by default) in the project, on the ``select``ed models when
    given, rebuilding incremental models from scratch with ``full_refresh``; raises
    DbtBuildError on failure."""
    settings = settings or Settings.from_env()
    selection = ["--select", select] if select else []
    selection += ["--full-refresh"] if full_refresh else []
    completed = subprocess.run(
        [settings.dbt_bin, command, "--project-dir", str(settings.dbt_project_dir), "--no-use-colors", *selection],
        env=dbt_env(database_url, settings),
        capture_output=True,
        text=True,
        check=False,
    )
    output = completed.stdout + completed.stderr
    if completed.returncode != 0:
        tail = "\n".join(output.strip().splitlines()[-30:])
        raise DbtBuildError(f"dbt {command} failed (exit {completed.returncode}):\n{tail}")
    match = _DONE_LINE.search(output)
    passed, warned = (int(match.group(1)), int(match.group(2))) if match else (0, 0)
    return DbtResult(passed=passed, warned=warned, output=output)

"""The suite's warm dbt (``harness/dbt_server.py``) is dbt: the same command through the fork
server and through dbt's own script gives the same exit code and output, with the caller's
working directory and environment; a call while the server is not listening runs the real dbt.
Every other test's dbt runs through it (tests/services.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from harness.dbt_server import DBT_VENV, DbtServer
from lineage.settings import Settings
from warehouse.pipeline.dbt_build import dbt_env


def run(dbt: Path | str, *args: str, env: dict[str, str], cwd: Path) -> tuple[int, str, str]:
    done = subprocess.run([str(dbt), *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=120,
                          check=False)
    return done.returncode, done.stdout, done.stderr


def timeless(text: str) -> list[str]:
    """dbt's lines without their clock prefix (``12:00:01  ``)."""
    return [line[10:] if line[:2].isdigit() and line[2:3] == ":" else line for line in text.splitlines()]


def test_the_fork_server_runs_dbt_as_its_script_does(warehouse_db: str, tmp_path: Path) -> None:
    server = DbtServer(tmp_path / "server")
    client = server.write_client()
    settings = Settings.from_env()
    env = {**dbt_env(warehouse_db, settings), "DBT_TARGET_PATH": str(tmp_path / "target")}
    real = DBT_VENV / "bin" / "dbt"
    listing = ("ls", "--project-dir", str(settings.dbt_project_dir), "--resource-type", "model", "--output", "name",
               "--quiet")
    # not started: the client runs the real dbt
    assert run(client, *listing, env=env, cwd=tmp_path) == run(real, *listing, env=env, cwd=tmp_path)
    server.start()
    try:
        server.wait_listening()
        served = run(client, *listing, env=env, cwd=tmp_path)
        assert served == run(real, *listing, env=env, cwd=tmp_path)
        assert served[0] == 0 and "lineage_walk" in served[1].split()
        # an unknown command: dbt's own usage error, exit 2, on stderr
        refused = run(client, "nonsense", env=env, cwd=tmp_path)
        assert refused[0] == 2 and "No such command 'nonsense'" in refused[2]
        assert refused == run(real, "nonsense", env=env, cwd=tmp_path)
        # the caller's directory (a project path relative to it) and environment (dbt's target
        # path: where it writes its manifest)
        relative = ("ls", "--project-dir", os.path.relpath(settings.dbt_project_dir, tmp_path), "--quiet",
                    "--output", "name", "--resource-type", "model")
        elsewhere = {**env, "DBT_TARGET_PATH": str(tmp_path / "elsewhere")}
        assert run(client, *relative, env=elsewhere, cwd=tmp_path)[1] == served[1]
        assert (tmp_path / "elsewhere" / "manifest.json").is_file()
        log = (tmp_path / "server" / "dbt-server.log").read_text()
        assert log.count("dbt server: pid") == 3 and "runs dbt nonsense" in log  # the server ran them

        # A caller whose stdout is closed: dbt writes to /dev/null there and exits as the real
        # one (before, the client's own socket took that number and dbt's output blocked on it).
        closed = [sys.executable, "-c", "import os, subprocess, sys; os.close(1); "
                  "sys.exit(subprocess.run(sys.argv[1:]).returncode)"]
        loud = ("--debug", "ls", "--project-dir", str(settings.dbt_project_dir), "--output", "json")  # ~100 KB
        assert subprocess.run([*closed, str(client), *loud], env=env, cwd=tmp_path, timeout=60,
                              check=False).returncode == subprocess.run(
            [*closed, str(real), *loud], env=env, cwd=tmp_path, timeout=60, check=False).returncode == 0

        # A caller killed mid-run: its dbt ends with it, before writing what it would have.
        target = tmp_path / "killed-target"
        parse = subprocess.Popen([str(client), "parse", "--no-partial-parse", "--project-dir",
                                  str(settings.dbt_project_dir)], env={**env, "DBT_TARGET_PATH": str(target)},
                                 cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        child = _served_pid(tmp_path / "server" / "dbt-server.log", "runs dbt parse")
        parse.kill()
        parse.wait(10)
        assert _gone(child, within=5.0), f"dbt child {child} outlived its killed caller"
        time.sleep(3)  # the parse alone takes longer than this wait: had it gone on, its manifest
        assert not (target / "manifest.json").exists()
    finally:
        server.stop()


def _served_pid(log: Path, command: str, timeout: float = 30.0) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for line in log.read_text().splitlines():
            if command in line:
                return int(line.split(" pid ")[1].split()[0])
        time.sleep(0.02)
    raise AssertionError(f"the server never ran {command!r}")


def _gone(pid: int, within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def test_a_server_whose_session_is_killed_outright_ends_too(tmp_path: Path) -> None:
    """A test session killed with SIGKILL (a CI timeout) runs no cleanup: its dbt server, now
    another process's child, notices and exits, taking its socket with it."""
    starter = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from pathlib import Path; from harness.dbt_server import DbtServer; "
                               "server = DbtServer(Path(sys.argv[1])); server.start(); server.wait_listening(); "
                               "print(server._process.pid, flush=True); time.sleep(600)", str(tmp_path)],
        stdout=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parents[2])
    assert starter.stdout is not None
    server = int(starter.stdout.readline())
    assert (tmp_path / "dbt-server.sock").exists() and _alive(server)
    starter.kill()
    starter.wait(10)
    deadline = time.monotonic() + 15
    while _alive(server) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(server)
    assert not (tmp_path / "dbt-server.sock").exists()


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, exited but not yet reaped by its new parent, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False

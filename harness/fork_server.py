"""A program already imported: a fork server for the test session, so each call of a command
costs what the command does, not the seconds of importing its program.

A server, run by the program's own interpreter, imports the program once (its ``preload``), then
forks a child per call: the child takes the caller's standard streams (passed over a Unix
socket), working directory, environment and arguments, runs the program's own entry point and
exits with its code, which goes back to the caller. Every call is still a process of its own,
with its own state; only the imports (and what ``preload`` built) are shared. ``ForkServer.write_client``
writes the executable callers run in place of the program's script; while the server is not
listening, or when it declines a call, that executable runs the real script.

Two programs use it (their roles are below, each imported lazily; a third, ``python``, preloads
nothing and runs the engine's own tests):

- ``dbt`` (``harness/dbt_server.py``): about 50 calls of the suite, each spending 2-2.5 s
  importing dbt for 0.5 s of work;
- ``airflow`` (``harness/airflow_server.py``): ``airflow dags test`` (and ``reserialize``), whose process spent 10-13 s
  before its first task (Airflow's imports, the plugins', building the in-process execution API)
  and 2 s importing Great Expectations in the check task.

What still differs from a process of the program's own: a served call's parent, process group
and umask are the server's; a program that ends itself with ``os._exit`` or dies of a signal
gives its caller exit code 1 and a message, not its own; and the logs' colours were chosen
when the server configured logging (its output is a file: none).

This module runs under two interpreters: the suite's (``ForkServer``, which starts and stops a
server) and the program's (``serve``); it imports nothing but the standard library at the top.
"""

from __future__ import annotations

import array
import atexit
import contextlib
import json
import os
import socket
import struct
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable, Mapping
from pathlib import Path

_CODE = struct.Struct("!i")
DECLINED = -1000  # the answer for a call the server leaves to the real program (never an exit code)

CLIENT = '''#!{python} -IS
"""{name}, run by the warm fork server at {socket} (harness/fork_server.py), or the real {name}
while that server is not listening (not started yet, or gone) or when it declines the call."""
import array, json, os, socket, struct, sys
for fd in (0, 1, 2):  # before the socket takes the lowest free number: a closed stream gets /dev/null
    try:
        os.fstat(fd)
    except OSError:
        os.open(os.devnull, os.O_RDWR)
conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    conn.connect({socket!r})
except OSError:
    os.execv({real!r}, [{real!r}, *sys.argv[1:]])
request = json.dumps({{"argv": [{name!r}, *sys.argv[1:]], "cwd": os.getcwd(), "env": dict(os.environ)}}).encode()
message = struct.pack("!I", len(request)) + request
sent = conn.sendmsg([message], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [0, 1, 2]))])
conn.sendall(message[sent:])
# this process ending (killed, interrupted, timed out) closes the socket, and the served child ends
answer = b""
while len(answer) < 4:
    chunk = conn.recv(4 - len(answer))
    if not chunk:
        sys.exit("{name}: the fork server closed the connection without an exit code")
    answer += chunk
code = struct.unpack("!i", answer)[0]
if code == {declined}:  # the server leaves this call to the real program: nothing was written yet
    conn.close()
    os.execv({real!r}, [{real!r}, *sys.argv[1:]])
sys.exit(code)
'''


class ForkServer:
    """The server process of one program for one test session: point callers at
    ``write_client()``, ``start`` it, ``stop`` it at the end."""

    def __init__(self, home: Path, role: str, python: Path, real: Path, *, isolated: bool) -> None:
        self.home = home
        self.role = role
        self.python = python
        self.real = real
        self.isolated = isolated  # run the server with -I: the callers' PYTHONPATH does not reach it
        self.socket_path = home / f"{role}-server.sock"
        self.log_path = home / f"{role}-server.log"
        self.bin_dir = home / f"{role}-bin"
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def client(self) -> Path:
        return self.bin_dir / self.role

    def write_client(self) -> Path:
        """Write the executable that callers run in place of the program; cheap, starts nothing."""
        self.bin_dir.mkdir(parents=True, exist_ok=True)
        self.client.write_text(CLIENT.format(python=self.python, socket=str(self.socket_path), real=str(self.real),
                                             name=self.role, declined=DECLINED))
        self.client.chmod(0o755)
        return self.client

    def start(self, env: Mapping[str, str] | None = None) -> None:
        """Start the server in the background, in ``env`` (this process's by default): its socket
        appears once the program is imported; until then the client runs the real program."""
        if self._process is not None:
            return
        self.home.mkdir(parents=True, exist_ok=True)
        self.socket_path.unlink(missing_ok=True)
        # -I: the callers' PYTHONPATH does not reach the server; -P otherwise: harness/ is not
        # the first folder of its path, as .venv/bin is not of the real script's
        flags = ["-I"] if self.isolated else ["-P"]
        with self.log_path.open("ab") as log:
            self._process = subprocess.Popen(
                [str(self.python), *flags, __file__, self.role, str(self.socket_path), str(os.getpid())],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=None if env is None else dict(env))

    def wait_listening(self, timeout: float = 60.0) -> None:
        """Wait for the socket (for a check that the server, not the fallback, answers)."""
        deadline = time.monotonic() + timeout
        while not self.socket_path.exists():
            if self._process is None or self._process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the {self.role} fork server is not listening; see {self.log_path}")
            time.sleep(0.05)

    def stop(self) -> None:
        if self._process is not None:
            self._process.terminate()
            try:
                self._process.wait(10)
            except subprocess.TimeoutExpired:
                self._process.kill()
            self._process = None
        self.socket_path.unlink(missing_ok=True)


# -- the programs -----------------------------------------------------------------------------


def _dbt_preload() -> None:
    import dbt.adapters.postgres
    import dbt.cli.main  # noqa: F401


def _dbt_main() -> None:
    from dbt.cli.main import cli

    cli()


def _dbt_declines(argv: list[str], env: dict[str, str], started: Mapping[str, str]) -> str | None:
    return None  # dbt reads its settings when it runs: every call is served


def _airflow_preload() -> None:
    """What ``airflow dags test`` spends its first seconds on, done once: Airflow, its CLI, the
    plugins (the lineage plugin builds its app), the in-process execution API's app (about 5 s:
    some 400 routes), and Great Expectations (the check task's imports)."""
    import airflow.__main__  # noqa: F401
    import great_expectations  # noqa: F401
    from airflow import plugins_manager
    from airflow.cli import cli_parser
    from airflow.cli.commands import dag_command  # noqa: F401
    from airflow.sdk.execution_time import supervisor

    cli_parser.get_parser()
    plugins_manager.ensure_plugins_loaded()
    # ``dag.test()`` runs its tasks against the process's one in-process execution API (cached
    # by Airflow), whose app is built on first use and whose versioned routes Cadwyn generates on
    # its first request (5 s): both done here, so each forked run has them. No request is made:
    # no event loop, thread or lifespan (whose end would clear the app's service registry) is
    # left behind for a child to inherit.
    app = supervisor.in_process_api_server().app
    if not getattr(app, "_cadwyn_initialized", True):
        app._cadwyn_initialize()


def _airflow_main() -> None:
    from airflow.__main__ import main

    main()  # type: ignore[no-untyped-call]


#: Variables read when a command runs, not when Airflow is imported: the lineage settings,
#: Airflow connections and variables from the environment. A call whose environment differs from
#: the server's in anything else that Airflow, its plugins or Python read at import goes to the
#: real ``airflow``, which reads it.
_READ_AT_RUN = ("LINEAGE_", "AIRFLOW_CONN_", "AIRFLOW_VAR_")
#: (PySpark's own variables, which a test session's Spark session adds to its environment, are read
#: when a task starts a session: they may differ.)
_READ_AT_IMPORT = ("AIRFLOW", "_AIRFLOW", "PYTHON", "GX_", "OPENLINEAGE", "OTEL_", "LD_", "PATH", "HOME", "TZ",
                   "LANG", "LC_", "TMP", "TEMP", "NO_COLOR", "FORCE_COLOR")


def _airflow_declines(argv: list[str], env: dict[str, str], started: Mapping[str, str]) -> str | None:
    if argv[1:3] not in (["dags", "test"], ["dags", "reserialize"]):
        return "only `airflow dags test` and `airflow dags reserialize` are served"
    changed = sorted(name for name in set(env) | set(started) if env.get(name) != started.get(name)
                     and not name.startswith(_READ_AT_RUN) and name.startswith(_READ_AT_IMPORT))
    return f"differs from the server's environment in {', '.join(changed)}" if changed else None


def _python_preload() -> None:
    return None  # the interpreter alone: the role the engine's own tests run (tests/unit/test_fork_server.py)


def _python_main() -> None:
    """``python -c CODE ARGS...`` or ``python SCRIPT ARGS...``, as the interpreter runs them."""
    import runpy

    if sys.argv[1:2] == ["-c"]:
        code, sys.argv = sys.argv[2], ["-c", *sys.argv[3:]]
        exec(compile(code, "<string>", "exec"), {"__name__": "__main__"})
    else:
        sys.argv = sys.argv[1:]
        runpy.run_path(sys.argv[0], run_name="__main__")


def _python_declines(argv: list[str], env: dict[str, str], started: Mapping[str, str]) -> str | None:
    return None if len(argv) > 1 else "an interactive interpreter is not served"


_Declines = Callable[[list[str], dict[str, str], Mapping[str, str]], "str | None"]
_Role = tuple[Callable[[], None], Callable[[], None], _Declines]
ROLES: dict[str, _Role] = {
    "dbt": (_dbt_preload, _dbt_main, _dbt_declines),
    "airflow": (_airflow_preload, _airflow_main, _airflow_declines),
    "python": (_python_preload, _python_main, _python_declines),
}


# -- the server ---------------------------------------------------------------------------------


def _receive(conn: socket.socket) -> tuple[dict[str, object], list[int]]:
    """One request: its length-prefixed JSON and the three descriptors sent with its first bytes."""
    fds = array.array("i")
    data, ancillary, _, _ = conn.recvmsg(1 << 16, socket.CMSG_LEN(3 * fds.itemsize))
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[: len(payload) - len(payload) % fds.itemsize])
    while len(data) < 4 or len(data) < 4 + struct.unpack("!I", data[:4])[0]:
        chunk = conn.recv(1 << 16)
        if not chunk:
            raise ConnectionError("the client left before its request was whole")
        data += chunk
    return json.loads(data[4:]), list(fds)


def _end_with_caller(conn: socket.socket) -> None:
    """The program ends when its caller does, as a process killed with its caller would: the
    caller sends nothing after its request, so its end of the socket closing (the client killed,
    interrupted or timed out) is the only thing this read returns before the exit code."""
    try:
        conn.recv(1)
    except OSError:
        pass
    os._exit(143)  # SIGTERM's exit status; the database ends the child's sessions


def _run(conn: socket.socket, role: str, started: Mapping[str, str]) -> None:
    """In the forked child: become the caller's process, run the program, answer its exit code."""
    _, main, declines = ROLES[role]
    request, fds = _receive(conn)
    argv = [str(arg) for arg in request["argv"]]  # type: ignore[attr-defined]
    env = {str(k): str(v) for k, v in dict(request["env"]).items()}  # type: ignore[call-overload]
    reason = declines(argv, env, started)
    if reason is not None:
        print(f"{role} server: pid {os.getpid()} declines {' '.join(argv)}: {reason}", flush=True)
        conn.sendall(_CODE.pack(DECLINED))
        return
    print(f"{role} server: pid {os.getpid()} runs {' '.join(argv)}", flush=True)
    for target, fd in enumerate(fds[:3]):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(str(request["cwd"]))
    os.environ.clear()
    os.environ.update(env)
    sys.argv = argv
    threading.Thread(target=_end_with_caller, args=(conn,), daemon=True).start()
    code = 0
    try:
        main()
    except SystemExit as exit_:  # as the interpreter does: an int is the code, a message goes to stderr
        if exit_.code is None or isinstance(exit_.code, int):
            code = exit_.code or 0
        else:
            print(exit_.code, file=sys.stderr)
            code = 1
    except BaseException:  # an uncaught error: its traceback and exit 1, as the interpreter does
        traceback.print_exc()
        code = 1
    # What the interpreter's exit would do: threading's own exit hooks (executors never shut down
    # are woken and wound up) and a wait for the threads that are not daemons (a task's listener
    # may still be emitting), then the exit handlers (multiprocessing's finalizers unlink dbt's
    # semaphores; skipped, its resource tracker warns about them on the caller's stderr), before
    # the code goes back: the caller's program has then finished
    threading._shutdown()  # type: ignore[attr-defined]
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    conn.sendall(_CODE.pack(code))


def serve(role: str, socket_path: str, parent: int | None = None) -> None:
    """Import the program, then fork a child per connection on ``socket_path`` until terminated,
    or until ``parent`` (the test session that started it) is gone: a session killed outright
    (SIGKILL, a CI timeout) leaves no server behind."""
    import signal

    if parent is not None:
        threading.Thread(target=_end_with_parent, args=(parent, socket_path), daemon=True).start()
    started = dict(os.environ)  # before the program's imports, which may set variables of their own
    preload, _, _ = ROLES[role]
    preload()
    sys.stdout.flush()
    sys.stderr.flush()

    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    staged = socket_path + ".new"
    if os.path.exists(staged):
        os.unlink(staged)
    listener.bind(staged)
    listener.listen(16)
    os.replace(staged, socket_path)  # the socket appears once it listens
    while True:
        conn, _ = listener.accept()
        if os.fork() == 0:
            listener.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # the program waits for processes of its own
            try:
                _run(conn, role, started)
            except BaseException:  # before the program ran or after: the caller gets no code and says so
                traceback.print_exc()  # into the server's log, or the caller's stderr once taken
            finally:
                os._exit(0)  # the code went over the socket; skip the server's exit handlers
        conn.close()


def _end_with_parent(parent: int, socket_path: str) -> None:
    """Exit once the process that started the server is gone (this process is then another's
    child). A forked child has no copy of this thread: a run in progress ends with its caller."""
    while os.getppid() == parent:
        time.sleep(0.5)
    with contextlib.suppress(OSError):
        os.unlink(socket_path)
    os._exit(0)


if __name__ == "__main__":
    serve(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else None)

"""dbt already imported: a fork server for the test session, so each ``dbt`` call costs what dbt
does, not the 2 s of importing it.

Each ``dbt`` invocation of the suite (about 50: the fixtures' marts, the tests' rebuilds, the DAG
runs' builds) started a Python process that spent 2-2.5 s importing dbt before doing 0.5 s of work. This
server, run by dbt's own interpreter (``.venv-dbt``), imports dbt's CLI and the PostgreSQL
adapter once, then forks a child per call: the child takes the caller's standard streams (passed
over a Unix socket), working directory, environment and arguments, runs dbt's own entry point
(``dbt.cli.main.cli``, what the ``dbt`` script runs) and exits with its code, which goes back to
the caller. Every call is still a process of its own, with its own state; only the imports are
shared. ``DbtServer.write_client`` writes the ``dbt`` executable that the warehouse's ``LINEAGE_DBT_BIN``
points at; ``dbt-ol`` beside it is the real one, which calls ``dbt`` from the PATH, so here.

This module runs under two interpreters: the suite's (``DbtServer``, which starts and stops the
server) and dbt's (``serve``); it imports nothing but the standard library at the top.
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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DBT_VENV = ROOT / ".venv-dbt"
_CODE = struct.Struct("!i")

CLIENT = '''#!{python} -IS
"""dbt, run by the warm fork server at {socket} (harness/dbt_server.py), or the real dbt while
that server is not listening (not started yet, or gone)."""
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
    os.execv({dbt!r}, [{dbt!r}, *sys.argv[1:]])
request = json.dumps({{"argv": ["dbt", *sys.argv[1:]], "cwd": os.getcwd(), "env": dict(os.environ)}}).encode()
message = struct.pack("!I", len(request)) + request
sent = conn.sendmsg([message], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [0, 1, 2]))])
conn.sendall(message[sent:])
# this process ending (killed, interrupted, timed out) closes the socket, and the dbt child ends
answer = b""
while len(answer) < 4:
    chunk = conn.recv(4 - len(answer))
    if not chunk:
        sys.exit("dbt: the fork server closed the connection without an exit code")
    answer += chunk
sys.exit(struct.unpack("!i", answer)[0])
'''


class DbtServer:
    """The server process for one test session: point ``LINEAGE_DBT_BIN`` at ``write_client()``,
    ``start`` it, ``stop`` it at the end."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.socket_path = home / "dbt-server.sock"
        self.bin_dir = home / "dbt-bin"
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def dbt(self) -> Path:
        return self.bin_dir / "dbt"

    def write_client(self) -> Path:
        """Write the ``dbt`` executable (and ``dbt-ol`` beside it); cheap, starts nothing."""
        self.bin_dir.mkdir(parents=True, exist_ok=True)
        self.dbt.write_text(CLIENT.format(python=DBT_VENV / "bin" / "python", socket=str(self.socket_path),
                                          dbt=str(DBT_VENV / "bin" / "dbt")))
        self.dbt.chmod(0o755)
        dbt_ol = self.bin_dir / "dbt-ol"
        if not dbt_ol.is_symlink():
            dbt_ol.symlink_to(DBT_VENV / "bin" / "dbt-ol")
        return self.dbt

    def start(self) -> None:
        """Start the server in the background: its socket appears once dbt is imported (about
        2 s); until then the client runs the real dbt."""
        if self._process is not None:
            return
        self.home.mkdir(parents=True, exist_ok=True)
        self.socket_path.unlink(missing_ok=True)
        with (self.home / "dbt-server.log").open("ab") as log:
            self._process = subprocess.Popen(
                [str(DBT_VENV / "bin" / "python"), "-I", __file__, str(self.socket_path), str(os.getpid())],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log)

    def wait_listening(self, timeout: float = 60.0) -> None:
        """Wait for the socket (for a check that the server, not the fallback, answers)."""
        deadline = time.monotonic() + timeout
        while not self.socket_path.exists():
            if self._process is None or self._process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the dbt fork server is not listening; see {self.home / 'dbt-server.log'}")
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
    """dbt ends when its caller does, as a dbt process killed with its caller would: the caller
    sends nothing after its request, so its end of the socket closing (the client killed,
    interrupted or timed out) is the only thing this read returns before the exit code."""
    try:
        conn.recv(1)
    except OSError:
        pass
    os._exit(143)  # SIGTERM's exit status; the database ends the child's sessions


def _run(conn: socket.socket) -> None:
    """In the forked child: become the caller's dbt process, run dbt, answer its exit code."""
    request, fds = _receive(conn)
    print(f"dbt server: pid {os.getpid()} runs {' '.join(map(str, request['argv']))}", flush=True)  # type: ignore[call-overload]
    for target, fd in enumerate(fds[:3]):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(str(request["cwd"]))
    os.environ.clear()
    os.environ.update({str(k): str(v) for k, v in dict(request["env"]).items()})  # type: ignore[call-overload]
    sys.argv = [str(arg) for arg in request["argv"]]  # type: ignore[attr-defined]
    threading.Thread(target=_end_with_caller, args=(conn,), daemon=True).start()
    code = 0
    try:
        from dbt.cli.main import cli

        cli()
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
    except BaseException:  # an uncaught error: exit 2, as from dbt's script
        traceback.print_exc()
        code = 2
    # What the interpreter's exit would run (multiprocessing's finalizers unlink dbt's
    # semaphores; skipped, its resource tracker warns about them on the caller's stderr), before
    # the code goes back: the caller's dbt has then finished
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    conn.sendall(_CODE.pack(code))


def serve(socket_path: str, parent: int | None = None) -> None:
    """Import dbt, then fork a child per connection on ``socket_path`` until terminated, or
    until ``parent`` (the test session that started it) is gone: a session killed outright
    (SIGKILL, a CI timeout) leaves no server behind."""
    import signal

    if parent is not None:
        threading.Thread(target=_end_with_parent, args=(parent, socket_path), daemon=True).start()

    import dbt.adapters.postgres  # the adapter the project uses, imported once
    import dbt.cli.main  # noqa: F401

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
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # dbt waits for processes of its own
            try:
                _run(conn)
            except BaseException:  # before dbt ran or after: the caller gets no code and says so
                traceback.print_exc()  # into the server's log, or the caller's stderr once taken
            finally:
                os._exit(0)  # the code went over the socket; skip the server's exit handlers
        conn.close()


def _end_with_parent(parent: int, socket_path: str) -> None:
    """Exit once the process that started the server is gone (this process is then another's
    child). A forked child has no copy of this thread: a dbt run in progress ends with its caller."""
    while os.getppid() == parent:
        time.sleep(0.5)
    with contextlib.suppress(OSError):
        os.unlink(socket_path)
    os._exit(0)


if __name__ == "__main__":
    serve(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else None)

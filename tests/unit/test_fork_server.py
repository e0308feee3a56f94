"""The fork server's engine (harness/fork_server.py) ends a served call as the interpreter ends
a process: threads that are not daemons finish first, an executor never shut down does not hang
it, an exit code or a message passes through, an uncaught error prints its traceback. Run on its
``python`` role (no program preloaded), so nothing but the engine is under test."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.fork_server import ForkServer


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    server = ForkServer(tmp_path_factory.mktemp("fork"), "python", Path(sys.executable), Path(sys.executable),
                        isolated=True)
    server.write_client()
    server.start()
    try:
        server.wait_listening(timeout=30)
        yield server.client
    finally:
        server.stop()


def run(client: Path, code: str, *args: str) -> tuple[int, str, str]:
    done = subprocess.run([str(client), "-c", code, *args], capture_output=True, text=True, timeout=30, check=False)
    return done.returncode, done.stdout, done.stderr


def test_a_thread_that_is_no_daemon_finishes_before_the_call_returns(client: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    code = ("import sys, threading, time\n"
            "def late():\n    time.sleep(0.5)\n    open(sys.argv[1], 'w').write('written')\n"
            "threading.Thread(target=late).start()\nprint('main done')")
    assert run(client, code, str(out)) == (0, "main done\n", "")
    assert out.read_text() == "written"


def test_an_executor_never_shut_down_does_not_hang_the_call(client: Path) -> None:
    code = ("import time\nfrom concurrent.futures import ThreadPoolExecutor\n"
            "ThreadPoolExecutor(2).submit(time.sleep, 0.1)")
    assert run(client, code)[0] == 0


def test_exit_codes_messages_and_errors_pass_as_from_the_interpreter(client: Path) -> None:
    for code in ("raise SystemExit(3)", "import sys; sys.exit('bye')", "raise ValueError('boom')", "pass"):
        served = run(client, code)
        real = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=False)
        assert served[0] == real.returncode, code
        assert served[1] == real.stdout
        assert real.stderr.splitlines()[-1:] == served[2].splitlines()[-1:], (code, served[2])
    assert "Traceback" in run(client, "raise ValueError('boom')")[2]


def test_a_program_ending_itself_with_os_exit_gives_1_and_says_so(client: Path) -> None:
    """A documented difference: the child's own os._exit leaves no code to send back."""
    served = run(client, "import os; os._exit(4)")
    assert served[0] == 1 and "closed the connection without an exit code" in served[2]

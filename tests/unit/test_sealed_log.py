"""The api-server's appendable raw log, on the real filesystem: concurrent appends of all the
server's processes share one open file, files are sealed into the hour's partition by size and
age, and what a killed process left is sealed (or continued) without its unacknowledged partial
line."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import orjson
import pytest

from warehouse.ingest.sealed_log import OPEN_SUFFIX, POINTER, SEALING_SUFFIX, SealedLog


def log_files(root: Path) -> list[Path]:
    return sorted(root.glob("dt=*/hour=*/*.jsonl"))


def test_concurrent_appends_go_to_one_file_sealed_whole_into_the_partition(tmp_path: Path) -> None:
    root, spool = tmp_path / "raw", tmp_path / "spool"
    sealed_log = SealedLog(str(root), spool, prefix="openlineage")

    def post(worker: int) -> None:
        for index in range(50):
            sealed_log.append(f'{{"worker":{worker},"index":{index}}}\n'.encode())

    threads = [threading.Thread(target=post, args=(worker,)) for worker in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert log_files(root) == []  # nothing is visible to the compaction before the seal
    assert len(list(spool.glob(f"*{OPEN_SUFFIX}"))) == 1

    sealed_log.close()

    files = log_files(root)
    assert len(files) == 1 and files[0].name.startswith("openlineage-")
    lines = files[0].read_text().splitlines()
    assert len(lines) == 400 and len(set(lines)) == 400
    assert list(spool.glob(f"*{OPEN_SUFFIX}")) == [] and not (spool / POINTER).is_symlink()
    assert sealed_log.sealed[-1].appends == 400


def test_a_file_is_sealed_when_the_next_append_would_pass_the_size_limit(tmp_path: Path) -> None:
    sealed_log = SealedLog(str(tmp_path / "raw"), tmp_path / "spool", max_bytes=100)
    line = b'{"x":"' + b"a" * 40 + b'"}\n'  # 49 bytes: two fit in 100
    for _ in range(5):
        sealed_log.append(line)
    sealed_log.close()
    sizes = sorted(path.stat().st_size for path in log_files(tmp_path / "raw"))
    assert sizes == [49, 98, 98]


def test_a_line_over_the_size_limit_still_gets_a_file_of_its_own(tmp_path: Path) -> None:
    sealed_log = SealedLog(str(tmp_path / "raw"), tmp_path / "spool", max_bytes=10)
    sealed_log.append(b'{"long":"line over ten bytes"}\n')
    sealed_log.append(b"{}\n")
    sealed_log.close()
    assert sorted(path.read_bytes() for path in log_files(tmp_path / "raw")) == [
        b'{"long":"line over ten bytes"}\n', b"{}\n"]


def test_an_aged_file_is_sealed_by_the_timer_and_an_idle_log_writes_no_file(tmp_path: Path) -> None:
    sealed_log = SealedLog(str(tmp_path / "raw"), tmp_path / "spool", max_age=0.2)
    sealed_log.start()
    try:
        sealed_log.append(b'{"a":1}\n')
        for _ in range(100):
            if log_files(tmp_path / "raw"):
                break
            threading.Event().wait(0.05)
        assert [path.read_bytes() for path in log_files(tmp_path / "raw")] == [b'{"a":1}\n']
        threading.Event().wait(0.5)
        assert len(log_files(tmp_path / "raw")) == 1  # no empty files while idle
    finally:
        sealed_log.close()


def test_partial_lines_and_bad_limits_are_refused(tmp_path: Path) -> None:
    sealed_log = SealedLog(str(tmp_path / "raw"), tmp_path / "spool")
    with pytest.raises(ValueError, match="whole lines"):
        sealed_log.append(b'{"no newline":1}')
    with pytest.raises(ValueError, match="positive"):
        SealedLog(str(tmp_path / "raw"), tmp_path / "spool", max_age=0)


CRASHING_WRITER = textwrap.dedent("""
    import os, sys
    from pathlib import Path
    from warehouse.ingest.sealed_log import SealedLog
    log = SealedLog(sys.argv[1], Path(sys.argv[2]))
    log.start()
    log.append(('{"acknowledged":"%s"}\\n' % sys.argv[3]).encode())
    os.write(log._current.fd, b'{"half-writ')  # a request that never got its answer
    os._exit(9)  # no close, no seal: killed
""")


def crash(root: Path, spool: Path, mark: str) -> None:
    crashed = subprocess.run([sys.executable, "-c", CRASHING_WRITER, str(root), str(spool), mark],
                             capture_output=True, text=True)
    assert crashed.returncode == 9, crashed.stderr


def test_the_first_process_to_start_seals_what_killed_ones_left_without_their_partial_line(tmp_path: Path) -> None:
    root, spool = tmp_path / "raw", tmp_path / "spool"
    crash(root, spool, "1")
    assert log_files(root) == [] and len(list(spool.glob(f"*{OPEN_SUFFIX}"))) == 1

    live = SealedLog(str(root), spool)
    live.start()  # no live process uses the spool: what is in it was left by the dead
    assert [path.read_bytes() for path in log_files(root)] == [b'{"acknowledged":"1"}\n']
    assert list(spool.glob(f"*{OPEN_SUFFIX}")) == []
    live.append(b'{"live":1}\n')
    live.close()
    assert sorted(path.read_bytes() for path in log_files(root)) == [b'{"acknowledged":"1"}\n', b'{"live":1}\n']


def test_a_live_process_continues_the_shared_file_after_cutting_a_killed_ones_partial_line(tmp_path: Path) -> None:
    root, spool = tmp_path / "raw", tmp_path / "spool"
    live = SealedLog(str(root), spool)
    live.start()
    live.append(b'{"live":1}\n')
    crash(root, spool, "2")  # it appended to the same file, then died in the middle of a line
    assert log_files(root) == [] and len(list(spool.glob(f"*{OPEN_SUFFIX}"))) == 1

    live.append(b'{"live":2}\n')
    live.close()
    assert [path.read_bytes() for path in log_files(root)] == [
        b'{"live":1}\n{"acknowledged":"2"}\n{"live":2}\n']


def test_recovery_seals_stray_open_files_and_leaves_a_file_another_process_holds(tmp_path: Path) -> None:
    import fcntl
    import os

    root, spool = tmp_path / "raw", tmp_path / "spool"
    spool.mkdir()
    (spool / f"openlineage-1764000000000-{'a' * 32}.jsonl{OPEN_SUFFIX}").write_bytes(b'{"stray":1}\n{"par')
    held = spool / f"openlineage-4242-{'b' * 32}.jsonl{OPEN_SUFFIX}"  # an earlier version's own file, flock'ed
    held.write_bytes(b'{"held":1}\n')
    holder = os.open(held, os.O_RDWR)
    fcntl.flock(holder, fcntl.LOCK_EX)
    try:
        live = SealedLog(str(root), spool)
        recovered = live.recover()
        assert [item.size_bytes for item in recovered] == [len(b'{"stray":1}\n')]
        [path] = log_files(root)
        assert path.read_bytes() == b'{"stray":1}\n' and path.parent.name == "hour=16"  # 2025-11-24T16:00Z
        assert held.exists()
    finally:
        os.close(holder)


SHARING_WRITER = textwrap.dedent("""
    import sys, threading, time
    from pathlib import Path
    from warehouse.ingest.sealed_log import SealedLog
    root, spool, worker, go = sys.argv[1], Path(sys.argv[2]), sys.argv[3], Path(sys.argv[4])
    log = SealedLog(root, spool, max_age=600)
    log.start()
    def post(thread):
        for index in range(100):
            line = '{"worker":"%s","thread":%d,"index":%d,"pad":"%s"}\\n' % (worker, thread, index, "x" * 500)
            if index % 2:
                log.append(line.encode())
            else:
                log.submit(line.encode()).result()
    threads = [threading.Thread(target=post, args=(thread,)) for thread in range(4)]
    for thread in threads: thread.start()
    for thread in threads: thread.join()
    print("appended", flush=True)
    while not go.exists():
        time.sleep(0.02)
    log.close()
""")


def test_the_processes_of_a_server_append_to_one_open_file(tmp_path: Path) -> None:
    root, spool, go = tmp_path / "raw", tmp_path / "spool", tmp_path / "go"
    workers = [subprocess.Popen([sys.executable, "-c", SHARING_WRITER, str(root), str(spool), str(worker), str(go)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for worker in range(3)]
    try:
        for worker in workers:
            assert worker.stdout is not None and worker.stdout.readline().strip() == "appended", worker.stderr
        assert log_files(root) == []
        assert len(list(spool.glob(f"*{OPEN_SUFFIX}"))) == 1  # 1,200 appends of three processes, one file
        go.touch()
        for worker in workers:
            assert worker.wait(timeout=60) == 0
    finally:
        for worker in workers:
            worker.kill()
            worker.communicate()  # reaps it and closes its pipes (an unclosed pipe is a ResourceWarning)
    [path] = log_files(root)  # the first to stop sealed it; the others found nothing to seal
    lines = [orjson.loads(line) for line in path.read_bytes().splitlines()]  # every line whole
    assert sorted((line["worker"], line["thread"], line["index"]) for line in lines) == sorted(
        (str(worker), thread, index) for worker in range(3) for thread in range(4) for index in range(100))


def test_any_process_seals_the_shared_file_by_size(tmp_path: Path) -> None:
    root, spool = tmp_path / "raw", tmp_path / "spool"
    first, second = (SealedLog(str(root), spool, max_bytes=100) for _ in range(2))
    line = b'{"x":"' + b"a" * 40 + b'"}\n'  # 49 bytes: two fit in 100
    for writer in (first, second, second, first, second):
        writer.append(line)
    assert sorted(path.stat().st_size for path in log_files(root)) == [98, 98]
    first.close()
    second.close()
    assert sorted(path.stat().st_size for path in log_files(root)) == [49, 98, 98]


def test_a_failed_append_leaves_no_partial_line_for_the_next_one_to_continue(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    sealed_log = SealedLog(str(tmp_path / "raw"), tmp_path / "spool")
    sealed_log.append(b'{"a":1}\n')
    real_write = os.write

    def disk_full_midway(fd: int, data: bytes) -> int:
        real_write(fd, data[:5])  # some bytes reach the file, then the disk is full
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", disk_full_midway)
    with pytest.raises(OSError, match="No space left"):
        sealed_log.append(b'{"lost":"never acknowledged"}\n')
    monkeypatch.setattr(os, "write", real_write)
    sealed_log.append(b'{"b":2}\n')
    sealed_log.close()
    assert [path.read_bytes() for path in log_files(tmp_path / "raw")] == [b'{"a":1}\n{"b":2}\n']


def test_submitted_lines_share_syncs_and_each_future_completes_once_its_lines_are_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    sealed_log = SealedLog(str(tmp_path / "raw"), tmp_path / "spool")
    real_sync = os.fdatasync
    first_sync_started, release_first_sync = threading.Event(), threading.Event()

    def slow_first_sync(fd: int) -> None:
        if not first_sync_started.is_set():
            first_sync_started.set()
            release_first_sync.wait(10)  # a slow disk: submissions pile up behind this sync
        real_sync(fd)

    monkeypatch.setattr(os, "fdatasync", slow_first_sync)
    first = sealed_log.submit(b'{"n":0}\n')
    assert first_sync_started.wait(10)
    waiting = [sealed_log.submit(f'{{"n":{index}}}\n'.encode()) for index in range(1, 101)]
    assert not first.done() and not any(done.done() for done in waiting)  # none answered before its sync

    release_first_sync.set()
    for done in [first, *waiting]:
        assert done.result(timeout=10) is None
    sealed_log.close()

    [sealed] = sealed_log.sealed
    assert (sealed.appends, sealed.syncs) == (101, 2)  # the 100 that waited shared one sync
    [path] = log_files(tmp_path / "raw")
    assert path.read_text().splitlines() == [f'{{"n":{index}}}' for index in range(101)]


def test_a_failed_submission_fails_its_futures_and_the_writer_goes_on(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    sealed_log = SealedLog(str(tmp_path / "raw"), tmp_path / "spool")
    real_write = os.write

    def disk_full(fd: int, data: bytes) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", disk_full)
    with pytest.raises(OSError, match="No space left"):
        sealed_log.submit(b'{"lost":1}\n').result(timeout=10)
    monkeypatch.setattr(os, "write", real_write)
    assert sealed_log.submit(b'{"kept":1}\n').result(timeout=10) is None
    with pytest.raises(ValueError, match="whole lines"):
        sealed_log.submit(b'{"no newline":1}')
    sealed_log.close()
    assert [path.read_bytes() for path in log_files(tmp_path / "raw")] == [b'{"kept":1}\n']


def test_close_writes_what_was_submitted_before_it_and_a_later_submit_starts_again(tmp_path: Path) -> None:
    sealed_log = SealedLog(str(tmp_path / "raw"), tmp_path / "spool")
    submitted = [sealed_log.submit(f'{{"n":{index}}}\n'.encode()) for index in range(50)]
    sealed_log.close()
    assert all(done.done() and done.exception() is None for done in submitted)
    assert sealed_log.submit(b'{"after":1}\n').result(timeout=10) is None
    sealed_log.close()
    assert sorted(len(path.read_text().splitlines()) for path in log_files(tmp_path / "raw")) == [1, 50]


def test_a_file_whose_move_into_the_log_fails_waits_in_the_spool_and_the_recovery_moves_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, spool = tmp_path / "raw", tmp_path / "spool"
    sealed_log = SealedLog(str(root), spool, max_bytes=20)
    real_place = sealed_log._writer.place

    def unreachable(*args: object, **kwargs: object) -> str:
        raise OSError(5, "the object store did not answer")

    monkeypatch.setattr(sealed_log._writer, "place", unreachable)
    sealed_log.append(b'{"first":"a line"}\n')
    sealed_log.append(b'{"second":"a line"}\n')  # seals the first file: its move fails, the append does not
    assert log_files(root) == [] and len(list(spool.glob(f"*{SEALING_SUFFIX}"))) == 1

    monkeypatch.setattr(sealed_log._writer, "place", real_place)
    assert [item.size_bytes for item in sealed_log.recover()] == [19]
    sealed_log.close()
    assert sorted(path.read_bytes() for path in log_files(root)) == [b'{"first":"a line"}\n',
                                                                    b'{"second":"a line"}\n']
    assert [path.name for path in spool.iterdir() if not path.name.startswith(".")] == []


KILLED_MID_SEAL = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    import warehouse.ingest.sealed_log as sealed_log
    log = sealed_log.SealedLog(sys.argv[1], Path(sys.argv[2]))
    log.append(b'{"killed":1}\\n')
    real_unlink, real_replace = Path.unlink, os.replace
    def unlink(path, *args, **kwargs):
        real_unlink(path, *args, **kwargs)
        if sys.argv[3] == "pointer" and path.name == sealed_log.POINTER:
            os.kill(os.getpid(), signal.SIGKILL)
    def replace(source, target):
        real_replace(source, target)
        if sys.argv[3] == "rename" and str(target).endswith(sealed_log.SEALING_SUFFIX):
            os.kill(os.getpid(), signal.SIGKILL)
    Path.unlink, sealed_log.os.replace = unlink, replace
    log.seal_now()
""")


@pytest.mark.parametrize("killed_after", ["pointer", "rename"])
def test_a_seal_killed_half_way_loses_nothing_and_changes_no_file_in_the_log(tmp_path: Path,
                                                                           killed_after: str) -> None:
    root, spool = tmp_path / "raw", tmp_path / "spool"
    live = SealedLog(str(root), spool)
    live.start()
    live.append(b'{"live":1}\n')  # the live process holds the shared file open
    killed = subprocess.run([sys.executable, "-c", KILLED_MID_SEAL, str(root), str(spool), killed_after],
                            capture_output=True, text=True)
    assert killed.returncode == -9, killed.stderr
    live.append(b'{"live":2}\n')  # into a new file: the one being sealed is out of the appends
    [recovered] = live.recover()  # what each process's timer does with a stray
    placed = Path(recovered.path).read_bytes()
    assert placed == b'{"live":1}\n{"killed":1}\n'
    live.append(b'{"live":3}\n')
    live.close()
    assert Path(recovered.path).read_bytes() == placed  # nothing appended to a file in the log
    assert sorted(line for path in log_files(root) for line in path.read_bytes().splitlines()) == [
        b'{"killed":1}', b'{"live":1}', b'{"live":2}', b'{"live":3}']
    assert [path.name for path in spool.iterdir() if not path.name.startswith(".")] == []

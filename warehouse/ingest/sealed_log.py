"""An appendable raw log for a long-lived server (the api-server's OpenLineage endpoint):
many small appends, few files, each acknowledged append durable.

All the processes of a server (its worker processes, and any other process given the same spool)
append to **one** open file in the spool folder, so a steady trickle over an hour makes one file
per ``max_age`` however many workers answer requests. An append returns once its lines are on
disk (``fdatasync``). Appends share syncs (group commit): ``submit`` hands the lines to the
process's writer thread, which writes everything submitted meanwhile with one ``write`` and one
``fdatasync``, then completes each submitter's future, so a busy server syncs once for many
requests and an async caller needs no thread per request; ``append`` (blocking) shares a sync
with the appends that wait for the same one.

The spool holds the open file (``<prefix>-<opened ms>-<id>.jsonl.open``), the ``current``
pointer to it (a symbolic link), and ``.lock``: every write, every new file and every seal
happens under an exclusive ``flock`` of ``.lock``, so lines of different processes never
interleave, and a process checks under it that the pointer still names the file it holds open.
The file is *sealed* (synced, closed and moved into the hour's partition under the log root,
where the compaction lists it) by whichever process finds it at ``max_bytes`` or ``max_age``
seconds old (a background timer in each process seals idle files), and when a process stops.
The compaction therefore reads few files and never a half-written one: once the pointer has
moved on, nobody writes into the sealed file.

Crashes: each live process holds a shared ``flock`` on ``.users``; the first process to start
after all of them died (``start``) seals the open file they left, and any process seals a stray
open file the pointer does not name. A write that died half-way (only a killed process leaves
one: the others run under the lock) was never acknowledged; the next writer, or the recovery,
cuts it off at the last whole line. A seal killed half-way, or a move into the log that failed,
leaves a stray file that each process's timer hands to the recovery. The spool must therefore
be on a local (POSIX-locking) filesystem; the log root may be anywhere ``EventLogWriter`` writes.
"""

from __future__ import annotations

import fcntl
import logging
import os
import queue
import re
import threading
import uuid
from collections.abc import Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from lineage.transport.log_file import LOG_SUFFIX, EventLogWriter, fsync_folder

log = logging.getLogger(__name__)

OPEN_SUFFIX = ".open"
SEALING_SUFFIX = ".sealing"  # sealed, being moved into the log (outside the spool's lock: maybe an upload)
POINTER = "current"  # the symbolic link naming the open file all processes append to
_LOCK = ".lock"
_USERS = ".users"
_OPENED_MS = re.compile(r"-(\d{13})-[0-9a-f]{32}" + re.escape(LOG_SUFFIX + OPEN_SUFFIX) + "$")


@dataclass
class _OpenFile:
    """This process's handle on the shared open file."""

    path: Path
    fd: int
    opened_on: datetime  # wall clock, from the file's name: its partition, and its age
    written: int = 0  # the file's size after this process's last write (or when it looked; -1: not yet)
    synced: int = 0  # bytes this process knows are on disk
    appends: int = 0  # this process's appends into the file
    syncs: int = 0


_Submitted = queue.SimpleQueue[tuple[bytes, Future[None]] | None]  # lines and their answer; None: stop


@dataclass
class _Sealing:
    """A file taken out of the appends (renamed ``.sealing``), not yet in the log; ``fd`` holds
    its ``flock`` until it is, so no other process moves it too."""

    path: Path
    fd: int
    opened_on: datetime
    size: int
    appends: int = 0
    syncs: int = 0


@dataclass(frozen=True)
class Sealed:
    """A file moved into the log: where, how many bytes, and this process's appends and syncs
    into it (fewer syncs than appends: appends shared them; other processes' are not counted)."""

    path: str
    size_bytes: int
    appends: int
    syncs: int = 0


class SealedLog:
    """A server's appendable log, shared by the processes given the same ``spool``. Thread-safe;
    ``close`` seals what is open."""

    def __init__(self, log_root: str, spool: Path, *, prefix: str = "ingest", max_bytes: int = 64 * 1024 * 1024,
                 max_age: float = 60.0) -> None:
        if max_bytes < 1 or max_age <= 0:
            raise ValueError("max_bytes and max_age must be positive")
        self.spool = spool
        self.prefix = prefix
        self.max_bytes = max_bytes
        self.max_age = max_age
        self._writer = EventLogWriter(log_root)
        self._lock = threading.Lock()  # this process's threads: the open file and appends to it
        self._sync_lock = threading.Lock()  # one sync at a time; appends waiting on it share the next
        self._lock_fd: int | None = None  # the spool's .lock, flock'ed (under _lock) across processes
        self._lock_pid = 0  # the process that opened _lock_fd
        self._users_fd: int | None = None  # the spool's .users, held shared while started
        self._current: _OpenFile | None = None
        self._timer: threading.Thread | None = None
        self._stopping = threading.Event()
        self._committer_lock = threading.Lock()  # starting and stopping the writer thread
        self._committer: tuple[threading.Thread, _Submitted] | None = None  # the writer thread and its queue
        self.sealed: list[Sealed] = []  # the files this process sealed, newest last (bounded)

    # appending

    def append(self, data: bytes) -> None:
        """Append whole lines (``data`` ends with a newline) and return once they are on disk."""
        _check_lines(data)
        self._sync(*self._write(data, 1))

    def submit(self, data: bytes) -> Future[None]:
        """Queue whole lines for the writer thread; the future completes once they are on disk
        (or fails with the ``OSError`` that kept them off it). What is submitted while the writer
        syncs is written next with one ``write`` and one ``fdatasync`` (group commit). An async
        caller awaits ``asyncio.wrap_future(log.submit(data))``."""
        _check_lines(data)
        done: Future[None] = Future()
        with self._committer_lock:
            if self._committer is None:
                submitted: _Submitted = queue.SimpleQueue()
                thread = threading.Thread(target=self._write_submitted, args=(submitted,), name="sealed-log-writer",
                                          daemon=True)
                thread.start()
                self._committer = (thread, submitted)
            self._committer[1].put((data, done))
        return done

    def _write_submitted(self, submitted: _Submitted) -> None:
        """The writer thread: take everything submitted so far, write it, sync it, answer; until
        ``close`` puts None."""
        stop = False
        while not stop:
            item = submitted.get()
            if item is None:
                return
            batch = [item]
            while True:  # drain what arrived meanwhile (during the last sync): one write for all
                try:
                    item = submitted.get_nowait()
                except queue.Empty:
                    break
                if item is None:
                    stop = True
                    break
                batch.append(item)
            waiting = [done for _, done in batch if done.set_running_or_notify_cancel()]
            try:
                self._sync(*self._write(b"".join(data for data, _ in batch), len(batch)))
            except Exception as exc:  # the submitters' error (a full disk): they answer it, the writer goes on
                for done in waiting:
                    done.set_exception(exc)
            else:
                for done in waiting:
                    done.set_result(None)

    def _write(self, data: bytes, appends: int) -> tuple[_OpenFile, int]:
        """Write ``data`` (whole lines, of ``appends`` appends) at the end of the shared open
        file, sealing it first when ``data`` would take it past ``max_bytes``; the file and where
        ``data`` ends. (Files are sealed by age on the timer.)"""
        sealing = None
        try:
            with self._locked():
                current = self._open_file(create=True)
                assert current is not None
                if current.written > 0 and current.written + len(data) > self.max_bytes:
                    sealing = self._seal(current)
                    current = self._open_file(create=True)
                    assert current is not None
                start = current.written
                written = 0
                try:
                    while written < len(data):  # os.write may write less than asked
                        written += os.write(current.fd, data[written:])
                except OSError:
                    # a part of the lines may be in the file (a full disk): cut it off, or the
                    # next acknowledged append would continue a broken line
                    os.ftruncate(current.fd, start)
                    raise
                current.written = start + len(data)
                current.appends += appends
                return current, current.written
        finally:
            if sealing is not None:  # outside the spool's lock: the other processes go on appending
                self._place_or_leave(sealing)

    def _sync(self, file: _OpenFile, end: int) -> None:
        with self._sync_lock:
            if file.synced >= end:
                return  # another append's sync (or the seal, here or in another process) covered these bytes
            target = file.written
            os.fdatasync(file.fd)  # the data and the file's size; not its times
            file.synced = max(file.synced, target)
            file.syncs += 1

    # the shared open file (every method below runs under ``_locked``)

    @contextmanager
    def _locked(self) -> Iterator[None]:
        """This process's lock, then the spool's: no other thread or process writes, opens a new
        file or seals meanwhile."""
        with self._lock:
            if self._lock_fd is None or self._lock_pid != os.getpid():  # (a forked child needs its own)
                self.spool.mkdir(parents=True, exist_ok=True)
                self._lock_fd = os.open(self.spool / _LOCK, os.O_RDWR | os.O_CREAT, 0o644)
                self._lock_pid = os.getpid()
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(self._lock_fd, fcntl.LOCK_UN)

    def _open_file(self, *, create: bool) -> _OpenFile | None:
        """The file the pointer names, opened by this process (a new one when there is none and
        ``create``), its size known and its end a whole line."""
        name = self._pointed()
        current = self._current
        if current is not None and (current.path.name != name or not _same_file(self.spool / name, current.fd)):
            self._let_go(current)  # sealed (synced first) by another process, or by one killed mid-seal
            current = None
        if current is None and name is not None:
            try:
                fd = os.open(self.spool / name, os.O_RDWR | os.O_APPEND)
            except FileNotFoundError:  # a seal that died before removing the pointer
                name = None
            else:
                current = self._current = _OpenFile(self.spool / name, fd, _opened_on(name, fd), written=-1)
        if current is None:
            if not create:
                return None
            current = self._current = self._create()
        size = os.fstat(current.fd).st_size
        if size != current.written:  # another process appended, or a killed one left half a line
            if size > 0 and os.pread(current.fd, 1, size - 1) != b"\n":
                size = _cut_after_last_line(current.fd)
                log.warning("cut a partial line (a write that was never acknowledged) off %s", current.path.name)
            current.written = size
        return current

    def _pointed(self) -> str | None:
        try:
            return os.readlink(self.spool / POINTER)
        except FileNotFoundError:
            return None

    def _create(self) -> _OpenFile:
        now = datetime.now(UTC)
        name = f"{self.prefix}-{int(now.timestamp() * 1000):013d}-{uuid.uuid4().hex}{LOG_SUFFIX}{OPEN_SUFFIX}"
        fd = os.open(self.spool / name, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_EXCL, 0o644)
        link = self.spool / f".{POINTER}-{uuid.uuid4().hex}"
        os.symlink(name, link)
        os.replace(link, self.spool / POINTER)
        fsync_folder(self.spool)
        return _OpenFile(self.spool / name, fd, _opened_on(name, fd))

    def _let_go(self, file: _OpenFile) -> None:
        """Close this process's handle on a file another process sealed (after syncing it)."""
        with self._sync_lock:
            file.synced = max(file.synced, file.written)
            os.close(file.fd)
        if self._current is file:
            self._current = None

    def _due(self, file: _OpenFile) -> bool:
        return (datetime.now(UTC) - file.opened_on).total_seconds() >= self.max_age

    def _seal(self, file: _OpenFile) -> _Sealing:
        """Take ``file`` out of the appends: sync it, rename it ``.sealing`` (holding its
        ``flock``) and drop the pointer to it. ``_place`` then moves it into the log, after the
        spool's lock is released."""
        with self._sync_lock:
            os.fsync(file.fd)
            size = os.fstat(file.fd).st_size
            file.synced = file.written = size
            fd, file.fd = file.fd, -1
        if self._current is file:
            self._current = None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # nobody else holds an appended file's
            if self._pointed() == file.path.name:  # first: a seal killed after it leaves a stray, not a
                (self.spool / POINTER).unlink()    # pointer naming a file gone from under its writers
            sealing = file.path.with_name(file.path.name.removesuffix(OPEN_SUFFIX) + SEALING_SUFFIX)
            os.replace(file.path, sealing)
            fsync_folder(self.spool)
        except BaseException:
            os.close(fd)  # and its flock: the recovery takes the file from wherever it was left
            raise
        return _Sealing(sealing, fd, file.opened_on, size, file.appends, file.syncs)

    def _place(self, sealing: _Sealing) -> Sealed:
        """Move a sealed file into the hour's partition of the log (a rename, or an upload)."""
        try:
            placed = self._writer.place(sealing.path, sealing.path.name.removesuffix(SEALING_SUFFIX),
                                        now=sealing.opened_on)
        finally:
            os.close(sealing.fd)
        sealed = Sealed(placed, sealing.size, sealing.appends, sealing.syncs)
        self.sealed = [*self.sealed[-999:], sealed]
        log.info("sealed %s (%d bytes; %d appends, %d syncs of this process)", placed, sealing.size,
                 sealing.appends, sealing.syncs)
        return sealed

    def _place_or_leave(self, sealing: _Sealing) -> None:
        """``_place``, for a caller whose own work is done (an append, whose lines are in the
        spool): a failure is logged and the file left in the spool, where the timer's recovery
        moves it later."""
        try:
            self._place(sealing)
        except OSError:
            log.exception("moving %s into the log failed; retried by the next recovery", sealing.path.name)

    def seal_if_due(self) -> Sealed | None:
        """Seal the open file when it is ``max_age`` old; returns what was sealed."""
        if not self.spool.is_dir():
            return None
        with self._locked():
            current = self._open_file(create=False)
            if current is None or not self._due(current):
                return None
            sealing = self._seal(current)
        return self._place(sealing)

    def seal_now(self) -> Sealed | None:
        """Seal the open file whatever its age (a test, or a shutdown)."""
        if not self.spool.is_dir():
            return None
        with self._locked():
            current = self._open_file(create=False)
            if current is None:
                return None
            if current.written == 0:  # created and never written (a write that failed): nothing to seal
                self._let_go(current)
                return None
            sealing = self._seal(current)
        return self._place(sealing)

    # lifetime

    def start(self) -> None:
        """Join the spool's users (sealing first what processes that died left in it), then start
        the timer that seals aged files."""
        if self._users_fd is None:
            self.spool.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.spool / _USERS, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                alone = True
            except BlockingIOError:
                alone = False
            self.recover(left_by_the_dead=alone)
            # not atomic (unlock, then lock): a process starting just then thinks itself alone and
            # seals the open file early; one more file, nothing lost
            fcntl.flock(fd, fcntl.LOCK_SH)
            self._users_fd = fd
        if self._timer is None:
            self._stopping.clear()
            self._timer = threading.Thread(target=self._tick, name="sealed-log-timer", daemon=True)
            self._timer.start()

    def _tick(self) -> None:
        interval = min(5.0, self.max_age / 4)
        while not self._stopping.wait(interval):
            try:
                self.seal_if_due()
                if self._strays():  # a move into the log that failed, or a process killed mid-seal
                    self.recover()
            except OSError:
                log.exception("sealing the ingest log failed; retrying in %.0f s", interval)

    def close(self) -> None:
        """Stop the timer, let the writer finish what was submitted, seal the open file (the
        server is stopping; other live processes open a new one) and leave the spool's users. (A
        later ``submit`` starts a writer again.)"""
        self._stopping.set()
        if self._timer is not None:
            self._timer.join(timeout=10)
            self._timer = None
        with self._committer_lock:
            writer, self._committer = self._committer, None
            if writer is not None:
                writer[1].put(None)  # after everything submitted to this writer
        if writer is not None:
            writer[0].join()
        self.seal_now()
        if self._users_fd is not None:
            os.close(self._users_fd)
            self._users_fd = None

    def recover(self, *, left_by_the_dead: bool = False) -> list[Sealed]:
        """Seal the spool's stray files: open files the pointer does not name (nobody writes
        into them), sealed files whose move into the log failed or died, and with
        ``left_by_the_dead`` the open file the pointer names (no live process uses the spool);
        each cut after its last whole line."""
        if not self.spool.is_dir():
            return []
        taken: list[_Sealing] = []
        with self._locked():
            if left_by_the_dead:
                current = self._open_file(create=False)  # cuts a partial last line
                if current is not None and current.written > 0:
                    taken.append(self._seal(current))
                elif current is not None:
                    self._let_go(current)
            for link in self.spool.glob(f".{POINTER}-*"):  # made by a process killed in ``_create``
                link.unlink(missing_ok=True)
            pointed = self._pointed()
            strays = [path for path in self.spool.glob(f"*{LOG_SUFFIX}{OPEN_SUFFIX}") if path.name != pointed]
            for path in sorted([*strays, *self.spool.glob(f"*{LOG_SUFFIX}{SEALING_SUFFIX}")]):
                stray = self._take_stray(path)
                if stray is not None:
                    taken.append(stray)
        recovered = []
        for sealing in taken:  # outside the spool's lock
            try:
                recovered.append(self._place(sealing))  # which lets go of the file's flock, placed or not
            except OSError:
                log.exception("moving %s into the log failed; retried by the next recovery", sealing.path.name)
                continue
            log.warning("recovered %s (%d bytes) left by a stopped process", recovered[-1].path, sealing.size)
        return recovered

    def _strays(self) -> bool:
        """Whether the spool holds a file for ``recover``: an open file the pointer does not name,
        a sealed one not in the log, or a pointer a killed process was making."""
        pointed = self._pointed()
        return any(path.name != pointed for path in self.spool.glob(f"*{LOG_SUFFIX}{OPEN_SUFFIX}")) or any(
            self.spool.glob(f"*{SEALING_SUFFIX}")) or any(self.spool.glob(f".{POINTER}-*"))

    def _take_stray(self, path: Path) -> _Sealing | None:
        """A stray file of the spool, cut after its last whole line and renamed ``.sealing``;
        None when it is gone, empty, or another process holds it (a live process of an earlier
        version, which kept one flock'ed open file each; or one moving it into the log)."""
        try:
            fd = os.open(path, os.O_RDWR)
        except FileNotFoundError:
            return None  # another process recovered it
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        if not path.exists():  # placed by the process that held it, between our open and flock
            os.close(fd)
            return None
        size = _cut_after_last_line(fd)
        os.fsync(fd)
        if size == 0:
            path.unlink(missing_ok=True)
            os.close(fd)
            return None
        name = path.name.removesuffix(SEALING_SUFFIX).removesuffix(OPEN_SUFFIX)
        sealing = path.with_name(name + SEALING_SUFFIX)
        if sealing != path:
            os.replace(path, sealing)
            fsync_folder(self.spool)
        return _Sealing(sealing, fd, _opened_on(name + OPEN_SUFFIX, fd), size)


def _same_file(path: Path, fd: int) -> bool:
    """Whether ``path`` names the file ``fd`` has open."""
    try:
        named = os.stat(path)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino)


def _opened_on(name: str, fd: int) -> datetime:
    """When the open file ``name`` was opened: from its name, else (an earlier version's file)
    its last change."""
    found = _OPENED_MS.search(name)
    if found:
        return datetime.fromtimestamp(int(found.group(1)) / 1000, UTC)
    return datetime.fromtimestamp(os.fstat(fd).st_mtime, UTC)


def _check_lines(data: bytes) -> None:
    if not data.endswith(b"\n"):
        raise ValueError("append whole lines: data must end with a newline")


def _cut_after_last_line(fd: int) -> int:
    """Truncate the file after its last newline; returns the new size."""
    size = os.fstat(fd).st_size
    keep = size
    step = 65536
    while keep > 0:
        start = max(0, keep - step)
        chunk = os.pread(fd, keep - start, start)
        newline = chunk.rfind(b"\n")
        if newline >= 0:
            keep = start + newline + 1
            break
        keep = start
    if keep != size:
        os.ftruncate(fd, keep)
    return keep

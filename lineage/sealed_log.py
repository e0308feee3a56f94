"""An appendable raw log for a long-lived process (the api-server's OpenLineage endpoint):
many small appends, few files, each acknowledged append durable.

Concurrent appends of one process go to one open file in a spool folder; an append returns
once its lines are on disk (``fdatasync``). Appends share syncs (group commit): ``submit`` hands
the lines to the log's writer thread, which writes everything submitted meanwhile with one
``write`` and one ``fdatasync``, then completes each submitter's future, so a busy server syncs
once for many requests and an async caller needs no thread per request; ``append`` (blocking)
shares a sync with the appends that wait for the same one. The file is *sealed* (synced, closed and moved into
the hour's partition under the log root, where the compaction lists it) when it reaches
``max_bytes`` or is ``max_age`` seconds old (a background timer seals idle files), and when the
process stops. The compaction therefore reads few files and never a half-written one.

A process that crashes leaves its open file in the spool. Each open file holds an exclusive
``flock`` while its process lives, so the next process to start (``recover``) seals the files
no live process holds, after dropping a partial last line (an append that never returned, so
never acknowledged). The spool must therefore be on a local (POSIX-locking) filesystem; the
log root may be anywhere ``EventLogWriter`` writes.
"""

from __future__ import annotations

import fcntl
import logging
import os
import queue
import threading
import time
import uuid
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from lineage.log_writer import LOG_SUFFIX, EventLogWriter, fsync_folder

log = logging.getLogger(__name__)

OPEN_SUFFIX = ".open"


@dataclass
class _OpenFile:
    path: Path
    fd: int
    opened_at: float  # monotonic
    opened_on: datetime  # wall clock: the partition the file is sealed into
    written: int = 0
    synced: int = 0
    appends: int = 0
    syncs: int = 0


_Submitted = queue.SimpleQueue[tuple[bytes, Future[None]] | None]  # lines and their answer; None: stop


@dataclass(frozen=True)
class Sealed:
    """A file moved into the log: where, how many bytes, appends and syncs (fewer syncs than
    appends: appends shared them)."""

    path: str
    size_bytes: int
    appends: int
    syncs: int = 0


class SealedLog:
    """One process's appendable log. Thread-safe; ``close`` seals what is open."""

    def __init__(self, log_root: str, spool: Path, *, prefix: str = "ingest", max_bytes: int = 64 * 1024 * 1024,
                 max_age: float = 60.0) -> None:
        if max_bytes < 1 or max_age <= 0:
            raise ValueError("max_bytes and max_age must be positive")
        self.spool = spool
        self.prefix = prefix
        self.max_bytes = max_bytes
        self.max_age = max_age
        self._writer = EventLogWriter(log_root)
        self._lock = threading.Lock()  # the open file and appends to it
        self._sync_lock = threading.Lock()  # one sync at a time; appends waiting on it share the next
        self._current: _OpenFile | None = None
        self._timer: threading.Thread | None = None
        self._stopping = threading.Event()
        self._committer_lock = threading.Lock()  # starting and stopping the writer thread
        self._committer: tuple[threading.Thread, _Submitted] | None = None  # the writer thread and its queue
        self.sealed: list[Sealed] = []  # this process's sealed files, newest last (bounded)

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
        """Write ``data`` (whole lines, of ``appends`` appends) into the open file, sealing it
        first when ``data`` would take it past ``max_bytes``; the file and where ``data`` ends."""
        with self._lock:
            current = self._current
            if current is not None and (current.written + len(data) > self.max_bytes and current.written > 0):
                self._seal(current)
                current = None
            if current is None:
                current = self._current = self._open()
            written = 0
            try:
                while written < len(data):  # os.write may write less than asked
                    written += os.write(current.fd, data[written:])
            except OSError:
                # a part of the lines may be in the file (a full disk): cut it off, or the next
                # acknowledged append would continue a broken line
                os.ftruncate(current.fd, current.written)
                raise
            current.written += len(data)
            current.appends += appends
            return current, current.written

    def _sync(self, file: _OpenFile, end: int) -> None:
        with self._sync_lock:
            if file.synced >= end:
                return  # another append's sync (or the seal) covered these bytes
            target = file.written
            os.fdatasync(file.fd)  # the data and the file's size; not its times
            file.synced = max(file.synced, target)
            file.syncs += 1

    # files

    def _open(self) -> _OpenFile:
        self.spool.mkdir(parents=True, exist_ok=True)
        path = self.spool / f"{self.prefix}-{os.getpid()}-{uuid.uuid4().hex}{LOG_SUFFIX}{OPEN_SUFFIX}"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_EXCL, 0o644)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fsync_folder(self.spool)
        return _OpenFile(path, fd, time.monotonic(), datetime.now(UTC))

    def _seal(self, file: _OpenFile) -> None:
        """Sync, close and move ``file`` into the log (under ``_lock``)."""
        with self._sync_lock:
            os.fsync(file.fd)
            file.synced = file.written
            os.close(file.fd)
        if self._current is file:
            self._current = None
        name = file.path.name.removesuffix(OPEN_SUFFIX)
        placed = self._writer.place(file.path, name, now=file.opened_on)
        self.sealed = [*self.sealed[-999:], Sealed(placed, file.written, file.appends, file.syncs)]
        log.info("sealed %s (%d bytes, %d appends, %d syncs)", placed, file.written, file.appends, file.syncs)

    def seal_if_due(self) -> Sealed | None:
        """Seal the open file when it is ``max_age`` old; returns what was sealed."""
        with self._lock:
            current = self._current
            if current is None or time.monotonic() - current.opened_at < self.max_age:
                return None
            self._seal(current)
            return self.sealed[-1]

    def seal_now(self) -> Sealed | None:
        """Seal the open file whatever its age (a test, or a shutdown)."""
        with self._lock:
            current = self._current
            if current is None:
                return None
            self._seal(current)
            return self.sealed[-1]

    # lifetime

    def start(self) -> None:
        """Seal what crashed processes left, then start the timer that seals aged files."""
        self.recover()
        if self._timer is None:
            self._stopping.clear()
            self._timer = threading.Thread(target=self._tick, name="sealed-log-timer", daemon=True)
            self._timer.start()

    def _tick(self) -> None:
        interval = min(5.0, self.max_age / 4)
        while not self._stopping.wait(interval):
            try:
                self.seal_if_due()
            except OSError:
                log.exception("sealing the ingest log failed; retrying in %.0f s", interval)

    def close(self) -> None:
        """Stop the timer, let the writer finish what was submitted, and seal the open file. (A
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

    def recover(self) -> list[Sealed]:
        """Seal the spool's files that no live process holds (left by a crash), each cut after
        its last whole line."""
        recovered: list[Sealed] = []
        if not self.spool.is_dir():
            return recovered
        for path in sorted(self.spool.glob(f"*{LOG_SUFFIX}{OPEN_SUFFIX}")):
            with self._lock:
                if self._current is not None and self._current.path == path:
                    continue
                try:
                    fd = os.open(path, os.O_RDWR)
                except FileNotFoundError:
                    continue  # another process recovered it
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    os.close(fd)
                    continue  # a live process writes it
                size = _cut_after_last_line(fd)
                os.fsync(fd)
                name = path.name.removesuffix(OPEN_SUFFIX)
                if size == 0:
                    path.unlink(missing_ok=True)
                    os.close(fd)
                    continue
                placed = self._writer.place(path, name, now=datetime.fromtimestamp(os.fstat(fd).st_mtime, UTC))
                os.close(fd)
                recovered.append(Sealed(placed, size, 0))
                log.warning("recovered %s (%d bytes) left by a stopped process", placed, size)
        return recovered


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


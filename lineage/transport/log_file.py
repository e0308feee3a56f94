"""Append-only raw event logs: JSON lines files partitioned by UTC date and hour.

Each call to ``write`` produces one new file, written under a temporary name and renamed into
place, so a reader (the compaction) sees either the whole file or nothing. Temporary names
start with ``.``, which Hadoop input formats and the compaction's listing ignore.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import uuid
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

PARTITION_FORMAT = "dt=%Y-%m-%d/hour=%H"
LOG_SUFFIX = ".jsonl"


def partition_of(moment: datetime) -> str:
    """The partition folder (``dt=YYYY-MM-DD/hour=HH``) a file written at ``moment`` goes to."""
    return moment.astimezone(UTC).strftime(PARTITION_FORMAT)


def partition_start(path: str) -> datetime | None:
    """Start of the hour a file's ``dt=.../hour=...`` partition covers; None if not partitioned."""
    parts = {key: value for key, _, value in (seg.partition("=") for seg in path.split("/")) if value}
    try:
        return datetime.strptime(f"{parts['dt']} {parts['hour']}", "%Y-%m-%d %H").replace(tzinfo=UTC)
    except (KeyError, ValueError):
        return None


def render_lines(events: Iterable[Mapping[str, Any]]) -> str:
    """JSON lines text for ``events``: one compact object per line, newline-terminated."""
    return "".join(json.dumps(event, separators=(",", ":"), ensure_ascii=False) + "\n" for event in events)


class EventLogWriter:
    """Writes batches of events as new files under a log root.

    The root is a local folder or a ``file://`` URI; other URIs (``s3a://``, ``hdfs://``,
    ``gs://``...) are written through fsspec when it is installed.
    """

    def __init__(self, root: str) -> None:
        self.root = root
        scheme = urlparse(root).scheme
        self._local = scheme in ("", "file")

    def write(self, events: Iterable[Mapping[str, Any]], *, prefix: str = "events", now: datetime | None = None) -> str:
        """Write ``events`` as one new file; returns its path (or URI). Nothing is written for no events."""
        text = render_lines(events)
        if not text:
            return ""
        name = f"{prefix}-{uuid.uuid4().hex}{LOG_SUFFIX}"
        partition = partition_of(now or datetime.now(UTC))
        if self._local:
            return self._write_local(partition, name, text)
        return self._write_remote(partition, name, text)

    def place(self, source: Path, name: str, *, now: datetime | None = None) -> str:
        """Move the finished local file ``source`` into the partition of ``now`` as ``name``;
        returns its path (or URI). A rename when the root is on the same local filesystem, else
        a copy under a temporary name renamed into place, then ``source`` is removed."""
        partition = partition_of(now or datetime.now(UTC))
        if not self._local:
            uri = self._write_remote(partition, name, source.read_text(encoding="utf-8"))
            source.unlink()
            return uri
        folder = self._local_folder(partition)
        final = folder / name
        try:
            os.replace(source, final)
        except OSError as error:
            if error.errno != errno.EXDEV:
                raise
            temporary = folder / f".{name}.tmp"
            shutil.copyfile(source, temporary)
            with open(temporary, "rb") as handle:
                os.fsync(handle.fileno())
            os.replace(temporary, final)
            source.unlink()
        fsync_folder(folder)
        return str(final)

    def _local_folder(self, partition: str) -> Path:
        folder = Path(urlparse(self.root).path if self.root.startswith("file:") else self.root) / partition
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    def _write_local(self, partition: str, name: str, text: str) -> str:
        folder = self._local_folder(partition)
        final = folder / name
        temporary = folder / f".{name}.tmp"
        try:
            with open(temporary, "w", encoding="utf-8") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temporary, final)
        except BaseException:
            temporary.unlink(missing_ok=True)  # no half-written temporary left behind
            raise
        fsync_folder(folder)
        return str(final)

    def _write_remote(self, partition: str, name: str, text: str) -> str:
        try:
            import fsspec
        except ImportError as exc:
            raise RuntimeError(
                f"log root {self.root!r} is not local; install fsspec and its filesystem "
                "package (s3fs, gcsfs, ...) to write there"
            ) from exc
        base = self.root.rstrip("/")
        final = f"{base}/{partition}/{name}"
        temporary = f"{base}/{partition}/.{name}.tmp"
        fs, _ = fsspec.core.url_to_fs(base)
        try:
            with fs.open(temporary, "w", encoding="utf-8") as handle:
                handle.write(text)
            fs.mv(temporary, final)
        except BaseException:
            try:
                fs.rm(temporary)
            except Exception:  # best effort: the original error is what matters
                pass
            raise
        return final


def fsync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable (its entry survives a crash). Platforms that cannot
    open a folder (Windows) skip it."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)

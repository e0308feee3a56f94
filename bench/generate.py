"""Synthetic raw event logs: N pipelines x M runs, deterministic for a seed.

    python -m bench.generate --pipelines 1000 --runs 125 --out /tmp/logs

Each run has a start, reads of 1-4 upstream datasets, writes of 1-2 datasets, one field
operations record per written dataset, and an end. Events are written in files of
``--events-per-file`` lines, the way a batching producer or log shipper writes them.
"""

from __future__ import annotations

import argparse
import random
import sys
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from lineage.model.events import format_time
from lineage.transport.log_file import EventLogWriter

PROGRAM_TYPES = ("spark", "mapreduce", "workflow")


def raw_event(rng: random.Random, kind: str, namespace: str, run: dict[str, str], moment: datetime,
           payload: dict[str, Any]) -> dict[str, Any]:
    """One raw v1 event with a deterministic id drawn from ``rng``."""
    return {
        "schema_version": 1,
        "event_id": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
        "kind": kind,
        "event_time": format_time(moment),
        "namespace": namespace,
        "run": run,
        "payload": payload,
    }


def generate_events(pipelines: int, runs: int, *, seed: int, end: datetime, datasets: int | None = None
                    ) -> Iterator[dict[str, Any]]:
    """Events of ``pipelines`` x ``runs`` runs, hourly runs ending before ``end``."""
    rng = random.Random(seed)
    dataset_count = datasets or max(10, pipelines * 5)
    for pipeline in range(pipelines):
        namespace = f"ns{pipeline % 10}"
        program_type = PROGRAM_TYPES[pipeline % len(PROGRAM_TYPES)]
        reads = [f"ds_{rng.randrange(dataset_count)}" for _ in range(rng.randint(1, 4))]
        writes = [f"ds_{rng.randrange(dataset_count)}" for _ in range(rng.randint(1, 2))]
        for index in range(runs):
            run = {"application": f"app_{pipeline // 10}", "program_type": program_type,
                   "program": f"pipeline_{pipeline}", "run_id": str(uuid.UUID(int=rng.getrandbits(128), version=4))}
            started = end - timedelta(hours=runs - index, minutes=rng.randint(1, 50))
            yield raw_event(rng, "run_start", namespace, run, started, {})
            for name in reads:
                yield raw_event(rng, "dataset_access", namespace, run, started + timedelta(seconds=1),
                             {"dataset": {"type": "dataset", "name": name}, "access": "read"})
            for name in writes:
                yield raw_event(rng, "dataset_access", namespace, run, started + timedelta(seconds=2),
                             {"dataset": {"type": "dataset", "name": name}, "access": "write"})
                yield raw_event(rng, "field_operations", namespace, run, started + timedelta(seconds=3), {
                    "destination": {"name": name},
                    "operations": [
                        {"name": "read", "inputs": [{"source": {"name": reads[0]}}], "outputs": ["id", "value"]},
                        {"name": "transform", "inputs": [{"field": "value"}], "outputs": ["score"]},
                    ],
                    "destination_fields": ["id", "score"],
                })
            yield raw_event(rng, "run_end", namespace, run, started + timedelta(minutes=5), {"status": "completed"})


def write_logs(root: Path, events: Iterator[dict[str, Any]], events_per_file: int, end: datetime) -> tuple[int, int]:
    """Write ``events`` in files of ``events_per_file`` spread over the 24 hours before ``end``."""
    writer = EventLogWriter(str(root))
    batch: list[dict[str, Any]] = []
    files = total = 0
    for event in events:
        batch.append(event)
        if len(batch) >= events_per_file:
            writer.write(batch, prefix="bench", now=end - timedelta(hours=1 + files % 24))
            files, total, batch = files + 1, total + len(batch), []
    if batch:
        writer.write(batch, prefix="bench", now=end - timedelta(hours=1 + files % 24))
        files, total = files + 1, total + len(batch)
    return files, total


def mark_compacted(conn: Any, batch: str, paths: list[str]) -> None:
    """Record ``paths`` in the manifest as one batch had compacted them (a history for no-op runs
    to list past); ``conn`` is an autocommit psycopg connection to the warehouse."""
    with conn.transaction():
        conn.execute("""insert into lineage.compaction_batches (batch_id, started_at, files, events_read,
                        events_compacted, duplicates, quarantined, runs_touched, accesses_added)
                        values (%s, now(), %s, 0, 0, 0, 0, 0, 0)""", (batch, len(paths)))
        with conn.cursor().copy("copy lineage.compacted_files (file_path, batch_id, size_bytes, lines) from stdin"
                                ) as copy:
            for uri in paths:
                copy.write_row((uri, batch, 3, 1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Generate synthetic raw lineage logs.")
    parser.add_argument("--pipelines", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=125)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--events-per-file", type=int, default=10_000)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    end = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    files, total = write_logs(args.out, generate_events(args.pipelines, args.runs, seed=args.seed, end=end),
                              args.events_per_file, end)
    print(f"generated {total} events in {files} files under {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

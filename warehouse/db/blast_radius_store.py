"""The blast radius read from the warehouse (issue 33): an incident's bad writes, the spread run
by run, and what the answer shows of it (the runs, each affected dataset's latest write, the
fields that hold what came from the bad writes). One composition for the API, the CLI and the
compaction DAG's announcements; ``warehouse.service.blast_radius`` holds the rules."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

import psycopg

from lineage.ids import DataRef
from lineage.limits import limits
from warehouse.db.run_lineage_store import RunLineageQueries
from warehouse.service.blast_radius import Blast, LatestWrite, affected_fields, spread
from warehouse.service.run_lineage import RunNode


@dataclass
class Reached:
    """What the bad writes reached: the walk, the runs' details (``nodes``, the rewriters' too),
    each affected dataset's latest write and the fields holding what came from the bad writes."""

    blast: Blast
    latest: dict[DataRef, LatestWrite]
    nodes: dict[int, RunNode] = field(default_factory=dict)
    fields: dict[DataRef, dict[str, set[str]]] = field(default_factory=dict)


def reached(conn: psycopg.Connection, dataset_key: int, ranges: Sequence[tuple[datetime, datetime]], levels: int,
            *, details: bool = True) -> Reached:
    """Walk downstream from the dataset's writes in ``ranges`` ([start, end); empty ones left
    out) up to ``levels`` runs away (and ``LINEAGE_LIMIT_RUN_LINEAGE_RUNS`` runs); ``details``
    False: the walk and the latest writes only."""
    queries = RunLineageQueries(conn)
    bad = queries.writes_in(dataset_key, [(start, end) for start, end in ranges if start < end])
    blast = spread(bad, queries.downstream, levels, limits().run_lineage_runs)
    latest = queries.latest_writes(sorted(blast.datasets, key=lambda data: data.id))
    if not details:
        return Reached(blast, latest)
    nodes = queries.runs(sorted(blast.levels))
    nodes.update(queries.runs([write.run_key for write in latest.values() if write.run_key not in nodes]))
    fields = affected_fields(blast, queries.field_steps([run for run, level in blast.levels.items() if level]))
    return Reached(blast, latest, nodes, fields)

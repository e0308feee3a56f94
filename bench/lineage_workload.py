"""The dataset lineage benchmark's workload: 2,000 programs running hourly over 10,000 datasets.

The shape is what a data platform looks like: 100 teams (domains), each owning 20 programs and
100 datasets in 5 layers (raw -> staged -> joined -> aggregated -> published). A program of a
domain reads 2 datasets of one layer and writes 1 of the next; the first program of each domain
also reads a published dataset of the previous domain, and the second one a published dataset
of a random earlier domain, so lineage crosses teams (fan-in and fan-out) without every walk
reaching the whole warehouse.

The same topology is loaded straight into the tables (``load``, for the walk at 1.44M runs) and
written as raw events (``raw_events``, for the compaction throughput of this workload).
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import psycopg

from bench.generate import raw_event
from lineage.settings import libpq_url
from warehouse.db import entity_keys

NAMESPACE = "bench"
LAYERS = 5


@dataclass(frozen=True)
class Topology:
    programs: int = 2000
    datasets: int = 10_000
    domains: int = 100
    seed: int = 11

    def edges(self) -> list[tuple[int, int, str]]:
        """(program, dataset, access) for every program."""
        per_domain_programs = self.programs // self.domains
        per_layer = self.datasets // self.domains // LAYERS
        rng = random.Random(self.seed)

        def dataset(domain: int, layer: int) -> int:
            return (domain * LAYERS + layer) * per_layer + rng.randrange(per_layer)

        edges = []
        for program in range(self.programs):
            domain, index = divmod(program, per_domain_programs)
            step = index % (LAYERS - 1)
            for read in {dataset(domain, step), dataset(domain, step)}:
                edges.append((program, read, "read"))
            if index == 0 and domain > 0:
                edges.append((program, dataset(domain - 1, LAYERS - 1), "read"))
            if index == 1 and domain > 1:
                edges.append((program, dataset(rng.randrange(domain - 1), LAYERS - 1), "read"))
            edges.append((program, dataset(domain, step + 1), "write"))
        return sorted(set(edges))

    @staticmethod
    def program_name(program: int) -> tuple[str, str]:
        """(application, program)."""
        return f"team_{program // 20}", f"job_{program}"

    @staticmethod
    def dataset_name(dataset: int) -> str:
        return f"ds_{dataset}"


def run_id(program: int, hour: int) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_OID, f"{program}/{hour}"))


def load(url: str, topology: Topology, hours: int, end: datetime, *, batch: str = "bench",
         first_hour: int = 0) -> None:
    """Insert ``hours`` hourly runs of every program (10 minutes long) ending before ``end``,
    with their accesses, recorded as compaction batch ``batch``."""
    start = end - timedelta(hours=hours)
    with psycopg.connect(libpq_url(url), autocommit=True) as conn:
        conn.execute("set synchronous_commit = off")
        conn.execute("insert into lineage.namespaces values (%s) on conflict do nothing", (NAMESPACE,))
        conn.execute("""insert into lineage.compaction_batches (batch_id, started_at, files, events_read,
                            events_compacted, duplicates, quarantined, runs_touched, accesses_added)
                        values (%s, now(), 0, 0, 0, 0, 0, 0, 0)""", (batch,))
        conn.execute("""insert into lineage.programs (namespace, application, program_type, program)
                        select %s, 'team_' || (g / 20), 'spark', 'job_' || g from generate_series(0, %s - 1) g
                        on conflict do nothing""", (NAMESPACE, topology.programs))
        conn.execute("""insert into lineage.datasets (namespace, dataset_type, dataset)
                        select %s, 'dataset', 'ds_' || g from generate_series(0, %s - 1) g
                        on conflict do nothing""", (NAMESPACE, topology.datasets))
        entity_keys.fill_missing(conn)
        conn.execute("create temp table program_index as select program_key, substr(program, 5)::int as program "
                     "from lineage.programs where namespace = %s", (NAMESPACE,))
        conn.execute("""insert into lineage.runs (namespace, program_key, run_id, started_at, stopped_at, status,
                                                  first_batch_id, last_batch_id)
                        select %(ns)s, p.program_key, md5(p.program || '/' || (h + %(first)s))::uuid::text,
                               %(start)s + h * interval '1 hour' + (p.program %% 50) * interval '1 minute',
                               %(start)s + h * interval '1 hour' + (p.program %% 50 + 10) * interval '1 minute',
                               'completed', %(batch)s, %(batch)s
                        from program_index p cross join generate_series(0, %(hours)s - 1) h""",
                     {"ns": NAMESPACE, "start": start, "hours": hours, "batch": batch, "first": first_hour})
        conn.execute("create temp table edges (program int, dataset int, access text)")
        with conn.cursor().copy("copy edges from stdin") as copy:
            for edge in topology.edges():
                copy.write_row(edge)
        conn.execute("""insert into lineage.dataset_accesses (namespace, dataset_key, run_key, access, component,
                                                              accessed_at, batch_id)
                        select %(ns)s, d.dataset_key, r.run_key, e.access, '', r.started_at + interval '1 minute',
                               %(batch)s
                        from edges e
                        join program_index p using (program)
                        join lineage.datasets d on d.namespace = %(ns)s and d.dataset = 'ds_' || e.dataset
                        join lineage.runs r on r.program_key = p.program_key and r.last_batch_id = %(batch)s""",
                     {"ns": NAMESPACE, "batch": batch})
        conn.execute("vacuum analyze")


def raw_events(topology: Topology, hours: int, end: datetime) -> Iterator[dict[str, Any]]:
    """The same workload as raw log events (start, accesses, end per run) for ``hours`` hours."""
    by_program: dict[int, list[tuple[int, str]]] = {}
    for program, dataset, access in topology.edges():
        by_program.setdefault(program, []).append((dataset, access))
    rng = random.Random(topology.seed)
    start = end - timedelta(hours=hours)
    for hour in range(hours):
        for program, accesses in by_program.items():
            application, name = topology.program_name(program)
            run = {"application": application, "program_type": "spark", "program": name,
                   "run_id": run_id(program, hour)}
            began = start + timedelta(hours=hour, minutes=program % 50)

            yield raw_event(rng, "run_start", NAMESPACE, run, began, {})
            for dataset, access in accesses:
                yield raw_event(rng, "dataset_access", NAMESPACE, run, began + timedelta(minutes=1),
                                {"dataset": {"type": "dataset", "name": topology.dataset_name(dataset)},
                                 "access": access})
            yield raw_event(rng, "run_end", NAMESPACE, run, began + timedelta(minutes=10), {"status": "completed"})

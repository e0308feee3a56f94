"""Benchmark: tags that follow the data (``python -m bench.tag_propagation``, ``make bench-tags``).

On the field benchmark's warehouse (``make bench-fields`` loads it: 200 pipelines x 20 fields,
hourly for 30 days, 144k runs, chains of 5), five tags each assigned to one field of every
chain's raw input, each with its own policy, propagated over the 30 days as the DAG's
``propagate_tags`` task does (target: at most 60 s on 2 cores), then the field tags answer
(``explain``) p50/p95 for fields at the end of the chains. The first run on a warehouse derived
before field edges existed backfills them first (timed apart).
"""

from __future__ import annotations

import argparse
import logging
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import orjson
import psycopg

from bench.field_lineage import CHAIN, NAMESPACE
from bench.lineage_walk import percentiles
from lineage.model.metadata_entity import entity
from lineage.settings import Settings, libpq_url
from warehouse.db.field_lineage_staging import backfill_edges
from warehouse.db.migrate import apply_migrations
from warehouse.db.tag_propagation_store import EdgeQueries, assigned_tags
from warehouse.pipeline.tag_propagation import propagate_tags
from warehouse.service.tag_propagation import FieldNode, explain_field, policies_from

END = datetime(2026, 11, 1, tzinfo=UTC)  # the field benchmark's workload ends here
POLICIES = {"PII": "default", "email": "masked=carry", "amount": "carries=IDENTITY,TRANSFORMATION,AGGREGATION",
            "near": "levels=2", "secret": "carries=IDENTITY"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Benchmark tag propagation on the field benchmark's warehouse.")
    parser.add_argument("--pipelines", type=int, default=200)
    parser.add_argument("--samples", type=int, default=20)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    base = Settings.from_env()
    url = base.database_url.rsplit("/", 1)[0] + "/lineage_bench_fields"
    apply_migrations(url)
    with psycopg.connect(libpq_url(url)) as conn:
        began = time.perf_counter()
        backfilled = backfill_edges(conn)
        conn.commit()
        if backfilled:
            print(f"backfilled the field edges of {backfilled} operation sets in {time.perf_counter() - began:.1f}s")
        edges = conn.execute("select count(*) from lineage.field_edges").fetchone()
        conn.execute("delete from lineage.metadata where entity_type = 'field' and kind = 'tag'")
        heads = [pipeline for pipeline in range(args.pipelines) if pipeline % CHAIN == 0]
        for index, tag in enumerate(POLICIES):
            for pipeline in heads:
                field = entity([("namespace", NAMESPACE), ("dataset", f"raw_{pipeline}"), ("field", f"f{index}")])
                conn.execute(
                    """insert into lineage.metadata (entity_key, entity_type, namespace, entity, scope, kind, key,
                           updated_by) values (%s, 'field', %s, %s, 'USER', 'tag', %s, 'bench')""",
                    (field.render(), NAMESPACE, orjson.dumps(field.to_dict()["details"]).decode(), tag))
        conn.commit()
    print(f"{edges[0] if edges else 0:,} field edges; {len(POLICIES)} tags x {len(heads)} origins "
          f"({', '.join(f'{tag}: {text}' for tag, text in POLICIES.items())})")
    settings = replace(base, database_url=url, tag_policies=POLICIES, tag_propagation_days=30)
    summary = propagate_tags(url, settings, now=END)
    print(f"propagate_tags over 30 days: {summary.render()} (target: at most 60 s)")
    with psycopg.connect(libpq_url(url), autocommit=True) as conn:
        queries = EdgeQueries(conn, END - timedelta(days=1), END)
        policies = policies_from(POLICIES)
        timings = []
        for pipeline in [p + CHAIN - 1 for p in heads][: args.samples]:
            node = FieldNode(NAMESPACE, "dataset", f"table_{pipeline}", "f0")
            began = time.perf_counter()
            answer = explain_field(node, queries, lambda nodes: assigned_tags(conn, nodes), policies, "PII")
            timings.append(time.perf_counter() - began)
        print(f"field tags with explain=PII, 1-day window, a chain's last field ({len(timings)} fields): "
              f"{percentiles(timings)}; last answer: {len(answer['propagated'])} propagated, "
              f"{len(answer['stopped'])} stops")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

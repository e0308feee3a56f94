"""Benchmark: CDAP's allfieldlineage as a user calls it (``python -m bench.field_summaries_http``).

Through a real ``airflow api-server`` (the plugin, a real Airflow JWT, pooled warehouse
connections), on the storage benchmark's warehouse (``make bench-storage`` first: two days of a
2,000-task OpenLineage platform, each written dataset's 20 fields fed by one or two inputs):
``GET .../datasets/{ds}/lineage/allfieldlineage?direction=incoming`` over the last day, for
50 sampled datasets, 4 rounds after a warm-up of 10 requests. Prints p50 and p95 (issue 31's
target: p95 <= 40 ms; Data.Rentgen answered the same question in 43 ms).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
from urllib.parse import quote

import httpx
import psycopg

from harness.api_server import ApiServer, token
from lineage.settings import libpq_url

WAREHOUSE = "postgresql+psycopg://postgres@127.0.0.1:54329/lineage_bench_storage"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=50, help="datasets asked about")
    parser.add_argument("--rounds", type=int, default=4, help="requests per dataset")
    args = parser.parse_args(argv)
    with psycopg.connect(libpq_url(WAREHOUSE)) as conn:
        names = [row[0] for row in conn.execute(
            "select distinct d.dataset from lineage.field_lineage_runs r join lineage.datasets d using (dataset_key) "
            "where d.namespace = 'default' order by 1")]
    if not names:
        raise SystemExit("no field lineage in lineage_bench_storage: run `make bench-storage` first")
    sample = random.Random(7).sample(names, min(args.samples, len(names)))
    api = ApiServer({**os.environ, "AIRFLOW_CONN_LINEAGE_WAREHOUSE": libpq_url(WAREHOUSE)}).start()
    try:
        jwt = token(api.base, "admin", "admin").json()["access_token"]
        with httpx.Client(base_url=f"{api.base}/lineage/v3/namespaces/default/datasets", timeout=30,
                          headers={"Authorization": f"Bearer {jwt}"}) as client:
            def ask(name: str) -> tuple[float, int]:
                began = time.perf_counter()
                answer = client.get(f"/{quote(name, safe='')}/lineage/allfieldlineage",
                                    params={"direction": "incoming", "start": "now-1d", "end": "now"})
                answer.raise_for_status()
                return time.perf_counter() - began, len(answer.json()["incoming"])

            for name in sample[:10]:  # warm-up: imports, the pool's connections
                ask(name)
            timings, inputs = [], []
            for _ in range(args.rounds):
                for name in sample:
                    seconds, count = ask(name)
                    timings.append(seconds)
                    inputs.append(count)
        cuts = statistics.quantiles(timings, n=100)
        print(f"allfieldlineage, incoming, last day, through a real api-server: {len(timings)} requests over "
              f"{len(sample)} datasets (each fed by {min(inputs)}-{max(inputs)} datasets): "
              f"p50 {1000 * cuts[49]:.1f} ms, p95 {1000 * cuts[94]:.1f} ms (target p95 <= 40 ms)")
    finally:
        api.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

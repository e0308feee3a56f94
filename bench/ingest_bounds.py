"""Benchmark: what one hostile OpenLineage request costs the api-server (``python -m bench.ingest_bounds``).

The trust boundary (issue 28): a caller with a valid ingest key posts a few kilobytes of gzip
holding a huge array of invalid elements, and a 10,000-element invalid array; meanwhile a
client polls ``/lineage/health``. For each server (``--baseline DIR``: another checkout's code,
say the commit before the fix, then this one, on the same warehouse and machine) it prints the
answer's status, time and size, the server's resident memory before and after (its process
group), and the slowest health answer during the request.
"""

from __future__ import annotations

import argparse
import gzip
import os
import threading
import time
from pathlib import Path

import httpx
import orjson
import psutil

from bench.openlineage_ingest import NAMESPACE, ROOT, bench_warehouse
from harness.api_server import ApiServer, token
from lineage.settings import libpq_url


def rss_mb(root: psutil.Process) -> float:
    processes = [root, *root.children(recursive=True)]
    total = 0
    for process in processes:
        try:
            total += process.memory_info().rss
        except psutil.Error:
            continue
    return total / 1e6


def hostile(base: str, headers: dict[str, str], body: bytes, gzip_body: bool, server: psutil.Process) -> str:
    """Post ``body`` while polling health; one result line."""
    before = rss_mb(server)
    waits: list[float] = []
    outcome: dict[str, float] = {}

    def post() -> None:
        began = time.perf_counter()
        extra = {"Content-Encoding": "gzip"} if gzip_body else {}
        response = httpx.post(f"{base}/lineage/api/v1/lineage", content=body, headers={**headers, **extra},
                              timeout=600)
        outcome.update(status=response.status_code, size=len(response.content), seconds=time.perf_counter() - began)

    worker = threading.Thread(target=post)
    worker.start()
    while worker.is_alive():
        began = time.perf_counter()
        try:
            httpx.get(f"{base}/lineage/health", timeout=60)
        except httpx.HTTPError:
            pass
        waits.append(time.perf_counter() - began)
        time.sleep(0.05)
    worker.join()
    after = rss_mb(server)
    return (f"status {outcome['status']:.0f}, {outcome['seconds']:.2f} s, answer {outcome['size']:,.0f} bytes "
            f"({len(body):,} bytes sent); RSS {before:,.0f} -> {after:,.0f} MB (+{after - before:,.0f}); "
            f"slowest health answer meanwhile {max(waits) * 1000:.0f} ms over {len(waits)} polls")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, help="another checkout, measured first on the same warehouse")
    parser.add_argument("--elements", type=int, default=3_000_000, help="elements of the gzip bomb")
    args = parser.parse_args(argv)
    url, log_root = bench_warehouse("lineage_bench_ingest_bounds")
    env = {**os.environ, "AIRFLOW_CONN_LINEAGE_WAREHOUSE": libpq_url(url), "LINEAGE_LOG_ROOT": str(log_root)}
    bomb = gzip.compress(b"[" + b",".join([b"0"] * args.elements) + b"]")
    at_limit = orjson.dumps([{"x": index} for index in range(10_000)])
    codes = ([("baseline", args.baseline.resolve())] if args.baseline else []) + [("this", ROOT)]
    for label, code in codes:
        api = ApiServer({**env, "PYTHONPATH": os.pathsep.join([str(code), str(code / "plugins")])})
        api.start()
        try:
            assert api.process is not None
            jwt = token(api.base, "admin", "admin").json()["access_token"]
            with httpx.Client(base_url=f"{api.base}/lineage", timeout=30,
                              headers={"Authorization": f"Bearer {jwt}"}) as admin:
                admin.put("/v3/grants", json={"principal": "bench-producer", "entity": f"namespaces/{NAMESPACE}",
                                              "privilege": "WRITE"}).raise_for_status()
                created = admin.post("/v3/ingest-keys", json={"name": f"bounds-{label}", "principal": "bench-producer"})
                created.raise_for_status()
            headers = {"Content-Type": "application/json", "Authorization": f"Bearer {created.json()['secret']}"}
            server = psutil.Process(api.process.pid)
            print(f"{label} code ({code}):")
            print(f"  {args.elements:,} invalid elements in {len(bomb):,} bytes of gzip: "
                  + hostile(api.base, headers, bomb, True, server))
            print("  10,000 invalid elements, plain: " + hostile(api.base, headers, at_limit, False, server))
        finally:
            api.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Benchmark: the field lineage stage in its own process or on a local Spark
(``python -m bench.field_lineage_in_process``), for the default of
``LINEAGE_FIELD_LINEAGE_IN_PROCESS_RECORDS``.

For each batch size, the same raw events (``bench.field_lineage``'s pipelines: 20 output fields,
each from one or two inputs) are compacted into two scratch databases, then the pending field
operation records are derived in a fresh process each way, as a DAG task would (Python start and
imports included, and for Spark its JVM and Python workers): ``run_field_lineage(None)`` and
``python -m spark_jobs.field_lineage.job``. The two alternate, and the ratio is printed.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import subprocess
import sys
import time
from datetime import UTC, datetime

from bench.compaction import scratch_database
from bench.field_lineage import raw_events
from bench.generate import write_logs
from lineage.settings import Settings
from warehouse.db.migrate import apply_migrations

IN_PROCESS = "from spark_jobs.field_lineage.job import run_field_lineage; print(run_field_lineage(None).render())"
ON_SPARK = "from spark_jobs.field_lineage.job import main; main([])"


def _derive(code: str, env: dict[str, str]) -> tuple[float, str]:
    began = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return time.perf_counter() - began, done.stdout.strip().splitlines()[-1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Field lineage in process vs on local Spark.")
    parser.add_argument("--records", type=int, nargs="+", default=[200, 2_000, 20_000])
    parser.add_argument("--fields", type=int, default=20)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    from spark_jobs.compaction.job import run_compaction

    base = Settings.from_env()
    end = datetime(2026, 11, 1, tzinfo=UTC)
    print(f"{'records':>8} {'in process':>11} {'local Spark':>12} {'Spark / in process':>19}")
    for records in args.records:
        pipelines = min(records, 200)
        hours = max(1, records // pipelines)
        log_root = base.home / "bench" / "field-in-process-raw-events"
        shutil.rmtree(log_root, ignore_errors=True)
        write_logs(log_root, raw_events(pipelines, args.fields, hours, end, set()), 10_000, end)
        seconds = {}
        for way, code in (("in_process", IN_PROCESS), ("spark", ON_SPARK)):
            url = scratch_database(base.database_url, f"lineage_bench_fl_{way}")
            apply_migrations(url)
            env = {**os.environ, "LINEAGE_AUTO_CREATE_NAMESPACES": "true", "LINEAGE_LOG_ROOT": str(log_root),
                   "LINEAGE_DATABASE_URL": url, "LINEAGE_LOOKBACK_HOURS": str(hours + 48)}
            run_compaction(None, interval_end=end, settings=Settings.from_env(env))
            seconds[way], summary = _derive(code, env)
            if not summary.startswith(f"field lineage: {pipelines * hours} records"):
                raise RuntimeError(f"{way}: {summary}")
        print(f"{pipelines * hours:>8,} {seconds['in_process']:>10.1f}s {seconds['spark']:>11.1f}s "
              f"{seconds['spark'] / seconds['in_process']:>18.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())

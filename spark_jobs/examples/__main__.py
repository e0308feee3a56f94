"""Run the example pipelines several times: ``python -m spark_jobs.examples --runs 3``."""

from __future__ import annotations

import argparse
import sys
import time

from lineage.settings import Settings
from spark_jobs.examples import captured, purchase_history, sample_data, user_profiles
from spark_jobs.session import build_session


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run the example PySpark pipelines that record lineage.")
    parser.add_argument("--runs", type=int, default=3, help="runs of each program (default 3)")
    args = parser.parse_args(argv)
    if not 1 <= args.runs <= 100:
        parser.error(f"--runs must be between 1 and 100, got {args.runs}")
    settings = Settings.from_env()
    data_root = settings.home / "data"
    spark = build_session("lineage-examples", settings)
    spark.sparkContext.setLogLevel("ERROR")
    started = time.monotonic()
    recorded = 0
    for index in range(args.runs):
        user_data = sample_data.write_user_data(data_root / "myns" / "user_data", rows=200, seed=index)
        runs = [user_profiles.run(spark, user_data, data_root / "myns" / "mytableds")]
        stream = sample_data.write_purchase_events(data_root / "default" / "purchaseStream", rows=300, seed=index)
        runs.append(purchase_history.run_flow(spark, stream, data_root / "default"))
        runs.append(purchase_history.run_builder(spark, data_root / "default"))
        runs.append(purchase_history.run_service(spark, data_root / "default"))
        # the same programs as plain PySpark under lineage.spark.track (nothing written by hand)
        auto = data_root / "captured"
        runs.append(captured.run_user_profiles(spark, user_data, auto / "myns" / "mytableds"))
        runs.append(captured.run_flow(spark, stream, auto / "default"))
        runs.append(captured.run_builder(spark, auto / "default"))
        runs.append(captured.run_service(spark, auto / "default"))
        recorded += len(runs)
        for run in runs:
            print(f"  run {index + 1}/{args.runs}: {run.run['application'] + '.' + run.run['program']:<46} "
                  f"{run.run_id} {run.status}")
    print(f"examples: {recorded} program runs recorded in {time.monotonic() - started:.1f}s; "
          f"raw events under {settings.log_root}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""``python -m bench.column_accuracy [--only TEXT] [--markdown]``: run the labelled cases on
local Spark and print the accuracy table by shape, then every case the product gets wrong."""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from bench.column_accuracy.cases import CASES
from bench.column_accuracy.runner import run_cases
from bench.column_accuracy.scoring import differences, table
from spark_jobs.session import build_session


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Column lineage accuracy on labelled Spark cases.")
    parser.add_argument("--only", default="", help="run the cases whose name or shape holds this text")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown (docs/benchmarks.md)")
    args = parser.parse_args(argv)
    cases = [case for case in CASES if args.only in case.name or args.only == case.shape]
    if not cases:
        parser.error(f"no case's name or shape matches {args.only!r}")
    spark = build_session("bench-column-accuracy")
    spark.sparkContext.setLogLevel("ERROR")
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="column-accuracy-") as root:
        outcomes, warnings = run_cases(spark, cases, Path(root))
    spark.stop()
    print(f"column lineage accuracy: {len(cases)} labelled cases on local Spark "
          f"({time.perf_counter() - began:.0f} s)\n")
    print(table(outcomes, markdown=args.markdown))
    marked = {case.name: case.wrong for case in cases if case.wrong}
    unexpected = 0
    for outcome in outcomes:
        if outcome.right and outcome.name in marked:
            unexpected += 1
            print(f"\n{outcome.name}: marked wrong ({marked[outcome.name]}) but right now: unmark it")
        elif not outcome.right:
            known = outcome.name in marked
            unexpected += not known
            print(f"\n{outcome.name} ({outcome.shape}): "
                  + (f"known wrong: {marked[outcome.name]}" if known else "WRONG and not marked"))
            for line in differences(outcome):
                print(f"    {line}")
    for warning in warnings:
        print(f"capture warning: {warning}")
    return 1 if unexpected else 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Benchmark: automatic capture from PySpark (``python -m bench.spark_capture``, ``make bench-capture``).

Prints (issue 15's targets):

- the capture's cost per write action on the driver (the listener's work: the plan's JSON, the
  column lineage, the py4j calls naming datasets, the events) for plans of 10, 50 and 200
  operators, p50 and p95 over ``--writes`` writes each after 3 warm-up writes, whose costs are
  printed apart (target: p95 <= 50 ms at 50 operators);
- a job of 20 writes with and without capture, interleaved (without, with, without, with...),
  as the median of each pair's ratio of wall times (the pair ran back to back, so the machine's
  drift cancels), the run's end included (it waits for Spark to report the last write)
  (target: at most 5% slower).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from bench.lineage_walk import percentiles
from lineage.spark.capture import track
from spark_jobs.session import build_session


def plan_of(frame: DataFrame, operators: int) -> DataFrame:
    """``frame`` through ``operators`` plan nodes: new columns, filters, projections in turn (no
    column is rebuilt from itself, which the optimizer would inline into ever larger expressions)."""
    for index in range(operators):
        step = index % 4
        if step == 0:
            frame = frame.withColumn(f"c{index}", F.concat_ws("-", "name", F.lit(index)))
        elif step == 1:
            frame = frame.filter(F.col("id") > -index)
        elif step == 2:
            frame = frame.withColumn(f"m{index}", F.col("amount") * index)
        else:
            frame = frame.select("id", "name", "amount", *[c for c in frame.columns if c[0] in "cm"][-4:])
    return frame


WARM_UP = 3  # writes of each plan size not counted: the JVM compiles the serialization of new plan classes


def capture_cost(spark: SparkSession, root: Path, operators: int, writes: int) -> tuple[list[float], list[float]]:
    """(the warm-up writes' costs, the counted writes' costs) for one plan size."""
    source = spark.read.parquet(str(root / "source"))
    with tempfile.TemporaryDirectory() as log_root, track(spark, application="bench", program=f"plan{operators}",
                                                          log_root=log_root) as tracker:
        frame = plan_of(source, operators)
        for index in range(WARM_UP + writes):
            frame.write.mode("overwrite").parquet(str(root / f"out_{operators}_{index % 2}"))
    assert tracker.writes == WARM_UP + writes and not tracker.warnings, tracker.warnings
    return tracker.capture_seconds[:WARM_UP], tracker.capture_seconds[WARM_UP:]


def job(spark: SparkSession, root: Path, writes: int, captured: bool) -> float:
    source = spark.read.parquet(str(root / "source"))
    began = time.perf_counter()
    if captured:
        with tempfile.TemporaryDirectory() as log_root, track(spark, application="bench", program="job",
                                                              log_root=log_root):
            for index in range(writes):
                plan_of(source, 20).write.mode("overwrite").parquet(str(root / f"job_{index}"))
    else:
        for index in range(writes):
            plan_of(source, 20).write.mode("overwrite").parquet(str(root / f"job_{index}"))
    return time.perf_counter() - began


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Benchmark automatic capture from PySpark.")
    parser.add_argument("--writes", type=int, default=40, help="writes per plan size")
    parser.add_argument("--pairs", type=int, default=8, help="interleaved job pairs (without, with)")
    args = parser.parse_args(argv)
    spark = build_session("bench-capture")
    spark.sparkContext.setLogLevel("ERROR")
    root = Path(tempfile.mkdtemp(prefix="bench-capture-"))
    spark.createDataFrame([(i, f"n{i}", float(i)) for i in range(1000)], "id int, name string, amount double") \
        .write.parquet(str(root / "source"))
    capture_cost(spark, root, 10, 3)  # warm-up: py4j callbacks, imports
    print(f"capture cost per write on the driver ({args.writes} writes each after {WARM_UP} warm-up writes; "
          "target p95 <= 50 ms at 50 operators):")
    for operators in (10, 50, 200):
        warm_up, counted = capture_cost(spark, root, operators, args.writes)
        print(f"  {operators:3d} operators   {percentiles(counted)}   "
              f"(warm-up writes: {', '.join(f'{1000 * cost:.0f}' for cost in warm_up)} ms)")
    without, with_capture = [], []
    job(spark, root, 20, False)  # warm-up
    for _ in range(args.pairs):
        without.append(job(spark, root, 20, False))
        with_capture.append(job(spark, root, 20, True))
    # each pair's ratio, then their median: a pair's two jobs ran back to back, on the same load
    ratio = statistics.median(captured / plain for plain, captured in zip(without, with_capture, strict=True))
    print(f"a job of 20 writes: {statistics.median(without):.2f} s without capture, "
          f"{statistics.median(with_capture):.2f} s with (medians of {args.pairs} interleaved pairs); "
          f"median of the pairs' ratios {100 * (ratio - 1):+.1f}% (target <= +5%)")
    spark.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Run the cases on a Spark session under ``lineage.spark.track`` and score what was captured."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from bench.column_accuracy import lake
from bench.column_accuracy.case import Case, Expected
from bench.column_accuracy.scoring import Outcome, score_case
from lineage.model.column_lineage import column_lineage
from lineage.spark.capture import track

SEPARATOR = "__"  # between a case's name and its output's name in what it writes


def run_cases(spark: SparkSession, cases: Sequence[Case], root: Path) -> tuple[list[Outcome], list[str]]:
    """Each case's outcome, and the capture's warnings. The cases run in one tracked run, each
    writing its outputs as ``{case}__{output}`` under ``root`` (or as tables of that name)."""
    names = [case.name for case in cases]
    if len(set(names)) != len(names) or any(SEPARATOR in name for name in names):
        raise ValueError(f"case names must be unique and hold no {SEPARATOR!r}")
    lake.build(spark, root / "lake")
    errors: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as log_root:
        with track(spark, namespace="default", application="bench", program="column-accuracy",
                   log_root=log_root) as tracker:
            for case in cases:
                try:
                    case.job(spark, lambda output, case=case: str(root / "out" / f"{case.name}{SEPARATOR}{output}"))
                except Exception as error:  # a case that fails is scored as failed
                    errors[case.name] = f"{type(error).__name__}: {str(error).splitlines()[0][:200]}"
                finally:
                    for table in case.tables:
                        spark.sql(f"drop table if exists {case.name}{SEPARATOR}{table}")
        captured = _captured(Path(log_root))
    outcomes = [score_case(case.name, case.shape, case.expectations(), captured.get(case.name, {}),
                           errors.get(case.name, "")) for case in cases]
    return outcomes, list(tracker.warnings)


def _captured(log_root: Path) -> dict[str, dict[str, dict[str, set[Expected]]]]:
    """case -> output -> column -> its sources, from every field-operations record in the log
    (two writes of one output: their columns' sources united)."""
    found: dict[str, dict[str, dict[str, set[Expected]]]] = {}
    for path in sorted(log_root.glob("dt=*/hour=*/*.jsonl")):
        for line in path.read_text().splitlines():
            event: dict[str, Any] = json.loads(line)
            if event["kind"] != "field_operations":
                continue
            destination = _short(event["payload"]["destination"]["name"])
            case, _, output = destination.partition(SEPARATOR)
            columns = found.setdefault(case, {}).setdefault(output, {})
            for column, sources in column_lineage(event["payload"]).items():
                columns.setdefault(column, set()).update(
                    Expected(_short(source.name), source.field, source.type, source.subtype, source.masking)
                    for source in sources)
    return found


def _short(name: str) -> str:
    return name.rsplit("/", 1)[-1].rsplit(".", 1)[-1]

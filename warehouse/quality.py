"""Great Expectations checks over what one compaction batch wrote.

Runs before the marts are built: a failed expectation fails the DAG run loudly, naming each
expectation, its table and how many rows broke it.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from lineage import events
from lineage.errors import DataQualityError

_BATCH_ID = re.compile(r"^[0-9A-Za-z-]{1,64}$")


@dataclass(frozen=True)
class CheckResult:
    table: str
    expectation: str
    success: bool
    unexpected: int

    def render(self) -> str:
        verdict = "ok" if self.success else f"FAILED ({self.unexpected} rows)"
        return f"{self.table}: {self.expectation}: {verdict}"


def check_batch(database_url: str, batch_id: str) -> list[CheckResult]:
    """Validate the rows ``batch_id`` wrote; raises DataQualityError when any expectation fails."""
    if not _BATCH_ID.match(batch_id):
        raise DataQualityError(f"not a batch id: {batch_id!r}")
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")
    import great_expectations as gx
    import great_expectations.expectations as gxe
    from great_expectations.data_context.types.base import ProgressBarsConfig

    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False)
    source = context.data_sources.add_postgres("lineage_warehouse", connection_string=_sqlalchemy_url(database_url))
    suites: dict[str, tuple[str, list[gxe.Expectation]]] = {
        "runs": (
            f"select * from lineage.runs where last_batch_id = '{batch_id}'",
            [
                gxe.ExpectColumnValuesToNotBeNull(column="run_id"),
                gxe.ExpectColumnValuesToBeInSet(column="status", value_set=events.run_statuses()),
                gxe.ExpectColumnPairValuesAToBeGreaterThanB(
                    column_A="stopped_at", column_B="started_at", or_equal=True, ignore_row_if="either_value_is_missing"
                ),
            ],
        ),
        "dataset_accesses": (
            f"select * from lineage.access_details where batch_id = '{batch_id}'",
            [
                gxe.ExpectColumnValuesToNotBeNull(column="dataset"),
                gxe.ExpectColumnValuesToBeInSet(column="access", value_set=events.access_types()),
                gxe.ExpectColumnValuesToBeInSet(column="dataset_type", value_set=events.dataset_types()),
            ],
        ),
        "compaction_batches": (
            "select events_read, events_compacted + duplicates + quarantined as events_accounted "
            f"from lineage.compaction_batches where batch_id = '{batch_id}'",
            [
                gxe.ExpectTableRowCountToEqual(value=1),
                gxe.ExpectColumnPairValuesToBeEqual(column_A="events_read", column_B="events_accounted"),
            ],
        ),
    }
    validations = []
    for table, (query, expectations) in suites.items():
        asset = source.add_query_asset(f"batch_{table}", query=query)
        suite = context.suites.add(gx.ExpectationSuite(name=f"lineage_{table}"))
        for expectation in expectations:
            suite.add_expectation(expectation)
        validations.append(
            context.validation_definitions.add(
                gx.ValidationDefinition(
                    name=f"check_{table}", data=asset.add_batch_definition_whole_table("batch"), suite=suite
                )
            )
        )
    checkpoint = context.checkpoints.add(gx.Checkpoint(name="lineage_compaction", validation_definitions=validations))
    outcome = checkpoint.run()
    results: list[CheckResult] = []
    for validation in outcome.run_results.values():
        table = validation.suite_name.removeprefix("lineage_")
        for item in validation.results:
            results.append(
                CheckResult(
                    table=table,
                    expectation=item.expectation_config.type if item.expectation_config else "unknown",
                    success=bool(item.success),
                    unexpected=int(item.result.get("unexpected_count") or 0),
                )
            )
    failed = [result for result in results if not result.success]
    if failed:
        raise DataQualityError(
            f"batch {batch_id} failed {len(failed)} expectation(s): " + "; ".join(r.render() for r in failed)
        )
    return results


def _sqlalchemy_url(database_url: str) -> str:
    scheme, sep, rest = database_url.partition("://")
    return f"postgresql+psycopg://{rest}" if sep and scheme in ("postgresql", "postgres") else database_url

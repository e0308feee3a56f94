"""Great Expectations checks over what compaction batches wrote, and the quality gate.

The gate (``gate``, the DAG's ``check`` task, before the marts are built): every batch not yet
passed is checked, whichever run compacted it. A failed expectation fails the DAG run loudly,
naming each expectation, its table and how many rows broke it, and the batch stays ``failed``:
every later run checks it again and fails, so no mart is built over it, until the data is
fixed (the check then passes) or an operator acknowledges the failure:

    python -m warehouse.pipeline.quality status
    python -m warehouse.pipeline.quality acknowledge BATCH_ID --reason "stopped_at from a skewed clock; accepted"
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from dataclasses import dataclass

from lineage.errors import DataQualityError, LineageError
from lineage.model import events
from lineage.naming.identity import PROGRAM_TYPE
from lineage.settings import connect_options, libpq_url
from warehouse.db.connection import connect

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
    # No temporary tables (a batch's rows are read by later statements, which a pooler in
    # transaction mode may send to another server connection) and, behind one, no prepared
    # statements; ``kwargs`` (create_engine's) is a field of the datasource its stub omits.
    source = context.data_sources.add_postgres(
        "lineage_warehouse", connection_string=_sqlalchemy_url(database_url), create_temp_table=False,
        kwargs={"connect_args": connect_options(database_url)})  # type: ignore[call-arg]
    suites: dict[str, tuple[str, list[gxe.Expectation]]] = {
        "runs": (
            # An OpenLineage run's START and COMPLETE carry its producers' clocks (a scheduler's and
            # a worker's): an end before the start is kept as sent and is no reason to stop the
            # marts of every producer (issue 28, item 9). The order is checked on the other runs.
            f"""select r.run_id, r.status, r.started_at,
                       case when p.program_type <> '{PROGRAM_TYPE}' then r.stopped_at end as stopped_at
                from lineage.runs r join lineage.programs p using (program_key)
                where r.last_batch_id = '{batch_id}'""",
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


@dataclass(frozen=True)
class BatchQuality:
    batch_id: str
    quality: str  # unchecked, passed, failed, acknowledged
    detail: str | None


def gate(database_url: str) -> list[CheckResult]:
    """Check every batch not yet passed or acknowledged, oldest first, and record each verdict.
    Raises DataQualityError naming every batch that failed (with how to acknowledge it)."""
    with connect(database_url, autocommit=True) as conn:
        pending = [row[0] for row in conn.execute(
            "select batch_id from lineage.compaction_batches where quality in ('unchecked', 'failed') "
            "order by started_at, batch_id").fetchall()]
    results: list[CheckResult] = []
    failures: list[str] = []
    for batch_id in pending:
        try:
            checked = check_batch(database_url, batch_id)
        except DataQualityError as error:
            _record(database_url, batch_id, "failed", str(error))
            failures.append(str(error))
            continue
        _record(database_url, batch_id, "passed", None)
        results.extend(checked)
    if failures:
        raise DataQualityError(
            " | ".join(failures) + " -- the marts are not built while a batch has failed its check: fix the data, "
            "or accept it with `python -m warehouse.pipeline.quality acknowledge BATCH_ID --reason TEXT`")
    return results


def _record(database_url: str, batch_id: str, quality: str, detail: str | None) -> None:
    with connect(database_url, autocommit=True) as conn:
        conn.execute("update lineage.compaction_batches set quality = %s, quality_detail = %s, "
                     "quality_checked_at = now() where batch_id = %s", (quality, detail and detail[:4096], batch_id))


def acknowledge(database_url: str, batch_id: str, reason: str) -> BatchQuality:
    """Accept a failed batch as it is: the gate stops checking it, the marts are built again."""
    if not reason.strip():
        raise LineageError("say why the failed batch is accepted (--reason)")
    with connect(database_url, autocommit=True) as conn:
        row = conn.execute("select quality from lineage.compaction_batches where batch_id = %s",
                           (batch_id,)).fetchone()
        if row is None:
            raise LineageError(f"no batch {batch_id!r}")
        if row[0] != "failed":
            raise LineageError(f"batch {batch_id} is {row[0]}, not failed: only a failed batch is acknowledged")
        detail = f"acknowledged: {reason.strip()[:2000]}"
        conn.execute("update lineage.compaction_batches set quality = 'acknowledged', quality_detail = %s, "
                     "quality_checked_at = now() where batch_id = %s", (detail, batch_id))
    return BatchQuality(batch_id, "acknowledged", detail)


def blocking(database_url: str) -> list[BatchQuality]:
    """The batches not passed or acknowledged, oldest first."""
    with connect(database_url, autocommit=True) as conn:
        return [BatchQuality(*row) for row in conn.execute(
            "select batch_id, quality, quality_detail from lineage.compaction_batches "
            "where quality in ('unchecked', 'failed') order by started_at, batch_id").fetchall()]


def main(argv: list[str] | None = None) -> int:
    from lineage.settings import Settings

    parser = argparse.ArgumentParser(prog="python -m warehouse.pipeline.quality",
                                     description="The compaction's quality gate: batches that block the marts.")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("status", help="list the batches not passed or acknowledged (exit 1 when any failed)")
    commands.add_parser("check", help="check them now, as the DAG's check task does (exit 1 on a failure)")
    ack = commands.add_parser("acknowledge", help="accept a failed batch as it is, so the marts are built again")
    ack.add_argument("batch_id")
    ack.add_argument("--reason", required=True, help="why the failure is accepted (kept with the batch)")
    args = parser.parse_args(argv)
    url = Settings.from_env().database_url
    try:
        if args.command == "acknowledge":
            print(f"batch {args.batch_id}: {acknowledge(url, args.batch_id, args.reason).detail}")
            return 0
        if args.command == "check":
            results = gate(url)
            print(f"quality gate: passed ({len(results)} expectations)")
            return 0
        found = blocking(url)
        for batch in found:
            print(f"{batch.batch_id}  {batch.quality}  {batch.detail or ''}")
        print(f"{len(found)} batches block the marts" if found else "no batch blocks the marts")
        return 1 if any(batch.quality == "failed" for batch in found) else 0
    except (DataQualityError, LineageError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1


def _sqlalchemy_url(database_url: str) -> str:
    return libpq_url(database_url).replace("postgresql://", "postgresql+psycopg://", 1)


if __name__ == "__main__":
    sys.exit(main())

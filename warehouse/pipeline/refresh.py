"""The fast path: new raw log files -> warehouse -> checked marts, in one process (the
``lineage_refresh`` DAG's one task; ``python -m warehouse.pipeline.refresh`` by hand).

The same stages as the scheduled ``lineage_compaction`` DAG, each its function, run one after
the other without a task hand-off between them (on Airflow 3 each hand-off costs a scheduler
loop and a task process): compaction (a small batch parsed in this process, no JVM), field
lineage (Spark starts only when field operation records are pending), SYSTEM metadata, tag
propagation, the quality gate, and ``dbt build`` of the marts. Nothing new: it returns after the listing.

The marts are built with plain ``dbt`` even under ``LINEAGE_DBT_OPENLINEAGE``: dbt-ol's events
would land in the log root as new files and start the next refresh, for ever. The scheduled
DAG still records the marts' own lineage.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from lineage.errors import CompactionBusyError
from lineage.settings import Settings
from spark_jobs.compaction.job import run_compaction
from spark_jobs.field_lineage.job import derive_pending
from warehouse.db.compaction_store import CompactionSummary
from warehouse.db.program_metadata_store import apply_pending
from warehouse.pipeline.dbt_build import build_marts
from warehouse.pipeline.quality import gate
from warehouse.pipeline.tag_propagation import propagate_tags

log = logging.getLogger(__name__)
BUSY_WAIT_SECONDS = 600  # how long a refresh waits for a running compaction before failing


@dataclass
class RefreshSummary:
    compacted: CompactionSummary | None = None
    field_records: int = 0
    metadata_events: int = 0
    change_ids: list[int] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)
    marts: str | None = None
    tags_changed: bool = False
    # seconds per stage, in order: where the time went
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        compacted = self.compacted.events_compacted if self.compacted else 0
        return bool(compacted or self.field_records or self.metadata_events)

    def render(self) -> str:
        stages = ", ".join(f"{name} {seconds:.1f}s" for name, seconds in self.seconds.items())
        what = self.compacted.render() if self.compacted else "nothing compacted"
        return f"refresh: {what}; marts: {self.marts or 'not rebuilt'}; {stages}"


@contextmanager
def _stage(summary: RefreshSummary, name: str) -> Iterator[None]:
    started = time.perf_counter()
    try:
        yield
    finally:
        summary.seconds[name] = round(time.perf_counter() - started, 3)
        log.info("refresh: %s done in %.1fs", name, summary.seconds[name])


def refresh(database_url: str, settings: Settings | None = None, *, busy_wait: float = BUSY_WAIT_SECONDS,
            dag_run_id: str | None = None) -> RefreshSummary:
    """Compact what is new and rebuild the marts; raises DataQualityError when a batch fails
    its checks (the marts are then not rebuilt) and CompactionBusyError when another compaction
    still runs after ``busy_wait`` seconds."""
    settings = replace(settings or Settings.from_env(), database_url=database_url, dbt_openlineage=False)
    summary = RefreshSummary()
    with _stage(summary, "compact"):
        summary.compacted = _compact_when_free(settings, busy_wait, dag_run_id)
    with _stage(summary, "field_lineage"):
        summary.field_records = derive_pending(database_url).records
    with _stage(summary, "apply_metadata"):
        applied = apply_pending(database_url, auto_create_namespaces=settings.auto_create_namespaces)
        summary.metadata_events, summary.change_ids = applied.events, list(applied.change_ids)
    if not summary.changed:
        log.info("refresh: nothing new; the marts are current")
        return summary
    with _stage(summary, "propagate_tags"):
        summary.tags_changed = propagate_tags(database_url, settings).changed
    with _stage(summary, "check"):
        summary.checks = [result.render() for result in gate(database_url)]
    with _stage(summary, "build_marts"):
        summary.marts = build_marts(database_url, settings).render()
    log.info("%s", summary.render())
    return summary


def _compact_when_free(settings: Settings, busy_wait: float, dag_run_id: str | None) -> CompactionSummary:
    """One compaction, waiting (every 2 s, up to ``busy_wait``) while another one holds the lock."""
    deadline = time.monotonic() + busy_wait
    while True:
        try:
            return run_compaction(None, interval_end=datetime.now(UTC), settings=settings, dag_run_id=dag_run_id,
                                  lookback_only=True)  # late files are the schedule's: keep a refresh quick
        except CompactionBusyError:
            if time.monotonic() >= deadline:
                raise
            log.info("refresh: another compaction is running; waiting for it")
            time.sleep(2)


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(description="Compact new raw log files and rebuild the marts, in one process.").parse_args(
        argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    print(refresh(Settings.from_env().database_url).render())
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The propagation stage of the compaction DAG (``propagate_tags``): each tag with a policy
(``LINEAGE_TAG_POLICIES``), from the fields it is assigned to, over the field lineage of the
last ``LINEAGE_TAG_PROPAGATION_DAYS`` days (``warehouse.service.tag_propagation``), rewritten
whole into ``lineage.propagated_tags`` in one transaction: a policy changed, a tag removed or
lineage aged out of the window shows at the next run."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from lineage.settings import Settings
from warehouse.db.connection import connect
from warehouse.db.tag_propagation_store import EdgeQueries, propagated_digest, replace_propagated, tagged_fields
from warehouse.service.tag_propagation import policies_from, propagate

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PropagationSummary:
    tags: int  # tags with a policy
    origins: int  # fields they are assigned to
    reached: int  # (field, tag, origin) rows written
    stops: int  # edges that stopped a tag
    seconds: float
    changed: bool = False  # what the tags reach changed (the search index is then rebuilt)
    errors: tuple[str, ...] = ()  # policies that did not parse (their tags are not propagated)

    def render(self) -> str:
        errors = f"; {len(self.errors)} policies refused: {'; '.join(self.errors)}" if self.errors else ""
        return (f"tag propagation: {self.tags} tags with a policy from {self.origins} tagged fields reached "
                f"{self.reached} fields ({self.stops} stops, {'changed' if self.changed else 'unchanged'}) in "
                f"{self.seconds:.1f}s{errors}")


def propagate_tags(database_url: str, settings: Settings | None = None, *, now: datetime | None = None
                   ) -> PropagationSummary:
    """Propagate every tag with a policy over the window ending ``now``; rewrite the table."""
    settings = settings or Settings.from_env()
    started = time.perf_counter()
    errors: list[str] = []
    policies = policies_from(settings.tag_policies, errors)
    for error in errors:
        log.error("tag propagation: %s; the tag is not propagated", error)
    end = now or datetime.now(UTC)
    start = end - timedelta(days=settings.tag_propagation_days)
    with connect(database_url, autocommit=True) as conn:
        origins = tagged_fields(conn, policies)
        queries = EdgeQueries(conn, start, end)
        walks = [propagate(tag, origins.get(tag, []), policy, queries.out_of)
                 for tag, policy in sorted(policies.items())]
        with conn.transaction():
            before = propagated_digest(conn)
            reached = replace_propagated(conn, walks, start, end)
            changed = propagated_digest(conn) != before
    summary = PropagationSummary(len(policies), sum(len(fields) for fields in origins.values()), reached,
                                 sum(len(walk.stops) for walk in walks), round(time.perf_counter() - started, 3),
                                 changed, tuple(errors))
    log.info("%s", summary.render())
    return summary

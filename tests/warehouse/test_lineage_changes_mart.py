"""The lineage_changes mart, built by real dbt over data compacted by the real job: the edges and
field sources that appeared or disappeared day by day."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from spark_jobs.compaction.job import run_compaction
from spark_jobs.field_lineage.job import run_field_lineage
from tests.factories import D1, D2, event, iso, shop_history, write_log
from tests.warehouse.test_compaction import END, rows
from warehouse.pipeline.dbt_build import build_marts

IDENTITY = {"type": "DIRECT", "subtype": "IDENTITY", "masking": False}


def contacts(run_id: str, at: datetime, source: str) -> list[dict[str, Any]]:
    """contacts.email_out copied from ``source``.email by one run."""
    run = {"application": "Crm", "program_type": "spark", "program": "Contacts", "run_id": run_id}
    record = {"destination": {"name": "contacts"}, "operations": [
        {"name": "read", "inputs": [{"source": {"name": source}}], "outputs": ["email"]},
        {"name": "copy", "outputs": ["email_out"], "inputs": [{"field": "email", "transformation": IDENTITY}]},
        {"type": "write", "name": "write", "inputs": [{"field": "email_out"}]}]}
    return [event("run_start", run=run, event_time=iso(at)),
            event("field_operations", record, run=run, event_time=iso(at), schema_version=2),
            event("run_end", {"status": "completed"}, run=run, event_time=iso(at + timedelta(minutes=5)))]


def test_edges_and_field_sources_that_appeared_or_disappeared_by_day(
        warehouse_db: str, log_root: Path, settings_for) -> None:  # type: ignore[no-untyped-def]
    # The shop: on D2 Audit starts reading dx_orders, Report stops reading it and writing dx_report.
    # Contacts: email_out from crm on D1, from crm_v2 on D2; a third day D3 with only Feed.
    d3 = D2 + timedelta(days=1)
    write_log(log_root, [*shop_history(), *contacts("c1", D1 + timedelta(hours=1), "crm"),
                         *contacts("c2", D2 + timedelta(hours=1), "crm_v2"),
                         event("run_start", run={"application": "Shop", "program_type": "spark", "program": "Feed",
                                                 "run_id": "feed-4"}, event_time=iso(d3 + timedelta(hours=1))),
                         event("dataset_access", {"dataset": {"name": "dx_orders"}, "access": "write"},
                               run={"application": "Shop", "program_type": "spark", "program": "Feed",
                                    "run_id": "feed-4"}, event_time=iso(d3 + timedelta(hours=1)))])
    settings = settings_for(warehouse_db)
    run_compaction(None, interval_end=END, settings=settings)
    run_field_lineage(None, settings)
    build_marts(warehouse_db, settings, command="run", select="+lineage_changes")
    build_marts(warehouse_db, settings, command="test", select="lineage_changes")  # its unique, accepted values
    found = rows(warehouse_db, """
        select day::text, change, kind, dataset, coalesce(program, ''), coalesce(access, ''),
               coalesce(field || ' <- ' || source || '.' || source_field, '')
        from lineage_marts.lineage_changes order by day, kind, change, dataset, 5, 6, 7""")
    day1, day2, day3 = (str(day.date()) for day in (D1, D2, d3))
    assert found == [
        (day2, "appeared", "edge", "dx_orders", "Audit", "read", ""),
        (day2, "disappeared", "edge", "dx_orders", "Report", "read", ""),
        (day2, "disappeared", "edge", "dx_report", "Report", "write", ""),
        (day2, "appeared", "field_source", "contacts", "", "", "email_out <- crm_v2.email"),
        (day2, "disappeared", "field_source", "contacts", "", "", "email_out <- crm.email"),
        (day3, "disappeared", "edge", "dx_orders", "Audit", "read", ""),
        (day3, "disappeared", "field_source", "contacts", "", "", "email_out <- crm_v2.email"),
    ]
    assert day1 not in {row[0] for row in found}  # the first day has nothing to compare with
    # Announcing them (the compaction DAG's announce_changes): appeared at once, disappeared once the
    # day is over, each change once, grouped by dataset and day.
    from warehouse.db.connection import connect
    from warehouse.pipeline.change_announcements import due, mark_announced

    with connect(warehouse_db, autocommit=True) as conn:
        during_day3 = due(conn, d3.date())
        assert [(str(e.day), e.dataset, [c["change"] for c in e.changes]) for e in during_day3] == [
            (day2, "contacts", ["appeared", "disappeared"]),
            (day2, "dx_orders", ["appeared", "disappeared"]),
            (day2, "dx_report", ["disappeared"])]  # day 3's disappearances wait for its end
        assert during_day3[0].extra()["changes"][0] == {
            "kind": "field_source", "change": "appeared", "field": "email_out", "source_namespace": "default",
            "source": "crm_v2", "source_field": "email"}
        assert mark_announced(conn, during_day3) == 5
        after_day3 = due(conn, (d3 + timedelta(days=1)).date())
        assert [(str(e.day), e.dataset, len(e.changes)) for e in after_day3] == [
            (day3, "contacts", 1), (day3, "dx_orders", 1)]
        mark_announced(conn, after_day3)
        assert due(conn, (d3 + timedelta(days=1)).date()) == []

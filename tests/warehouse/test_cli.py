"""The ``lineage`` command as a user runs it (the installed console script, a real warehouse):
events of a namespace that did not exist are quarantined, listed, replayed once the namespace is
created, and compacted once; bad input gets a message and exit code 1 (2 for usage)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from spark_jobs.compaction.job import run_compaction
from tests.factories import D1, D2, RUN, access, event, iso, shop_history, write_log
from tests.warehouse.test_compaction import END, rows

LINEAGE = str(Path(sys.executable).parent / "lineage")


@pytest.fixture
def cli(warehouse_db: str, log_root: Path):  # type: ignore[no-untyped-def]
    env = {**os.environ, "LINEAGE_DATABASE_URL": warehouse_db, "LINEAGE_LOG_ROOT": str(log_root),
           "COLUMNS": "200"}

    def run(*args: str, code: int = 0) -> str:
        done = subprocess.run([LINEAGE, *args], env=env, capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == code, (args, done.returncode, done.stdout, done.stderr)
        return done.stdout + done.stderr
    return run


def test_quarantined_events_are_replayed_once_after_their_namespace_is_created(
        cli, warehouse_db: str, log_root: Path, settings_for) -> None:  # type: ignore[no-untyped-def]
    shop = {**RUN, "application": "Shop", "run_id": "s-1"}
    write_log(log_root, [event("run_start", namespace="shop", run=shop),
                         access("orders", "write", namespace="shop", run=shop),
                         event("run_end", {"status": "completed"}, namespace="shop", run=shop,
                               event_time="2026-11-21T05:10:00Z"),
                         "{not json"])
    settings = settings_for(warehouse_db)
    assert run_compaction(None, interval_end=END, settings=settings).quarantined == 4

    listed = cli("quarantine", "list", "--reason", "does not exist")
    assert "3 rows" in listed and "namespace 'shop' does not exist" in listed
    assert "still refused: 3 x namespace 'shop' does not exist" in cli("quarantine", "replay", "--dry-run")
    assert "namespace 'shop' created" in cli("namespaces", "create", "shop", "--description", "the shop")
    assert "the shop" in cli("namespaces", "list")

    replayed = cli("quarantine", "replay")
    assert "4 quarantined lines selected, 3 written to" in replayed and "replay-" in replayed
    assert "still refused: 1 x malformed JSON" in replayed
    assert "0 quarantined lines selected" not in replayed
    again = cli("quarantine", "replay", "--reason", "does not exist")  # replayed rows are not selected again
    assert "0 quarantined lines selected, 0 written" in again

    # the next compaction (any run, scheduled or `lineage compact`) takes the replayed file once
    late = run_compaction(None, interval_end=END.replace(year=2027), settings=settings)
    assert (late.files, late.events_compacted, late.quarantined) == (1, 3, 0)
    assert rows(warehouse_db, "select namespace, run_id, status from lineage.runs") == [("shop", "s-1", "completed")]
    assert rows(warehouse_db, "select count(*) from lineage.quarantine where replayed_to like '%replay-%'") == [(3,)]
    shown = cli("quarantine", "show", str(rows(warehouse_db, "select min(quarantine_id) from lineage.quarantine "
                                                             "where replayed_at is not null")[0][0]))
    assert "replayed_to:" in shown and '"namespace": "shop"' in shown

    def waiting() -> str:
        status = cli("status")
        assert "last compaction started" in status
        return status.split(f"files waiting in {log_root}: ")[1].split()[0]

    assert waiting() == "0"
    write_log(log_root, [event("run_start", namespace="shop", run={**shop, "run_id": "s-2"})])
    assert waiting() == "1"


def test_bad_input_gets_a_message_and_a_code_scripts_can_trust(cli) -> None:  # type: ignore[no-untyped-def]
    assert "no quarantined line 999999" in cli("quarantine", "show", "999999", code=1)
    assert "namespace 'nowhere' not found" in cli("grants", "put", "bob", "namespaces/nowhere", "READ", code=1)
    assert "the entity is 'instance' or a path" in cli("grants", "put", "bob", "bogus", "READ", code=1)
    assert "bob holds READ on namespace=default" in cli("grants", "put", "bob", "namespaces/default", "read")
    assert "bob" in cli("grants", "list", "--principal", "bob")
    assert "holds no grant" in cli("grants", "revoke", "carol", "namespaces/default", code=1)
    assert "namespace 'nowhere' not found" in cli("namespaces", "delete", "nowhere", "--yes", code=1)
    cli("quarantine", "list", "--limit", "0", code=2)  # a usage error
    assert "Usage" in cli("--help")
    assert "no batch blocks the marts" not in cli("quality", "status")  # an empty table, exit 0


def test_diff_prints_what_changed_against_the_day_before_and_its_json(
        cli, warehouse_db: str, log_root: Path, settings_for) -> None:  # type: ignore[no-untyped-def]
    """The shop's second day against its first: Audit is a new reader, Report stopped (tests.factories)."""
    from warehouse.pipeline.dbt_build import build_marts

    settings = settings_for(warehouse_db)
    write_log(log_root, shop_history())
    run_compaction(None, interval_end=END, settings=settings)
    build_marts(warehouse_db, settings, command="run", select="+lineage_walk")
    day = ("--since", str(int(D2.timestamp())), "--until", str(int((D2 + timedelta(days=1)).timestamp())))
    table = cli("diff", "default", "dx_orders", *day)
    cells = [[cell.strip() for cell in line.split("│")[1:-1]] for line in table.splitlines() if "│" in line]
    lines = {row[1]: row[0] for row in cells if row[0] in ("added", "removed", "unchanged")}
    assert lines == {"spark.default.Shop.Audit": "added", "spark.default.Shop.Feed": "unchanged",
                     "spark.default.Shop.Report": "removed"}
    assert "relations 1 added, 2 removed, 1 unchanged" in table
    answer = json.loads(cli("diff", "default", "dx_orders", *day, "--changed", "--json"))
    assert sorted((r["program"], r["change"]) for r in answer["relations"]) == [
        ("spark.default.Shop.Audit", "added"), ("spark.default.Shop.Report", "removed"),
        ("spark.default.Shop.Report", "removed")]
    assert (answer["baseStart"], answer["baseEnd"]) == (int(D1.timestamp()), int(D2.timestamp()))
    assert "--since 'yesterday' is not epoch seconds" in cli("diff", "default", "dx_orders", "--since", "yesterday",
                                                             code=1)
    assert "levels must be between 1 and 100" in cli("diff", "default", "dx_orders", "--levels", "0", code=1)


def test_diff_of_a_field_says_it_became_masked(cli, warehouse_db: str, log_root: Path,  # type: ignore[no-untyped-def]
                                               settings_for) -> None:
    from spark_jobs.field_lineage.job import run_field_lineage

    def contacts(run_id: str, day: datetime, source: str, transformation: dict[str, object]) -> list[dict]:
        run = {"application": "Crm", "program_type": "spark", "program": "Contacts", "run_id": run_id}
        record = {"destination": {"name": "contacts"}, "operations": [
            {"name": "read", "inputs": [{"source": {"name": source}}], "outputs": ["email"]},
            {"name": "sha2" if transformation["masking"] else "copy", "outputs": ["email_out"],
             "inputs": [{"field": "email", "transformation": transformation}]},
            {"type": "write", "name": "write", "inputs": [{"field": "email_out"}]}]}
        return [event("run_start", run=run, event_time=iso(day)),
                event("field_operations", record, run=run, event_time=iso(day), schema_version=2),
                event("run_end", {"status": "completed"}, run=run, event_time=iso(day + timedelta(minutes=5)))]

    write_log(log_root, [*contacts("c1", D1 + timedelta(hours=1), "crm",
                                   {"type": "DIRECT", "subtype": "IDENTITY", "masking": False}),
                         *contacts("c2", D2 + timedelta(hours=1), "crm_v2",
                                   {"type": "DIRECT", "subtype": "TRANSFORMATION", "masking": True})])
    settings = settings_for(warehouse_db)
    run_compaction(None, interval_end=END, settings=settings)
    run_field_lineage(None, settings)
    day = ("--since", str(int(D2.timestamp())), "--until", str(int((D2 + timedelta(days=1)).timestamp())))
    table = cli("diff", "default", "contacts", "--field", "email_out", *day)
    assert "email: DIRECT/IDENTITY -> DIRECT/TRANSFORMATION masking" in table
    assert "sources: 1 added, 1 removed; paths: 1 new, 1 gone, 0 unchanged; 1 newly masked" in table
    impact = json.loads(cli("diff", "default", "crm", "--field", "email", "--direction", "outgoing", *day, "--json"))
    assert [(r["dataset"], r["change"]) for r in impact["reached"]] == [("contacts", "removed")]
    assert "--direction 'up' is not incoming or outgoing" in cli("diff", "default", "contacts", "--field", "x",
                                                                 "--direction", "up", code=1)

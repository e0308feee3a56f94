"""Benchmark: the pages in a real browser (``python -m bench.pages``, ``make bench-pages``).

Starts a real ``airflow api-server`` with the plugin, logs in through Airflow's auth, and loads
each page in Debian's headless Chromium (Playwright) several times, measuring with the
browser's own clock (``performance.now()``, milliseconds since navigation start) until the page
is interactive: its data fetched and drawn (results listed, metadata shown, graph laid out).

1. Every page on the demo data (``make demo`` first): search, entity, run, dataset lineage,
   field provenance. Target: interactive within 1 s.
2. The dataset lineage page on the largest 10-level lineage of the lineage benchmark's
   warehouse (``make bench-lineage`` first: 1.44M runs), one day. Target: drawn within 2 s.
"""

from __future__ import annotations

import argparse
import os
import statistics
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

import psycopg

from harness.api_server import api_server, token
from lineage.settings import Settings, libpq_url

CHROMIUM = "/usr/bin/chromium"
READY = {  # what "interactive" means on each page
    "search": "document.querySelector('#result-list li') !== null",
    "entity": "document.querySelector('#scope-user h3') !== null",
    "run": "document.querySelector('#accesses tbody tr') !== null",
    "lineage": "window.cy && window.cy.nodes().length > 0 && window.cy.nodes()[0].position('x') !== 0",
    "fields": "window.cy && window.cy.nodes().length > 0",
}


@contextmanager
def browser_page(base: str, bearer: str) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync"])
        context = chromium.new_context(viewport={"width": 1400, "height": 900}, base_url=base)
        context.add_cookies([{"name": "_token", "value": bearer, "url": base}])
        yield context.new_page()
        chromium.close()


def interactive_ms(page: Any, path: str, kind: str, loads: int, timeout_ms: int = 30_000) -> list[float]:
    """Milliseconds from navigation start until the page is interactive, per load."""
    spent = []
    for _ in range(loads):
        page.goto(path)
        try:
            page.wait_for_function(READY[kind], timeout=timeout_ms)
        except Exception as error:
            shown = page.inner_text("main")[:500]
            raise RuntimeError(f"{path} did not become interactive; it shows: {shown}") from error
        spent.append(page.evaluate("performance.now()"))
    return spent


def report(label: str, samples: list[float], target_ms: float) -> None:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    print(f"{label:52s} p50 {statistics.median(ordered):7.0f} ms   p95 {p95:7.0f} ms   (target {target_ms:.0f} ms)")


def custom_range(start: datetime, end: datetime) -> dict[str, str]:
    return {"range": "custom", "start": start.strftime("%Y-%m-%dT%H:%M"), "end": end.strftime("%Y-%m-%dT%H:%M")}


def demo_pages(settings: Settings) -> dict[str, str]:
    """One URL per page over the demo data, with a window covering its runs."""
    with psycopg.connect(libpq_url(settings.database_url)) as conn:
        row = conn.execute("select min(started_at), max(coalesce(stopped_at, started_at)) from lineage.runs").fetchone()
        assert row is not None and row[0] is not None, "no runs in the demo warehouse: run `make demo` first"
        run = conn.execute("""select application, program_type, program, run_id from lineage.run_details
                              where program = 'PurchaseHistoryBuilder' order by started_at desc limit 1""").fetchone()
        assert run is not None, "the demo's PurchaseHistoryBuilder has not run: run `make demo` first"
    window = custom_range(row[0] - timedelta(minutes=1), row[1] + timedelta(minutes=1))
    app, program_type, program, run_id = run
    return {
        "search": "/lineage/ui/search?" + urlencode({"query": "purchase*"}),
        "entity": "/lineage/ui/entity?" + urlencode({"ns": "default", "target": "datasets/purchases"}),
        "run": "/lineage/ui/run?" + urlencode({"ns": "default", "app": app, "type": program_type, "program": program,
                                               "run": run_id}),
        "lineage": "/lineage/ui/lineage?" + urlencode({"ns": "default", "type": "dataset", "name": "purchases",
                                                       "levels": 10, **window}),
        "fields": "/lineage/ui/fields?" + urlencode({"ns": "default", "dataset": "history", "field": "total_spent",
                                                     "view": "detailed", **window}),
    }


def largest_lineage(url: str, candidates: int) -> tuple[str, datetime, datetime, int]:
    """The dataset with the most relations in a 10-level, 1-day walk among ``candidates`` datasets
    of the lineage benchmark's warehouse."""
    from warehouse.db.lineage_store import LineageQueries
    from warehouse.service.lineage_graph import DataRef, walk_lineage

    with psycopg.connect(libpq_url(url)) as conn:
        row = conn.execute("select max(started_at) from lineage.runs").fetchone()
        assert row is not None and row[0] is not None, "the lineage benchmark's warehouse is empty"
        end = row[0].replace(hour=0, minute=0, second=0, microsecond=0)
        start = end - timedelta(days=1)
        names = [r[0] for r in conn.execute(
            "select dataset from lineage.datasets where namespace = 'bench' order by dataset_key limit %s",
            (candidates,)).fetchall()]
        queries = LineageQueries(conn, start, end)
        sizes = [(len(walk_lineage(queries, DataRef("bench", "dataset", name), 10).relations), name) for name in names]
    relations, name = max(sizes)
    return name, start, end, relations


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Benchmark the pages in a real browser.")
    parser.add_argument("--loads", type=int, default=10, help="loads per page")
    parser.add_argument("--candidates", type=int, default=2000, help="datasets tried for the largest lineage")
    parser.add_argument("--skip-large", action="store_true", help="only the demo pages")
    args = parser.parse_args(argv)
    settings = Settings.from_env()
    env = dict(os.environ)
    pages = demo_pages(settings)
    with api_server({**env, "AIRFLOW_CONN_LINEAGE_WAREHOUSE": libpq_url(settings.database_url)}) as base:
        bearer = token(base, "admin", "admin").json()["access_token"]
        with browser_page(base, bearer) as page:
            for kind, path in pages.items():  # warm up: the server's first requests import and connect
                interactive_ms(page, path, kind, 1, timeout_ms=120_000)
            print(f"demo data, {args.loads} loads each, time to interactive (browser clock):")
            for kind, path in pages.items():
                report(f"  {kind}", interactive_ms(page, path, kind, args.loads), 1000)
    if args.skip_large:
        return 0
    url = settings.database_url.rsplit("/", 1)[0] + "/lineage_bench_walk"
    name, start, end, relations = largest_lineage(url, args.candidates)
    path = "/lineage/ui/lineage?" + urlencode({"ns": "bench", "type": "dataset", "name": name, "levels": 10,
                                               **custom_range(start.astimezone(UTC), end.astimezone(UTC))})
    with api_server({**env, "AIRFLOW_CONN_LINEAGE_WAREHOUSE": libpq_url(url)}) as base:
        bearer = token(base, "admin", "admin").json()["access_token"]
        with browser_page(base, bearer) as page:
            samples = interactive_ms(page, path, "lineage", args.loads)
            nodes = page.evaluate("window.cy.nodes().length")
            edges = page.evaluate("window.cy.edges().length")
    report(f"largest 10-level lineage ({name}: {relations} relations, {nodes} nodes, {edges} edges)", samples, 2000)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The pages shown inside the Airflow UI (nav: Browse > Lineage ...).

The home page is rendered here; the others (search, entity, run, dataset lineage, field
provenance) are one HTML shell each, filled in the browser from the REST API by the scripts in
``lineage_api/ui/static`` (values are always set as text, never as HTML). The graph library
(cytoscape with its dagre layout) comes from the npm registry (``ui/package.json``, installed
by ``scripts/bootstrap.sh``) and is served from its ``node_modules``.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse, HTMLResponse

from lineage.errors import NotFoundError, UnavailableError
from lineage_api.deps import Caller, Connection
from warehouse.db import status_queries as warehouse_queries
from warehouse.service.authorization import INSTANCE, Privilege

router = APIRouter()
public_router = APIRouter()  # scripts and styles: no data in them

UI = Path(__file__).resolve().parents[1] / "ui"
STATIC = UI / "static"
VENDOR = {"cytoscape.min.js": "cytoscape/dist/cytoscape.min.js",
          "cytoscape-dagre.min.js": "cytoscape-dagre/dist/cytoscape-dagre.min.js"}
PAGES = {"search": ("Search", False), "entity": ("Entity", False), "run": ("Run", False),
         "lineage": ("Dataset lineage", True), "fields": ("Field provenance", True),
         "tags": ("Where does a tag go", True)}

_SHELL = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title} · Lineage warehouse</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="../static/style.css">
{vendor}<script src="../static/common.js" defer></script>
<script src="../static/{script}.js" defer></script>
</head><body data-page="{page}"><main id="main"><p class="muted">Loading…</p></main></body></html>"""
_SCRIPTS = {"search": "search", "entity": "entity", "run": "entity", "lineage": "lineage", "fields": "fields",
            "tags": "tags"}


@router.get("/ui/{page}", response_class=HTMLResponse)
def ui_page(page: str) -> str:
    """One page's shell: search, entity, run, lineage, fields or tags."""
    if page not in PAGES:
        raise NotFoundError(f"no page {page!r}; pages: {', '.join(PAGES)}")
    title, uses_graph = PAGES[page]
    scripts = [f'<script src="../static/vendor/{name}" defer></script>\n' for name in VENDOR] if uses_graph else []
    vendor = "".join(scripts)
    return _SHELL.format(title=title, page=page, script=_SCRIPTS[page], vendor=vendor)


@public_router.get("/static/vendor/{name}")
def vendor_file(name: str) -> FileResponse:
    if name not in VENDOR:
        raise NotFoundError(f"no vendor file {name!r}")
    path = UI / "node_modules" / VENDOR[name]
    if not path.is_file():
        raise UnavailableError(f"{name} is not installed: run scripts/bootstrap.sh (npm ci in {UI})")
    return FileResponse(path, media_type="text/javascript")


@public_router.get("/static/{name}")
def static_file(name: str) -> FileResponse:
    path = STATIC / name
    if "/" in name or not path.is_file():
        raise NotFoundError(f"no static file {name!r}")
    media = {"js": "text/javascript", "css": "text/css"}.get(path.suffix.lstrip("."), "application/octet-stream")
    return FileResponse(path, media_type=media)

_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Lineage warehouse</title>
<style>
 body {{ font-family: system-ui, sans-serif; margin: 1.5rem; color: #1f2937; }}
 table {{ border-collapse: collapse; margin-top: .5rem; }}
 th, td {{ border-bottom: 1px solid #e5e7eb; padding: .3rem .8rem; text-align: left; font-size: .9rem; }}
 th {{ background: #f3f4f6; }} .num {{ text-align: right; }}
</style></head>
<body>
<h1>Lineage warehouse</h1>
<p>{totals}</p>
<h2>Recent compactions</h2>
<table><thead><tr><th>batch</th><th>finished</th><th class="num">files</th><th class="num">events read</th>
<th class="num">compacted</th><th class="num">duplicates</th><th class="num">quarantined</th></tr></thead>
<tbody>{rows}</tbody></table>
</body></html>"""


@router.get("/", response_class=HTMLResponse)
def home(caller: Caller, conn: Connection) -> str:
    """Warehouse totals and the latest compactions, for callers with READ on the instance (they
    span every namespace); others see the page without them."""
    if not caller.allows_key(INSTANCE, Privilege.READ):
        return _PAGE.format(totals=escape(f"Warehouse totals and compactions need READ on the instance "
                                          f"(user {caller.principal!r} holds no such grant)."),
                            rows='<tr><td colspan="7">hidden</td></tr>')
    totals = warehouse_queries.warehouse_totals(conn)
    rows = "".join(
        "<tr>" + "".join(
            f'<td class="{css}">{escape(str(batch[key]))}</td>'
            for key, css in (("batch_id", ""), ("finished_at", ""), ("files", "num"), ("events_read", "num"),
                             ("events_compacted", "num"), ("duplicates", "num"), ("quarantined", "num"))
        ) + "</tr>"
        for batch in warehouse_queries.recent_compactions(conn, 20)
    )
    summary = ", ".join(f"{escape(key.replace('_', ' '))}: {value}" for key, value in totals.items())
    return _PAGE.format(totals=summary, rows=rows or '<tr><td colspan="7">no compactions yet</td></tr>')

"""The page shown inside the Airflow UI (nav: Browse > Lineage)."""

from __future__ import annotations

from html import escape

from fastapi import APIRouter
from fastapi.responses import HTMLResponse

from lineage_api import warehouse_queries

router = APIRouter()

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
def home() -> str:
    """Warehouse totals and the latest compactions."""
    totals = warehouse_queries.warehouse_totals()
    rows = "".join(
        "<tr>" + "".join(
            f'<td class="{css}">{escape(str(batch[key]))}</td>'
            for key, css in (("batch_id", ""), ("finished_at", ""), ("files", "num"), ("events_read", "num"),
                             ("events_compacted", "num"), ("duplicates", "num"), ("quarantined", "num"))
        ) + "</tr>"
        for batch in warehouse_queries.recent_compactions(20)
    )
    summary = ", ".join(f"{escape(key.replace('_', ' '))}: {value}" for key, value in totals.items())
    return _PAGE.format(totals=summary, rows=rows or '<tr><td colspan="7">no compactions yet</td></tr>')

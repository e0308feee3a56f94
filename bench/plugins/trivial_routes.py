"""The Airflow plugins folder of ``bench.openlineage_ingest``: the lineage warehouse's plugin (from
whichever checkout is on ``PYTHONPATH``; through its entry point, or this folder for an older
checkout) and, beside it, a trivial app mounted the same way, whose
routes do nothing. The benchmark posts to both on the same api-server: what a plugin route costs in
Airflow's stack (its middlewares, routing, FastAPI) against what the OpenLineage endpoint costs."""

from __future__ import annotations

from airflow.plugins_manager import AirflowPlugin
from fastapi import FastAPI, Request

URL_PREFIX = "/bench-trivial"

trivial = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)


@trivial.get("/ping")
async def ping() -> dict[str, bool]:
    """Answers at once."""
    return {"ok": True}


@trivial.post("/echo", status_code=201)
async def echo(request: Request) -> dict[str, object]:
    """Reads the body and answers as the OpenLineage endpoint does, without checking or writing it."""
    body = await request.body()
    return {"accepted": 1 if body else 0, "refused": []}


class TrivialRoutesPlugin(AirflowPlugin):
    name = "bench_trivial_routes"
    fastapi_apps = [{"app": trivial, "url_prefix": URL_PREFIX, "name": "Benchmark: trivial routes"}]


try:  # this layout: Airflow loads the lineage plugin through its entry point
    import lineage_api.plugin  # noqa: F401
except ImportError:  # an older checkout (--baseline DIR): its plugin file
    from lineage_plugin import LineageWarehousePlugin  # noqa: F401


"""Registers the lineage warehouse in Airflow: the REST API + pages under /lineage, and a nav entry."""

from __future__ import annotations

from airflow.plugins_manager import AirflowPlugin
from lineage_api.app import URL_PREFIX, create_app


class LineageWarehousePlugin(AirflowPlugin):
    name = "lineage_warehouse"
    fastapi_apps = [{"app": create_app(), "url_prefix": URL_PREFIX, "name": "Lineage warehouse"}]
    external_views = [
        {"name": name, "href": href, "url_route": route, "destination": "nav", "category": "browse"}
        for name, href, route in (
            ("Lineage", "lineage/", "lineage"),
            ("Lineage search", "lineage/ui/search", "lineage-search"),
            ("Dataset lineage", "lineage/ui/lineage", "lineage-graph"),
            ("Field provenance", "lineage/ui/fields", "lineage-fields"),
        )
    ]

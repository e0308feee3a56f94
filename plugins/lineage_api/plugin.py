"""Registers the lineage warehouse in Airflow: the REST API + pages under /lineage (and its OpenLineage
endpoint also at /api/v1/lineage, where the stock HTTP transport posts), and nav entries.

Airflow finds it through the package's ``airflow.plugins`` entry point (pyproject.toml), in an
installed wheel and in the checkout's editable install alike: nothing is copied into a plugins
folder."""

from __future__ import annotations

from airflow.plugins_manager import AirflowPlugin

from lineage_api.app import OPENLINEAGE_ALIAS_PREFIX, URL_PREFIX, create_app, create_openlineage_alias

_APP = create_app()


class LineageWarehousePlugin(AirflowPlugin):
    name = "lineage_warehouse"
    fastapi_apps = [{"app": _APP, "url_prefix": URL_PREFIX, "name": "Lineage warehouse"},
                    {"app": create_openlineage_alias(_APP), "url_prefix": OPENLINEAGE_ALIAS_PREFIX,
                     "name": "Lineage warehouse: OpenLineage in"}]
    external_views = [
        {"name": name, "href": href, "url_route": route, "destination": "nav", "category": "browse"}
        for name, href, route in (
            ("Lineage", "lineage/", "lineage"),
            ("Lineage search", "lineage/ui/search", "lineage-search"),
            ("Dataset lineage", "lineage/ui/lineage", "lineage-graph"),
            ("Field provenance", "lineage/ui/fields", "lineage-fields"),
            ("Where tags go", "lineage/ui/tags", "lineage-tags"),
        )
    ]

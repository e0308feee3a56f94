"""The lineage warehouse's REST API and pages, mounted inside Airflow's api-server."""

from lineage_api import path_names as path_names  # registers the ``name`` path convertor the routes use

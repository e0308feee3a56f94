"""The lineage warehouse's REST API and pages, mounted inside Airflow's api-server."""

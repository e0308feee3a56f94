"""Example PySpark pipelines that record lineage with the client (seeds 001 and 004)."""

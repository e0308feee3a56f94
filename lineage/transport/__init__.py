"""Where events go: the raw log file, and the OpenLineage in-process transport."""

"""OpenLineage ingest: a request's events sorted and appended to the sealed spool."""

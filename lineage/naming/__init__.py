"""Naming: OpenLineage identities of datasets and jobs, JDBC, partitions, the namespace map."""

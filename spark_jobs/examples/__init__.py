"""Example PySpark pipelines that record lineage with the client (the *Metadata and Data Discovery*
and *Field Level Lineage* designs)."""

"""The field lineage job: compacted field operations -> operation sets, per-field paths, run rows."""

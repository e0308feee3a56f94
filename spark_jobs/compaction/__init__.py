"""Compaction: raw event logs -> validated, deduplicated rows merged into the warehouse."""

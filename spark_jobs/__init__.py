"""Spark entry points: the compaction job and example pipelines."""

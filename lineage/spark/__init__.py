"""Automatic capture from PySpark's plans: ``with lineage.spark.track(spark, namespace=...):``
around ordinary PySpark code (``capture``: the listener and the run; ``plan_analysis``: column
lineage and steps from the analyzed plan's JSON, read as a tree by ``plan_tree``, its
expressions named and described by ``plan_description``; ``operations``: the step-by-step
record). PySpark is imported only when a capture starts."""

from __future__ import annotations

from lineage.spark.capture import TrackError, track

__all__ = ["TrackError", "track"]

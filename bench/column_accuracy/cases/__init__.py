"""The labelled cases, by shape. Each module lists its cases in ``CASES``; a case's expectations
were written by hand from Spark SQL semantics and the OpenLineage column lineage specification
before it was first run (``bench.column_accuracy.case`` has the notation), and a case the product
gets wrong stays, with ``wrong=`` saying why, until it is fixed."""

from __future__ import annotations

from bench.column_accuracy.case import Case
from bench.column_accuracy.cases import basics, joins_aggregates, structure

CASES: list[Case] = [*basics.CASES, *joins_aggregates.CASES, *structure.CASES]

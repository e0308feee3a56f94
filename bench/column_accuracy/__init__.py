"""Column lineage accuracy (``python -m bench.column_accuracy``, ``make bench-column-accuracy``):
a labelled set of Spark queries, each with the sources and kinds of every written column written
by hand from Spark SQL semantics and the OpenLineage column lineage specification, run on real
Spark under ``lineage.spark.track``; prints precision and recall of sources and the agreement of
kinds, by shape (issue 31 item 5).

- ``case``: what a case is and the notation of its expectations;
- ``lake``: the tables every case reads;
- ``cases_*``: the cases, by shape;
- ``scoring``: expected against captured, pure;
- ``__main__``: runs them and prints the table.
"""

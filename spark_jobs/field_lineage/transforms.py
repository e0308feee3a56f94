"""DataFrame -> DataFrame steps of the field lineage job (no IO): both call the core.

1. ``fingerprint_records``: every pending record -> its operation set's fingerprint (or the
   reason it gives no lineage).
2. ``set_paths``: one record per operation set not stored yet (or stored by an older
   derivation; the job reads them so, ``warehouse.db.field_lineage_store.read_new_sets``) -> its
   per-field paths, its source fields' flows, its composed column lineage (``field_edges``: what
   tag propagation walks) and its warnings, so they are computed once per
   distinct operation set, however many runs recorded it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import types as T

from lineage.errors import InvalidFieldOperationsError
from lineage.model.column_lineage import field_edges
from lineage.model.field_paths import field_paths, normalize
from warehouse.service.field_flows import source_field_flows

PENDING_SCHEMA = T.StructType([T.StructField(name, T.StringType()) for name in ("namespace", "event_id", "payload")])
NEW_SETS_SCHEMA = T.StructType([T.StructField(n, T.StringType()) for n in ("fingerprint", "namespace", "payload")])
_FINGERPRINTED = pa.schema([pa.field(name, pa.string()) for name in (
    "namespace", "event_id", "payload", "fingerprint", "destination_namespace", "destination_type", "destination",
    "descriptions", "reason")])
FINGERPRINTED_SCHEMA = T.StructType([T.StructField(f.name, T.StringType()) for f in _FINGERPRINTED])
_PATHS = pa.schema([pa.field(name, pa.string()) for name in ("fingerprint", "operations", "paths", "flows",
                                                                "warnings", "edges")])
PATHS_SCHEMA = T.StructType([T.StructField(f.name, T.StringType()) for f in _PATHS])


def fingerprint_batches(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Arrow batches of (namespace, event_id, payload) -> ``FINGERPRINTED_SCHEMA``'s (Spark's
    tasks run it, and the job itself for a small batch)."""
    for batch in batches:
        rows: dict[str, list[Any]] = {name: [] for name in _FINGERPRINTED.names}
        for namespace, event_id, payload in zip(*(batch.column(n).to_pylist() for n in PENDING_SCHEMA.names),
                                                strict=True):
            found: dict[str, Any] = {"namespace": namespace, "event_id": event_id, "payload": payload}
            try:
                record = normalize(orjson.loads(payload), namespace)
            except (InvalidFieldOperationsError, KeyError, TypeError, orjson.JSONDecodeError) as exc:
                found["reason"] = f"field operations: {exc}"
            else:
                found.update(fingerprint=record.fingerprint, destination_namespace=record.destination.namespace,
                             destination_type=record.destination.type, destination=record.destination.name,
                             descriptions=orjson.dumps(record.descriptions()).decode())
            for name in _FINGERPRINTED.names:
                rows[name].append(found.get(name))
        yield pa.RecordBatch.from_pydict(rows, schema=_FINGERPRINTED)


def path_batches(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Arrow batches of (fingerprint, namespace, payload) -> ``PATHS_SCHEMA``'s."""
    for batch in batches:
        rows: dict[str, list[Any]] = {name: [] for name in _PATHS.names}
        for fingerprint, namespace, payload in zip(
            *(batch.column(n).to_pylist() for n in ("fingerprint", "namespace", "payload")), strict=True
        ):
            record = normalize(orjson.loads(payload), namespace)
            rows["fingerprint"].append(fingerprint)
            rows["operations"].append(orjson.dumps([op.identity() for op in record.operations]).decode())
            rows["paths"].append(orjson.dumps([path.to_dict() for path in field_paths(record)]).decode())
            rows["flows"].append(orjson.dumps([flow.to_dict() for flow in source_field_flows(record)]).decode())
            rows["warnings"].append(orjson.dumps([warning.to_dict() for warning in record.warnings]).decode())
            rows["edges"].append(orjson.dumps(field_edges(record)).decode())
        yield pa.RecordBatch.from_pydict(rows, schema=_PATHS)


def fingerprint_records(pending: DataFrame) -> DataFrame:
    """(namespace, event_id, payload) -> the same with the record's fingerprint, or ``reason``."""
    return pending.mapInArrow(fingerprint_batches, FINGERPRINTED_SCHEMA)


def set_paths(new_sets: DataFrame) -> DataFrame:
    """(fingerprint, namespace, payload), one row per operation set -> its operations, per-field
    paths, source field flows and warnings (JSON)."""
    return new_sets.select("fingerprint", "namespace", "payload").mapInArrow(path_batches, PATHS_SCHEMA)

"""Which namespaces a quarantined line needs before its replay is taken
(``warehouse.db.quarantine_store.namespaces_of``): those the compaction's merge checks, no more,
no fewer."""

from __future__ import annotations

from lineage.openlineage.mapping import wrap
from lineage.settings import namespace_map
from warehouse.db.quarantine_store import namespaces_of

MAP = namespace_map("s3://lake=lake,s3://ext=ext,airflow=default")
EVENT = {
    "eventType": "COMPLETE", "eventTime": "2026-12-05T02:00:00+00:00",
    "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/client/python",
    "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
    "run": {"runId": "0195f3b1-7a3e-7c6e-9d3f-2f1c0b8e4a11"}, "job": {"namespace": "airflow", "name": "spend"},
    "outputs": [{"namespace": "s3://lake", "name": "marts/spend", "facets": {"columnLineage": {
        "_producer": "p", "_schemaURL": "https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json",
        "fields": {"spend": {"inputFields": [{"namespace": "s3://ext", "name": "raw/orders", "field": "amount"}]}}}}}],
}


def test_a_line_needs_its_runs_and_its_datasets_namespaces_not_those_its_column_lineage_names() -> None:
    assert namespaces_of(wrap(EVENT, MAP)) == {"default", "lake"}


def test_a_line_written_before_its_map_was_pinned_is_mapped_as_the_compaction_maps_it() -> None:
    unpinned = {key: value for key, value in wrap(EVENT, MAP).items() if key != "namespaces"}
    assert namespaces_of(unpinned, MAP) == {"default", "lake"}  # it needed only "default" before


def test_a_native_event_needs_its_own_and_its_datasets_namespace() -> None:
    access = {"schema_version": 2, "event_id": "e-1", "kind": "dataset_access", "event_time": "2026-12-05T02:00:00Z",
              "namespace": "team", "run": {"application": "a", "program_type": "spark", "program": "p", "run_id": "r"},
              "payload": {"dataset": {"namespace": "shared", "name": "orders"}, "access": "read"}}
    assert namespaces_of(access) == {"team", "shared"}

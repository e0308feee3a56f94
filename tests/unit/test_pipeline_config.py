"""Seed 004's pipeline config with fieldMutations -> field operations -> per-field paths."""

from __future__ import annotations

import json
from typing import Any

import pytest

from lineage.client.pipeline_config import InvalidPipelineConfigError, field_operations_from_pipeline
from lineage.model.field_paths import field_paths, normalize

STREAM_SCHEMA = {"name": "etlSchemaBody", "type": "record", "fields": [
    {"name": "ts", "type": "long"}, {"name": "headers", "type": {"type": "map", "keys": "string", "values": "string"}},
    {"name": "body", "type": "string"}]}
SEED_CONFIG: dict[str, Any] = {"stages": [
    {"name": "Stream", "plugin": {"name": "Stream", "type": "streamingsource", "properties": {"name": "events"}},
     "outputSchema": json.dumps(STREAM_SCHEMA)},
    {"name": "Projection", "plugin": {"name": "Projection", "type": "transform",
                                      "properties": {"drop": "headers", "rename": "ts:seqId,body:f1"}},
     "fieldMutations": [
         {"inputFields": [{"name": "ts", "type": "long"}], "mutation": "rename",
          "description": "renaming timestamp to the sequence id", "outputField": {"name": "seqId", "type": "long"}},
         {"inputFields": [{"name": "body", "type": "string"}], "mutation": "rename",
          "description": "renaming body to the f1", "outputField": {"name": "f1", "type": "string"}},
         {"inputFields": [{"name": "headers"}], "mutation": "delete", "description": "deleting headers"}]},
    {"name": "Table",
     "plugin": {"name": "Table", "type": "batchsink", "properties": {"referenceName": "events_table"}}},
], "connections": [{"from": "Projection", "to": "Table"}, {"from": "Stream", "to": "Projection"}]}


def test_seed_004_projection_config_gives_renames_from_the_stream_and_drops_headers() -> None:
    operations = field_operations_from_pipeline(SEED_CONFIG)["events_table"]
    record = normalize({"destination": {"name": "events_table"}, "operations": [op.to_dict() for op in operations]},
                       "default")
    paths = {path.field: path for path in field_paths(record)}
    assert sorted(paths) == ["f1", "seqId"]  # headers was deleted: it does not reach the table
    assert [op.name for op in paths["seqId"].operations] == ["read", "rename", "write"]
    assert [(source.name, field) for source, field in paths["f1"].source_fields] == [("Stream", "body")]


@pytest.mark.parametrize(("config", "reason"), [
    ({}, "no 'stages' list"),
    ({"stages": [{"name": "S", "type": "batchsource", "outputSchema": "{not json"}]}, "a schema is not JSON"),
    ({"stages": [{"name": "S", "type": "batchsource", "outputSchema": STREAM_SCHEMA}]}, "no sink stage"),
    ({"stages": [{"name": "T", "type": "transform", "fieldMutations": [{"mutation": "x"}]}]}, "has no inputFields"),
])
def test_unreadable_configs_are_refused_with_the_reason(config: dict[str, Any], reason: str) -> None:
    with pytest.raises(InvalidPipelineConfigError, match=reason):
        field_operations_from_pipeline(config)

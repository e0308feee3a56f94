"""Field operations from a pipeline config ("Pipeline config changes" of the *Field Level
Lineage* design).

A pipeline developer declares what a custom transform (JavaScript, Python, ...) does to fields
in the stage config, as ``fieldMutations``::

    {"inputFields": [{"name": "ts", "type": "long"}], "mutation": "rename",
     "description": "renaming timestamp to the sequence id", "outputField": {"name": "seqId", "type": "long"}}

``field_operations_from_pipeline`` turns a whole config into the operations to record for
each sink: a read per source stage (its output schema's fields), one operation per mutation
in stage order (a mutation without ``outputField`` drops its inputs), and a write per sink of
the fields reaching it. Fields a stage does not mention pass through unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from lineage.errors import InvalidPipelineConfigError
from lineage.model.field_operations import FieldInput, FieldOperation, Source

SOURCE_TYPES = ("batchsource", "streamingsource", "source")
SINK_TYPES = ("batchsink", "sparksink", "sink")


def _schema_fields(schema: Any) -> list[str]:
    """Field names of an Avro-style record schema (a JSON string or an object)."""
    if isinstance(schema, str):
        try:
            schema = json.loads(schema)
        except json.JSONDecodeError as exc:
            raise InvalidPipelineConfigError(f"a schema is not JSON: {exc.msg}") from exc
    if not isinstance(schema, Mapping) or not isinstance(schema.get("fields"), list):
        raise InvalidPipelineConfigError("a schema must be a record with a 'fields' list")
    return [str(field["name"]) for field in schema["fields"]]


def _ordered_stages(config: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Stages in the order data flows (the ``connections`` when given, else as listed)."""
    stages = config.get("stages")
    if not isinstance(stages, list) or not stages:
        raise InvalidPipelineConfigError("the config has no 'stages' list")
    by_name = {stage.get("name"): stage for stage in stages}
    connections = config.get("connections") or []
    if not connections:
        return list(stages)
    incoming = {name: {c["from"] for c in connections if c.get("to") == name} for name in by_name}
    ordered: list[Mapping[str, Any]] = []
    while len(ordered) < len(stages):
        ready = [s for s in stages if s not in ordered and incoming[s.get("name")] <= {o.get("name") for o in ordered}]
        if not ready:
            raise InvalidPipelineConfigError("the stage connections form a cycle")
        ordered.extend(ready[:1])
    return ordered


def field_operations_from_pipeline(config: Mapping[str, Any]) -> dict[str, list[FieldOperation]]:
    """Sink name -> the field operations that produced it, from a pipeline config."""
    operations: list[FieldOperation] = []
    result: dict[str, list[FieldOperation]] = {}
    live: list[str] = []  # fields flowing at this point, in order
    for stage in _ordered_stages(config):
        name = str(stage.get("name"))
        kind = str(stage.get("type") or stage.get("plugin", {}).get("type", "")).lower()
        properties = stage.get("plugin", {}).get("properties", {})
        reference = str(properties.get("referenceName") or name)
        if kind in SOURCE_TYPES:
            fields = _schema_fields(stage.get("outputSchema"))
            operations.append(FieldOperation("read", [Source(reference)], fields, f"read by stage {name}",
                                             id=f"{name}.read"))
            live.extend(field for field in fields if field not in live)
        elif kind in SINK_TYPES:
            write = FieldOperation("write", [FieldInput(field) for field in live], list(live),
                                   f"written by stage {name}", id=f"{name}.write", type="write")
            result[reference] = [*operations, write]
        for index, mutation in enumerate(stage.get("fieldMutations") or [], start=1):
            inputs = [str(field["name"]) for field in mutation.get("inputFields") or []]
            if not inputs:
                raise InvalidPipelineConfigError(f"stage {name!r}: mutation {index} has no inputFields")
            output = (mutation.get("outputField") or {}).get("name")
            operations.append(FieldOperation(str(mutation.get("mutation") or "transform"),
                                             [FieldInput(field) for field in inputs], [output] if output else [],
                                             str(mutation.get("description", "")), id=f"{name}.{index}"))
            if output is None:
                live = [field for field in live if field not in inputs]
            elif mutation.get("mutation") == "rename":
                live = [output if field == inputs[0] else field for field in live]
            elif output not in live:
                live.append(output)
    if not result:
        raise InvalidPipelineConfigError("the config has no sink stage")
    return result


"""The offline OpenLineage spec validator (tests/openlineage_spec.py): valid events pass, and damage to
the core event or to a standard facet is caught, naming where it is."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import ValidationError

from tests.openlineage_spec import facet_refs, validate_event, validate_events

pytestmark = pytest.mark.unit

FIXTURES = Path(__file__).parents[1] / "fixtures" / "openlineage"
PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/client/python"
RUN_ID = "0195f3b1-2b7c-7c6e-9d3f-2f1c0b8e4a01"
PARENT_RUN_ID = "0195f3b1-0000-7c6e-9d3f-2f1c0b8e4a00"
SPEC = "https://openlineage.io/spec"


def base(name: str, version: str) -> dict[str, str]:
    return {"_producer": PRODUCER, "_schemaURL": f"{SPEC}/facets/{version}/{name}.json#/$defs/{name}"}


def run_event() -> dict[str, Any]:
    return {
        "eventType": "COMPLETE",
        "eventTime": "2025-03-01T12:00:00.123456Z",
        "producer": PRODUCER,
        "schemaURL": f"{SPEC}/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": RUN_ID},
        "job": {"namespace": "spark", "name": "orders_daily"},
        "inputs": [{"namespace": "postgres://db:5432", "name": "shop.public.orders"}],
        "outputs": [{"namespace": "s3://lake", "name": "marts/orders_daily"}],
    }


def schema_facet() -> dict[str, Any]:
    return {**base("SchemaDatasetFacet", "1-2-0"),
            "fields": [{"name": "order_id", "type": "BIGINT"}, {"name": "total", "type": "DECIMAL(10,2)"}]}


def column_lineage_facet() -> dict[str, Any]:
    identity = {"type": "DIRECT", "subtype": "IDENTITY", "description": "copied as is", "masking": False}
    source = {"namespace": "postgres://db:5432", "name": "shop.public.orders"}
    return {**base("ColumnLineageDatasetFacet", "1-2-0"), "fields": {
        "order_id": {"inputFields": [{**source, "field": "order_id", "transformations": [identity]}]},
        "total": {"inputFields": [{**source, "field": "total", "transformations": [identity]}]}}}


def parent_facet() -> dict[str, Any]:
    return {**base("ParentRunFacet", "1-2-0"), "run": {"runId": PARENT_RUN_ID},
            "job": {"namespace": "airflow", "name": "orders_dag"}}


def faceted_run_event() -> dict[str, Any]:
    event = run_event()
    event["run"]["facets"] = {"parent": parent_facet()}
    event["job"]["facets"] = {"jobType": {**base("JobTypeJobFacet", "2-0-4"), "processingType": "BATCH",
                                          "integration": "SPARK", "jobType": "JOB"}}
    event["inputs"][0]["facets"] = {"schema": schema_facet()}
    event["outputs"][0]["facets"] = {"schema": schema_facet(), "columnLineage": column_lineage_facet()}
    return event


def damaged(event: dict[str, Any], path: tuple[str | int, ...], value: Any) -> dict[str, Any]:
    """A copy of the event with the value at path replaced, or removed when value is ``...``."""
    copied = copy.deepcopy(event)
    *parents, last = path
    holder: Any = copied
    for step in parents:
        holder = holder[step]
    if value is ...:
        del holder[last]
    else:
        holder[last] = value
    return copied


def test_a_minimal_run_event_is_valid() -> None:
    validate_event(run_event())


def test_a_run_event_with_schema_column_lineage_parent_and_job_type_facets_is_valid() -> None:
    validate_event(faceted_run_event())


def test_every_recorded_producer_event_is_valid() -> None:
    for path in sorted(FIXTURES.glob("*.json")):
        loaded = json.loads(path.read_text("utf-8"))
        validate_events(loaded if isinstance(loaded, list) else [loaded])


def test_every_facet_file_declares_at_least_one_known_facet_key() -> None:
    spec_facets = sorted((FIXTURES / "spec" / "facets").glob("*.json"))
    files = {ref.split("#")[0].rsplit("/", 1)[1] for refs in facet_refs().values() for ref in refs}
    assert len(spec_facets) > 30
    assert files == {path.name for path in spec_facets}
    assert facet_refs()["DatasetFacet", "documentation"] != facet_refs()["JobFacet", "documentation"]


BROKEN = [
    pytest.param(run_event(), ("run", "runId"), "not-a-uuid", "$.run.runId", "is not a 'uuid'", id="runId-not-uuid"),
    pytest.param(run_event(), ("eventTime",), ..., "$", "'eventTime' is a required property", id="no-eventTime"),
    pytest.param(run_event(), ("eventTime",), "2025-03-01T12:00:00", "$.eventTime", "is not a 'date-time'",
                 id="eventTime-without-zone"),
    pytest.param(run_event(), ("eventTime",), "2025-13-01T12:00:00Z", "$.eventTime", "is not a 'date-time'",
                 id="eventTime-month-13"),
    pytest.param(run_event(), ("eventType",), "DONE", "$.eventType", "'DONE' is not one of", id="eventType-DONE"),
    pytest.param(faceted_run_event(), ("outputs", 0, "facets", "columnLineage", "fields", "total", "inputFields"),
                 ..., "$.outputs[0].facets.columnLineage.fields.total", "'inputFields' is a required property",
                 id="columnLineage-without-inputFields"),
    pytest.param(faceted_run_event(), ("inputs", 0, "facets", "schema", "fields"), {"name": "order_id"},
                 "$.inputs[0].facets.schema.fields", "is not of type 'array'", id="schema-fields-not-a-list"),
    pytest.param(faceted_run_event(), ("run", "facets", "parent", "job"), ..., "$.run.facets.parent",
                 "'job' is a required property", id="parent-without-job"),
    pytest.param(faceted_run_event(), ("job", "facets", "jobType", "_producer"), ..., "$.job.facets.jobType",
                 "'_producer' is a required property", id="facet-without-_producer"),
]


@pytest.mark.parametrize(("event", "path", "value", "where", "what"), BROKEN)
def test_a_broken_event_is_rejected_naming_where(event: dict[str, Any], path: tuple[str | int, ...], value: Any,
                                                 where: str, what: str) -> None:
    with pytest.raises(ValidationError) as caught:
        validate_event(damaged(event, path, value))
    assert caught.value.message.startswith(f"{where}: ")
    assert what in caught.value.message


def test_a_facet_with_an_unknown_key_is_checked_only_as_a_base_facet() -> None:
    event = damaged(run_event(), ("run", "facets"), {"spark_properties": {**base("X", "1-0-0"), "fields": 1}})
    validate_event(event)
    with pytest.raises(ValidationError, match="'_schemaURL' is a required property"):
        validate_event(damaged(event, ("run", "facets", "spark_properties", "_schemaURL"), ...))


def test_a_facet_is_checked_against_the_schema_of_its_place() -> None:
    documentation = {**base("DocumentationJobFacet", "1-1-0"), "description": "daily orders"}
    validate_event(damaged(run_event(), ("job", "facets"), {"documentation": documentation}))
    misplaced = damaged(run_event(), ("run", "facets"), {"parent": {**base("X", "1-0-0"), "sql": "SELECT 1"}})
    with pytest.raises(ValidationError, match=r"^\$\.run\.facets\.parent: 'run' is a required property"):
        validate_event(misplaced)
    validate_event(damaged(run_event(), ("job", "facets"), {"parent": {**base("X", "1-0-0"), "sql": "SELECT 1"}}))


def test_input_and_output_facets_are_checked_where_a_oneof_branch_fails_too() -> None:
    condition = {"type": "binary", "operator": "AND", "left": {"type": "partition", "partitions": []},
                 "right": {"type": "location", "locations": ["s3://lake/orders/day=1"]}}
    event = damaged(run_event(), ("inputs", 0, "inputFacets"),
                    {"subset": {**base("InputSubsetInputDatasetFacet", "1-0-0"), "inputCondition": condition}})
    event["outputs"][0]["outputFacets"] = {"outputStatistics": {**base("OutputStatisticsOutputDatasetFacet", "1-0-2"),
                                                                "rowCount": 10, "size": 2048}}
    validate_event(event)
    partitions = ("inputs", 0, "inputFacets", "subset", "inputCondition", "left", "partitions")
    with pytest.raises(ValidationError, match=r"^\$\.inputs\[0\]\.inputFacets\.subset\.inputCondition\.left"
                                              r"\.partitions: 'x' is not of type 'array'"):
        validate_event(damaged(event, partitions, "x"))
    with pytest.raises(ValidationError, match=r"^\$\.outputs\[0\]\.outputFacets\.outputStatistics\.rowCount: "):
        validate_event(damaged(event, ("outputs", 0, "outputFacets", "outputStatistics", "rowCount"), "ten"))


def test_a_dataset_event_facet_is_checked_unless_deleted() -> None:
    documentation = base("DocumentationDatasetFacet", "1-1-0")
    event = {"eventTime": "2025-03-01T12:00:00+01:00", "producer": PRODUCER,
             "schemaURL": f"{SPEC}/2-0-2/OpenLineage.json#/$defs/DatasetEvent",
             "dataset": {"namespace": "s3://lake", "name": "marts/orders_daily",
                         "facets": {"documentation": {**documentation, "_deleted": True}}}}
    validate_event(event)
    with pytest.raises(ValidationError, match=r"^\$\.dataset\.facets\.documentation: 'description' is a required"):
        validate_event(damaged(event, ("dataset", "facets", "documentation"), documentation))


def test_validate_events_names_the_index_of_the_broken_event() -> None:
    events = [run_event(), faceted_run_event(), damaged(run_event(), ("run", "runId"), "42")]
    with pytest.raises(ValidationError, match=r"^event 2: \$\.run\.runId: '42' is not a 'uuid'"):
        validate_events(events)

"""OpenLineage events -> the native events they stand for (pure core). Expected values are
written out by hand from the OpenLineage spec's meaning, not taken from the code."""

from __future__ import annotations

import copy
import re
from typing import Any

import orjson
import pytest

from lineage.errors import InvalidEventError
from lineage.memo import BoundedMemo
from lineage.model.derived_checks import plainly_valid
from lineage.model.events import new_event, validate_event
from lineage.model.field_paths import field_paths, normalize
from lineage.naming.identity import NO_MAPPING, NamespaceMap
from lineage.openlineage.event import check_openlineage, content_id, event_time
from lineage.openlineage.mapping import event_namespace, expand, touched_namespaces, wrap

RUN_ID = "0195f3b1-7a3e-7c6e-9d3f-2f1c0b8e4a11"


def run_event(event_type: str | None = "COMPLETE", **extra: Any) -> dict[str, Any]:
    event: dict[str, Any] = {
        "eventTime": "2026-11-23T10:00:00.000Z",
        "producer": "https://github.com/apache/airflow/tree/providers-openlineage/2.20.3",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": RUN_ID, "facets": {}},
        "job": {"namespace": "default", "name": "etl_dag.load orders"},
        "inputs": [{"namespace": "postgres://db:5432", "name": "shop.public.orders",
                    "facets": {"schema": {"fields": [{"name": "id", "type": "integer"},
                                                     {"name": "address", "type": "struct",
                                                      "fields": [{"name": "city", "type": "varchar"}]}]}}},
                   {"namespace": "s3://lake", "name": "customers/2026"}],
        "outputs": [{"namespace": "postgres://db:5432", "name": "shop.marts.order_totals", "facets": {
            "columnLineage": {
                "fields": {
                    "order_id": {"inputFields": [{"namespace": "postgres://db:5432", "name": "shop.public.orders",
                                                  "field": "id", "transformations": [
                                                      {"type": "DIRECT", "subtype": "IDENTITY", "description": "",
                                                       "masking": False}]}]},
                    "city_hash": {"inputFields": [{"namespace": "s3://lake", "name": "customers/2026",
                                                   "field": "city", "transformations": [
                                                       {"type": "DIRECT", "subtype": "TRANSFORMATION",
                                                        "description": "md5(city)", "masking": True}]}]},
                },
                "dataset": [{"namespace": "postgres://db:5432", "name": "shop.public.orders", "field": "status",
                             "transformations": [{"type": "INDIRECT", "subtype": "FILTER"}]}],
            }}}],
    }
    if event_type is not None:
        event["eventType"] = event_type
    event.update(extra)
    return event


def expanded(event: dict[str, Any], mapping: NamespaceMap = NO_MAPPING) -> list[dict[str, Any]]:
    return expand(wrap(event, mapping), mapping)


def test_a_complete_event_is_a_run_end_reads_writes_field_operations_and_a_schema() -> None:
    events = expanded(run_event())
    kinds = [e["kind"] for e in events]
    assert kinds == ["run_end", "dataset_access", "dataset_access", "dataset_access", "field_operations",
                     "metadata_change"]
    assert events[0]["payload"] == {"status": "completed"}
    assert events[0]["run"] == {"application": "default", "program_type": "openlineage",
                                "program": "etl_dag.load orders", "run_id": RUN_ID}
    accesses = [(e["payload"]["dataset"]["name"], e["payload"]["access"]) for e in events[1:4]]
    assert accesses == [("postgres://db:5432/shop.public.orders", "read"), ("s3://lake/customers/2026", "read"),
                        ("postgres://db:5432/shop.marts.order_totals", "write")]
    schema = events[5]["payload"]
    assert schema["entity"] == [["namespace", "default"], ["dataset", "postgres://db:5432/shop.public.orders"]]
    assert schema["operation"] == "observe_schema"  # a fact about the dataset, not a request to check
    assert schema["schema"]["fields"] == [{"name": "id", "type": "integer"}, {"name": "address", "type": "struct"},
                                          {"name": "address/city", "type": "varchar"}]
    for native in events:
        validate_event(native)  # every derived event is a valid native event


def test_column_lineage_keeps_sources_apart_and_each_input_keeps_its_transformation() -> None:
    record = next(e for e in expanded(run_event()) if e["kind"] == "field_operations")
    paths = {path.field: path for path in field_paths(normalize(record["payload"], "default"))}
    assert set(paths) == {"order_id", "city_hash"}
    sources = {(s.name, f) for s, f in paths["city_hash"].source_fields}
    # the dataset-level FILTER dependency is an INDIRECT input of every output field
    assert sources == {("s3://lake/customers/2026", "city"), ("postgres://db:5432/shop.public.orders", "status")}
    operation = next(op for op in paths["city_hash"].operations if op.id == "field:city_hash")
    assert operation.description == "md5(city)"
    kinds = {(ref.field, ref.transformation.type, ref.transformation.subtype, ref.transformation.masking)
             for ref in operation.inputs if ref.transformation}
    assert kinds == {("city", "DIRECT", "TRANSFORMATION", True), ("status", "INDIRECT", "FILTER", False)}
    identity = next(op for op in paths["order_id"].operations if op.id == "field:order_id")
    assert identity.name == "identity"


def test_the_old_column_lineage_shape_and_untyped_facets_are_accepted() -> None:
    event = run_event()
    event["outputs"][0]["facets"]["columnLineage"] = {"fields": {
        "a": {"inputFields": [{"namespace": "s3://lake", "name": "x", "field": "a"}],
              "transformationType": "IDENTITY", "transformationDescription": "copied"},
        "b": {"inputFields": [{"namespace": "s3://lake", "name": "x", "field": "b"}]}}}
    record = next(e for e in expanded(event) if e["kind"] == "field_operations")["payload"]
    transforms = {op["outputs"][0]: op for op in record["operations"] if op["type"] == "transform"}
    assert transforms["a"]["inputs"][0]["transformation"] == {"type": "DIRECT", "subtype": "IDENTITY"}
    assert transforms["a"]["description"] == "copied"
    assert "transformation" not in transforms["b"]["inputs"][0]


@pytest.mark.parametrize(("event_type", "first"), [
    ("START", ("run_start", {})), ("FAIL", ("run_end", {"status": "failed"})),
    ("ABORT", ("run_end", {"status": "killed"}))])
def test_event_types_become_run_starts_and_ends(event_type: str, first: tuple[str, dict[str, str]]) -> None:
    events = expanded(run_event(event_type))
    assert (events[0]["kind"], events[0]["payload"]) == first


@pytest.mark.parametrize("event_type", ["RUNNING", "OTHER", None])
def test_other_event_types_only_add_to_the_run(event_type: str | None) -> None:
    kinds = {e["kind"] for e in expanded(run_event(event_type))}
    assert "run_start" not in kinds and "run_end" not in kinds
    assert "dataset_access" in kinds


def test_the_same_event_has_the_same_ids_and_a_different_one_does_not() -> None:
    first, again = wrap(run_event(), NamespaceMap()), wrap(copy.deepcopy(run_event()), NamespaceMap())
    assert first["event_id"] == again["event_id"] and first["event_id"].startswith("ol-")
    assert wrap(run_event("START"), NamespaceMap())["event_id"] != first["event_id"]
    assert [e["event_id"] for e in expand(first, NamespaceMap())] == [f"{first['event_id']}.{i}" for i in range(6)]


@pytest.mark.parametrize(
    ("mutate", "reason"),
    [
        (lambda e: e["run"].pop("runId"), "run.runId is missing"),
        (lambda e: e.pop("eventTime"), "eventTime is missing"),
        (lambda e: e.pop("job"), "job is missing"),
        (lambda e: e["job"].pop("name"), "job.name is missing"),
        (lambda e: e.update(eventTime="last tuesday"), "is not an ISO 8601 time"),
        (lambda e: e.update(eventType="EXPLODED"), "eventType 'EXPLODED' is not one of"),
        (lambda e: e["inputs"][0].pop("namespace"), "inputs[0].namespace is missing"),
    ],
)
def test_malformed_events_are_refused_naming_the_field(mutate: Any, reason: str) -> None:
    event = run_event()
    mutate(event)
    with pytest.raises(InvalidEventError, match=reason.replace("[", r"\[").replace("]", r"\]")):
        wrap(event, NamespaceMap())


def test_lenient_where_the_spec_is_loose() -> None:
    event = run_event(run={"runId": "not-a-uuid"}, eventTime="2026-11-23T10:00:00")  # no offset: read as UTC
    event["outputs"][0]["facets"]["bogus"] = None
    event["inputs"][0]["facets"]["schema"] = {"fields": "not a list"}
    wrapped = wrap(event, NamespaceMap())
    assert wrapped["event_time"] == "2026-11-23T10:00:00.000000Z"
    assert "metadata_change" not in {e["kind"] for e in expand(wrapped, NamespaceMap())}


def test_transformations_of_the_wrong_shape_are_dropped_not_a_crash() -> None:
    """Before, a list or object as a transformation's subtype raised TypeError (unhashable) out of
    the parse: the Spark task failed and the whole file was quarantined as unreadable."""
    event = run_event()
    event["outputs"][0]["facets"]["columnLineage"]["fields"]["order_id"]["inputFields"][0]["transformations"] = [
        {"type": "DIRECT", "subtype": ["IDENTITY"], "description": 7, "masking": "yes"},
        {"type": {"DIRECT": 1}, "subtype": {"a": 1}}, ["INDIRECT"], None]
    record = next(e for e in expanded(event) if e["kind"] == "field_operations")["payload"]
    order_id = next(op for op in record["operations"] if op["type"] == "transform" and op["outputs"] == ["order_id"])
    assert [item["transformation"] for item in order_id["inputs"]] == [
        {"type": "DIRECT"}, {"type": "INDIRECT", "subtype": "FILTER"}]  # the second: the facet's dataset-level input


def test_namespaces_map_jobs_and_datasets() -> None:
    mapping = NamespaceMap.of([("postgres://db:5432", "shop"), ("default", "etl")])
    events = expanded(run_event(), mapping)
    assert {e["namespace"] for e in events} == {"etl"}
    assert {e["payload"]["dataset"]["namespace"] for e in events if e["kind"] == "dataset_access"} == {
        "shop", "default"}
    assert touched_namespaces(wrap(run_event(), mapping)) == {"etl", "shop", "default"}


def test_a_dataset_event_declares_its_dataset_schema_facets_and_aliases_without_a_run() -> None:
    dataset_event = {"eventTime": "2026-11-23T10:00:00Z", "producer": "p", "schemaURL": "s", "dataset": {
        "namespace": "s3://lake", "name": "x", "facets": {
            "schema": {"fields": [{"name": "id", "type": "integer"}]},
            "documentation": {"description": "the lake's x"},
            "symlinks": {"identifiers": [{"namespace": "hive://metastore", "name": "db.x", "type": "TABLE"}]}}}}
    events = expanded(dataset_event)
    assert [(e["kind"], "run" in e) for e in events] == [("dataset_facets", False), ("metadata_change", False)]
    facets, schema = (e["payload"] for e in events)
    assert facets["dataset"]["name"] == "s3://lake/x" and facets["facets"] == {
        "documentation": {"description": "the lake's x"}}
    assert [alias["name"] for alias in facets["aliases"]] == ["hive://metastore/db.x"]
    assert schema["entity"][-1] == ["dataset", "s3://lake/x"]
    for event in events:  # the raw format takes them, run-less as they are
        validate_event(copy.deepcopy(event))
    bare = expanded({**dataset_event, "dataset": {"namespace": "s3://lake", "name": "y"}})
    assert [e["kind"] for e in bare] == ["dataset_facets"]  # the dataset alone: it exists once compacted


def test_a_job_event_declares_its_program_s_reads_and_writes_without_a_run() -> None:
    schema = {"_producer": "p", "_schemaURL": "s", "fields": [{"name": "id", "type": "int"}]}
    job_event = {"eventTime": "2026-11-23T10:00:00Z", "producer": "p", "schemaURL": "s",
                 "job": {"namespace": "dbt", "name": "shop.orders_clean"},
                 "inputs": [{"namespace": "postgres://db:5432", "name": "shop.public.orders"}],
                 "outputs": [{"namespace": "postgres://db:5432", "name": "shop.public.orders_clean",
                              "facets": {"schema": schema}}]}
    events = expanded(job_event)
    assert [(e["kind"], e.get("payload", {}).get("access")) for e in events] == [
        ("dataset_access", "read"), ("dataset_access", "write"), ("dataset_facets", None), ("metadata_change", None),
        ("run_facets", None)]
    program = {"application": "dbt", "program_type": "openlineage", "program": "shop.orders_clean"}
    assert [e.get("job") for e in events[:2]] == [program, program]
    assert not any("run" in e for e in events)  # declared: no run is made up
    assert events[1]["payload"]["dataset"]["name"] == "postgres://db:5432/shop.public.orders_clean"
    assert events[3]["payload"]["operation"] == "observe_schema"  # the output's schema, as a DatasetEvent's
    for event in events:
        validate_event(copy.deepcopy(event))
    assert events[4]["payload"] == {"declaration": True, "job": {}} and events[4]["job"] == program
    # a declaration of no dataset is a declaration all the same: it ends what the job declared
    [empty] = expanded({**job_event, "inputs": [], "outputs": []})
    assert (empty["kind"], empty["payload"], empty["job"]) == ("run_facets", {"declaration": True, "job": {}}, program)
    validate_event(copy.deepcopy(empty))


def test_only_dataset_facets_metadata_changes_and_declared_accesses_may_come_without_a_run() -> None:
    event = expanded(run_event())[1]
    assert event["kind"] == "dataset_access"
    run = event.pop("run")
    with pytest.raises(InvalidEventError, match="run"):
        validate_event(event)
    job = {key: run[key] for key in ("application", "program_type", "program")}
    validate_event({**event, "job": job})  # a program's declared access
    with pytest.raises(InvalidEventError, match="not both"):
        validate_event({**event, "job": job, "run": run})
    with pytest.raises(InvalidEventError, match="only a dataset_access"):
        validate_event({**event, "kind": "run_start", "payload": {}, "job": job})
    with pytest.raises(InvalidEventError, match="program_type"):
        validate_event({**event, "job": {"application": "a", "program": "p"}})


def test_a_payload_derived_again_is_checked_once_and_comes_out_the_same() -> None:
    first = expanded(run_event("START"))
    again = expanded(run_event("COMPLETE"))
    def operations_of(events: list[dict[str, Any]]) -> dict[str, Any]:
        return next(e["payload"] for e in events if e["kind"] == "field_operations")

    assert operations_of(first) == operations_of(again)
    operations_of(first)["operations"].clear()  # a copy each time: changing one changes no other
    assert operations_of(expanded(run_event("RUNNING")))["operations"]
    for event in again:  # derived events pass the whole schema and the semantic checks on their own
        validate_event(copy.deepcopy(event))


@pytest.mark.parametrize(("mutate", "reason"), [
    (lambda e: e["run"].update(runId="run\t1"), "data.run.run_id must match pattern"),  # a control character
    (lambda e: e["job"].update(name="x" * 1025), "job name 'xxx"),
])
def test_derived_events_breaking_a_rule_refuse_the_event_with_the_schemas_reason(mutate: Any, reason: str) -> None:
    """Derived events skip the JSON Schema walk (``derived_event``), not its rules: what came from
    the producer is still checked, and a refusal names the schema's reason."""
    event = run_event()
    mutate(event)
    with pytest.raises(InvalidEventError, match=re.escape(reason)):
        expanded(event)


@pytest.mark.parametrize(("mutate", "kind", "warning", "reason"), [
    (lambda e: e["outputs"][0]["facets"]["columnLineage"]["fields"].update({"c" * 250: {"inputFields": [
        {"namespace": "s3://lake", "name": "x", "field": "a"}]}}), "field_operations",
     "column lineage of dataset ", "data.payload.operations[3].id must be shorter"),
    (lambda e: e["outputs"][0]["facets"]["columnLineage"]["fields"]["order_id"]["inputFields"][0].update(
        field="f" * 1025), "field_operations", "column lineage of dataset ",
     "data.payload.operations[0].outputs[1] must be shorter"),
    (lambda e: e["inputs"][0]["facets"]["schema"]["fields"].append({"name": "id", "type": "text"}),
     "metadata_change", "schema of dataset ", "metadata change: observe_schema: schema field 'id' appears twice"),
    (lambda e: e["inputs"][0]["facets"]["schema"]["fields"].append({"name": " ", "type": "text"}),
     "metadata_change", "schema of dataset ", "metadata change: observe_schema: schema field name ' ' must be 1-1024"),
    (lambda e: e["inputs"][0]["facets"]["schema"].update(fields=[{"name": f"c{i}", "type": "int"}
                                                                  for i in range(10_001)]),
     "metadata_change", "schema of dataset ", "must contain less than or equal to 10000 items"),
])
def test_a_facet_the_raw_format_refuses_loses_only_itself(mutate: Any, kind: str, warning: str, reason: str) -> None:
    """A column-lineage or schema facet whose derived event the raw format refuses (a field name
    too long, a field named twice, too many fields) is skipped, the run carries a warning naming
    it and the reason, and the run, its accesses and every other derived event stand."""
    whole = expanded(run_event())
    event = run_event()
    mutate(event)
    events = expanded(event)
    kinds = [e["kind"] for e in events]
    assert kinds.count(kind) == [e["kind"] for e in whole].count(kind) - 1
    others = {kind, "run_facets"}  # the warning's run_facets is new: the whole event carries none
    assert [e["kind"] for e in whole if e["kind"] not in others] == [k for k in kinds if k not in others]
    assert [e["payload"] for e in events if e["kind"] == "dataset_access"] == [
        e["payload"] for e in whole if e["kind"] == "dataset_access"]
    warnings = next(e["payload"]["warnings"] for e in events if e["kind"] == "run_facets")
    skipped = [w for w in warnings if w.startswith(warning)]
    assert len(skipped) == 1 and " skipped: " in skipped[0] and reason in skipped[0], warnings
    for native in events:
        validate_event(copy.deepcopy(native))


def test_derived_events_are_plainly_valid_exactly_when_they_are_valid() -> None:
    """``plainly_valid`` (the trusted construction's check) never passes an event the schema
    refuses, and passes the events the expansion derives from a valid event."""
    for native in expanded(run_event()):
        assert plainly_valid(native)
    refused = {"run_id": "a\nb", "application": "", "program": "x\n", "program_type": "Open"}
    for key, value in refused.items():
        native = {**expanded(run_event())[0]}
        native["run"] = {**native["run"], key: value}
        assert not plainly_valid(native)
        with pytest.raises(InvalidEventError):
            validate_event(native)
    access = expanded(run_event())[1]
    for payload in ({**access["payload"], "access": "sideways"}, {**access["payload"], "extra": 1},
                    {"dataset": {"name": "d" * 1025}, "access": "read"}, {"dataset": {"name": "d", "type": 1},
                                                                          "access": "read"}):
        assert not plainly_valid({**access, "payload": payload})
        with pytest.raises(InvalidEventError):
            validate_event({**access, "payload": payload})
    job = {key: access["run"][key] for key in ("application", "program_type", "program")}
    declared = {key: value for key, value in access.items() if key != "run"}
    assert plainly_valid({**declared, "job": job})
    for wrong in ({**access, "job": job}, {**declared, "job": {**job, "program_type": "dataset"}},
                  {**access, "run": {**access["run"], "program_type": "stream"}},
                  {**declared, "kind": "run_start", "payload": {}, "job": job}, declared,
                  # a declaration is a program's, never a run's, and names the job's facets
                  {**access, "kind": "run_facets", "payload": {"declaration": True}},
                  {**declared, "kind": "run_facets", "payload": {"declaration": True}, "job": job}):
        assert not plainly_valid(wrong)
        with pytest.raises(InvalidEventError):
            validate_event(wrong)
    for right in ({**declared, "kind": "run_facets", "payload": {"declaration": True, "job": {}}, "job": job},
                  {**declared, "kind": "run_facets", "payload": {"job": {"jobType": {}}}, "job": job}):
        assert plainly_valid(right)
        validate_event(right)


def _deep(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(levels):
        value = {"x": value}
    return value


@pytest.mark.parametrize("mutate", [
    lambda e: None,
    lambda e: e["run"]["facets"].update(acme={"note": "a\x00b"}),
    lambda e: e["run"]["facets"].update({"a\x00b": {}}),
    lambda e: e["run"]["facets"].update(acme={"note": "\ud800"}),
    lambda e: e["run"]["facets"].update(acme=_deep(300)),
    lambda e: e["run"]["facets"].update(acme={"big": 2**70}),
    lambda e: e.update(eventType="BOGUS"),
    lambda e: e.update(eventType=None),
    lambda e: e.update(eventTime="yesterday"),
    lambda e: e.update(eventTime="0001-01-01T00:00:00+01:00"),
    lambda e: e.update(eventTime="2026-11-23T10:00:00.000000000000000000000000000000000000000000000000000000Z"),
    lambda e: e.update(producer="p" * 5000),
    lambda e: e["run"].update(runId="r" * 129),
    lambda e: e["run"].update(runId="not a uuid"),
    lambda e: e["job"].update(name=""),
    lambda e: e["job"].update(namespace="Not A Warehouse Namespace!"),
    lambda e: e.update(inputs={"namespace": "n", "name": "d"}),
    lambda e: e.update(inputs=None, outputs=[]),
    lambda e: e["outputs"].append({"namespace": "n"}),
])
def test_an_envelope_wrapped_without_the_schema_walk_is_valid_exactly_when_the_walk_says_so(mutate: Any) -> None:
    """``wrap`` builds the envelope by the trusted construction (the endpoint's hot path): what it
    accepts passes the full validation and can be written to the log; what it refuses, it refuses
    with a reason."""
    event = run_event()
    mutate(event)
    try:
        check_openlineage(event)  # the envelope as the full validation builds it
        new_event("openlineage", event_namespace(event, NO_MAPPING), {}, event, event_time=event_time(event),
                  event_id=content_id(event), producer=str(event.get("producer") or "")[:256])
        full: str | None = None
    except InvalidEventError as exc:
        full = str(exc)
    try:
        envelope = wrap(event, NO_MAPPING)
    except InvalidEventError as exc:
        assert full is not None and str(exc)
        return
    assert full is None
    validate_event(envelope)
    assert b"\\u0000" not in orjson.dumps(envelope)


def test_a_job_event_s_job_facets_are_its_program_s_and_only_a_job_s_facets_go_without_a_run() -> None:
    job_event = {"eventTime": "2026-11-23T10:00:00Z", "inputs": [], "outputs": [],
                 "job": {"namespace": "dbt", "name": "model.shop.orders",
                         "facets": {"jobType": {"integration": "DBT", "jobType": "MODEL"}}}}
    [facets] = [native for native in expanded(job_event) if native["kind"] == "run_facets"]
    assert facets["payload"] == {"declaration": True, "job": {"jobType": {"integration": "DBT", "jobType": "MODEL"}}}
    assert "run" not in facets and facets["job"]["program"] == "model.shop.orders"
    validate_event(facets)
    assert plainly_valid(facets)
    for payload in ({**facets["payload"], "run": {"x": {}}}, {**facets["payload"], "warnings": ["w"]}):
        wrong = {**facets, "payload": payload}
        assert not plainly_valid(wrong)
        with pytest.raises(InvalidEventError):
            validate_event(wrong)
    with pytest.raises(InvalidEventError, match="only a dataset_access or run_facets may name a program"):
        validate_event({**facets, "kind": "run_end", "payload": {"status": "completed"}})


def test_the_column_lineage_memo_is_bounded_by_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    """200 distinct 1 MB outputs once held half a gigabyte: the memo now never holds more than
    its byte budget (here 1 MB), and an output too large to be worth it is never memoized."""
    from lineage.openlineage import mapping as openlineage_mapping

    monkeypatch.setattr(openlineage_mapping, "_DERIVED_OPERATIONS", BoundedMemo(entries=1 << 20, max_bytes=1_000_000))
    for index in range(60):
        output = {"namespace": "s3://lake", "name": f"out{index}", "facets": {"columnLineage": {"fields": {
            f"f{n}": {"inputFields": [{"namespace": "s3://lake", "name": "src", "field": f"c{n}" * 20}]}
            for n in range(150)}}}}
        assert openlineage_mapping._column_lineage_operations(output, NO_MAPPING) is not None
        assert openlineage_mapping.memo_bytes() <= 1_000_000
    assert openlineage_mapping._DERIVED_OPERATIONS  # it still memoizes
    huge = {"namespace": "s3://lake", "name": "huge", "facets": {"columnLineage": {"fields": {
        f"f{n}": {"inputFields": [{"namespace": "s3://lake", "name": "src", "field": "x" * 500}]}
        for n in range(1_000)}}}}
    before = openlineage_mapping.memo_bytes()
    openlineage_mapping._column_lineage_operations(huge, NO_MAPPING)
    assert openlineage_mapping.memo_bytes() == before


def test_failed_data_quality_checks_ride_with_the_dataset_facets_and_damaged_ones_say_nothing() -> None:
    event = run_event()
    checks = [{"assertion": "not_null", "success": False, "column": "id"}, {"assertion": "positive", "success": True},
              {"assertion": "not_null", "success": False, "column": "id"},  # repeated: once
              {"assertion": "fresh\t", "success": False}, {"assertion": "", "success": False},
              {"assertion": "no_success"}, {"success": False}, "not an object", {"assertion": 7, "success": False},
              *({"assertion": f"check_{i}", "success": False} for i in range(150))]
    event["inputs"][1]["inputFacets"] = {"dataQualityAssertions": {"assertions": checks}}
    event["inputs"][0]["facets"]["dataQualityAssertions"] = {"assertions": "damaged"}
    facets = {e["payload"]["dataset"]["name"]: e for e in expanded(event) if e["kind"] == "dataset_facets"}
    failed = facets["s3://lake/customers/2026"]["payload"]["failed_assertions"]
    assert failed[:3] == [{"assertion": "not_null", "column": "id"}, {"assertion": "fresh"},
                          {"assertion": "check_0"}]
    assert len(failed) == 100  # at most MAX_ASSERTIONS
    assert "failed_assertions" not in facets["postgres://db:5432/shop.public.orders"]["payload"]
    validate_event(facets["s3://lake/customers/2026"])  # the raw format takes it


def test_a_huge_assertions_facet_costs_little_and_keeps_the_first_hundred() -> None:
    from lineage.openlineage.facets import failed_assertions

    checks = [{"assertion": f"check_{i}", "success": False} for i in range(100_000)]
    failed = failed_assertions({"inputFacets": {"dataQualityAssertions": {"assertions": checks}}})
    assert [item["assertion"] for item in failed] == [f"check_{i}" for i in range(100)]
    assert failed_assertions({"facets": {"dataQualityAssertions": {"assertions": [
        {"assertion": "\x1b[31mred" + "x" * 5000, "success": False}]}}})[0]["assertion"].startswith("[31mred")


def test_a_run_less_event_may_only_declare_a_dataset() -> None:
    schema_change = {"entity": [["namespace", "default"], ["dataset", "x"]], "operation": "observe_schema",
                     "schema": {"fields": [{"name": "a", "type": "int"}]}}
    base = {"schema_version": 2, "event_id": "e-1", "event_time": "2026-11-23T10:00:00Z", "namespace": "default"}
    validate_event({**base, "kind": "metadata_change", "payload": schema_change})
    with pytest.raises(InvalidEventError):  # anything else a metadata change does needs a run
        validate_event({**base, "kind": "metadata_change", "payload": {**schema_change, "operation": "remove_all"}})
    facets = {"dataset": {"name": "x"}, "failed_assertions": [{"assertion": "not_null"}]}
    with pytest.raises(InvalidEventError):  # failed checks are a run's
        validate_event({**base, "kind": "dataset_facets", "payload": facets})
    validate_event({**base, "kind": "dataset_facets", "payload": {"dataset": {"name": "x"}}})


def test_a_dataset_event_whose_facets_the_raw_format_refuses_keeps_the_dataset_and_its_schema() -> None:
    facets = {f"custom_{i}": {"v": i} for i in range(1001)}
    event = {"eventTime": "2026-11-23T10:00:00Z", "producer": "p", "schemaURL": "s", "dataset": {
        "namespace": "s3://lake", "name": "x", "facets": {**facets, "schema": {"fields": [{"name": "id"}]}}}}
    events = expanded(event)
    assert [(e["kind"], sorted(e["payload"])) for e in events] == [
        ("dataset_facets", ["dataset"]), ("metadata_change", ["entity", "operation", "schema"])]


def test_a_stream_declared_by_a_dataset_event_gets_its_schema_on_the_stream() -> None:
    event = {"eventTime": "2026-11-23T10:00:00Z", "producer": "p", "schemaURL": "s", "dataset": {
        "namespace": "lineage://default/streams", "name": "clicks", "facets": {"schema": {"fields": [{"name": "id"}]}}}}
    change = next(e for e in expanded(event) if e["kind"] == "metadata_change")
    assert change["payload"]["entity"] == [["namespace", "default"], ["stream", "clicks"]]


def test_a_dataset_event_whose_schema_the_raw_format_refuses_is_refused_with_the_reason() -> None:
    event = {"eventTime": "2026-11-23T10:00:00Z", "producer": "p", "schemaURL": "s", "dataset": {
        "namespace": "s3://lake", "name": "x", "facets": {"schema": {"fields": [{"name": "a"}, {"name": "a"}]}}}}
    with pytest.raises(InvalidEventError, match="twice"):
        expanded(event)


def _read_and_rewritten(others: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The inputs and outputs of a job that reads ``others`` tables and ``shop.t`` (schema [old])
    and writes ``shop.t`` again (schema [new])."""
    def table(name: str, field: str) -> dict[str, Any]:
        return {"namespace": "postgres://db:5432", "name": name,
                "facets": {"schema": {"fields": [{"name": field, "type": "integer"}]}}}
    return ([table(f"shop.other_{index}", "id") for index in range(others)] + [table("shop.t", "old")],
            [table("shop.t", "new")])


@pytest.mark.parametrize("others", [0, 6, 12])
def test_a_table_a_run_reads_and_writes_observes_the_schema_it_was_written_with(others: int) -> None:
    """One schema per dataset and event, the output's: two at one time were applied in the order
    of their ids as text (``.10`` before ``.9``), so from ten derived events on the input's older
    schema won (a review finding)."""
    inputs, outputs = _read_and_rewritten(others)
    changes = [e["payload"] for e in expanded(run_event(inputs=inputs, outputs=outputs))
               if e["kind"] == "metadata_change" and e["payload"]["entity"][1][1].endswith("shop.t")]
    assert [change["schema"]["fields"] for change in changes] == [[{"name": "new", "type": "integer"}]]


def test_a_table_a_job_declares_it_reads_and_writes_has_the_written_schema() -> None:
    inputs, outputs = _read_and_rewritten(12)
    job_event = {"eventTime": "2026-11-23T10:00:00.000Z", "producer": "https://github.com/dbt-labs/dbt-core",
                 "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent",
                 "job": {"namespace": "default", "name": "models.t"}, "inputs": inputs, "outputs": outputs}
    changes = [e["payload"] for e in expanded(job_event)
               if e["kind"] == "metadata_change" and e["payload"]["entity"][1][1].endswith("shop.t")]
    assert [change["schema"]["fields"] for change in changes] == [[{"name": "new", "type": "integer"}]]


def test_a_refused_output_schema_leaves_the_schema_the_run_read_the_dataset_with() -> None:
    """A dataset the run reads and writes observes its output's schema; when the raw format refuses
    that one (a field named twice), the input's stands instead of neither (a review finding)."""
    event = run_event()
    table = {"namespace": "s3://lake", "name": "marts/totals"}
    event["inputs"] = [{**table, "facets": {"schema": {"fields": [{"name": "id", "type": "int"}]}}}]
    event["outputs"] = [{**table, "facets": {"schema": {"fields": [{"name": "id", "type": "int"},
                                                                   {"name": "id", "type": "long"}]}}}]
    events = expanded(event)
    [change] = [e["payload"] for e in events if e["kind"] == "metadata_change"]
    assert change["schema"] == {"fields": [{"name": "id", "type": "int"}]}
    warnings = next(e["payload"]["warnings"] for e in events if e["kind"] == "run_facets")
    assert [w for w in warnings if w.startswith("schema of dataset marts/totals skipped: ")] == [
        "schema of dataset marts/totals skipped: metadata change: observe_schema: schema field 'id' appears twice"]


def test_a_remembered_observed_schema_is_a_fresh_copy_and_a_changed_facet_is_not_remembered_as_the_old() -> None:
    """``schema_change`` remembers what it derived (a task's START, RUNNING and COMPLETE repeat the
    facet): each answer is the one derived afresh, and changing what the caller got changes
    nothing remembered."""
    from lineage.openlineage import mapping

    def dataset(*fields: str) -> dict[str, Any]:
        return {"namespace": "postgres://db:5432", "name": "shop.public.orders",
                "facets": {"schema": {"fields": [{"name": name, "type": "int"} for name in fields]}}}

    first = mapping.schema_change(dataset("id", "amount"), NO_MAPPING)
    assert first is not None and [f["name"] for f in first["schema"]["fields"]] == ["id", "amount"]
    first["schema"]["fields"].clear()
    again = mapping.schema_change(dataset("id", "amount"), NO_MAPPING)
    assert again is not None and [f["name"] for f in again["schema"]["fields"]] == ["id", "amount"]
    other = mapping.schema_change(dataset("id"), NO_MAPPING)
    assert other is not None and [f["name"] for f in other["schema"]["fields"]] == ["id"]
    assert mapping.schema_change(dataset(), NO_MAPPING) is None  # no usable field, remembered as none
    assert mapping.schema_change(dataset(), NO_MAPPING) is None
    mapped = NamespaceMap.of([("postgres://db", "shop")])
    assert mapping.schema_change(dataset("id"), mapped)["entity"][0] == ["namespace", "shop"]  # type: ignore[index]
    with pytest.raises(InvalidEventError):  # a dataset without a usable name is refused, each time
        mapping.schema_change({**dataset("id"), "name": ""}, NO_MAPPING)
    with pytest.raises(InvalidEventError):
        mapping.schema_change({**dataset("id"), "name": ""}, NO_MAPPING)


def test_a_remembered_valid_run_or_payload_does_not_pass_a_different_one() -> None:
    """The trusted construction remembers the parts and payloads it found valid, by value: a run
    that differs in one value, or in a value's type, is checked, and refused."""
    access = expanded(run_event())[1]
    assert plainly_valid(access) and plainly_valid(access)  # remembered
    for run in ({**access["run"], "run_id": 7}, {**access["run"], "run_id": True}, {**access["run"], "extra": "x"},
                {**access["run"], "run_id": ["r"]}):
        assert not plainly_valid({**access, "run": run})
    assert not plainly_valid({**access, "namespace": "no such namespace!"})
    assert not plainly_valid({**access, "payload": {**access["payload"], "access": 1}})
    assert not plainly_valid({**access, "event_id": "a b"})  # an id is checked each time

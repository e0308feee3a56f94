"""What an OpenLineage event becomes in the warehouse: the native events (format v2) it stands for.

The raw log keeps each OpenLineage event verbatim, wrapped in an ``openlineage`` envelope
(``wrap``); the compaction ``expand``s it into the events our own client writes, so runs,
accesses, field lineage, schemas and search need no second code path:

- a RunEvent's job is a program: application = job namespace, program type ``openlineage``,
  program = job name (kept whole, see ``lineage.naming.identity``); its run is the run ``runId``;
- START is a run start, COMPLETE / FAIL / ABORT a run end (completed / failed / killed);
  RUNNING, OTHER and events without ``eventType`` only add to the run. Runs accumulate over
  all their events in any arrival order (the merge keeps the earliest start and the latest end);
- each input is a read, each output a write (a dataset on both sides is both);
- a ``schema`` facet is an observed schema (``observe_schema``): a fact about the dataset, which
  becomes its SYSTEM schema and, when it differs, a new version whatever it changes (nested
  fields as ``a/b`` paths);
- a RunEvent itself is kept as it came (``kept_verbatim``), for the export to give back;
- a ``columnLineage`` facet on an output becomes one field-operations record for it: a read per
  source dataset, one operation per output field whose inputs keep their transformation (type,
  subtype, description, masking), and the write.

- the ``parent`` run facet becomes the run's parent (and root) run (``run_parent``); the other
  run and job facets, and each dataset's facets and ``symlinks`` aliases, are kept as they are
  (``run_facets``, ``dataset_facets``; see ``lineage.openlineage.facets``), with the warnings
  about the event (an ``eventTime`` without offset, a ``runId`` that is not a UUID, a facet
  dropped for its size, a damaged part of the parent facet).

A facet that is malformed is skipped, never a reason to reject the event, and only its damaged
part is: a parent facet whose own run is damaged still names the root.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import UTC, datetime
from typing import Any

import orjson

from lineage.errors import InvalidEntityError, InvalidEventError
from lineage.memo import BoundedMemo
from lineage.model.events import SCHEMA_VERSION, derived_event, format_time, parse_time, refuse_nul
from lineage.naming.identity import (
    DEFAULT_NAMESPACE,
    DatasetIdentity,
    NamespaceMap,
    PinnedNamespaceMap,
    dataset_identity,
    job_program,
    pin_namespaces,
)
from lineage.openlineage import kept_parts
from lineage.openlineage.event import (
    canonical_json,
    check_openlineage,
    content_id,
    envelope_warnings,
    event_shape,
    event_time,
    id_of,
)
from lineage.openlineage.facets import (
    MAPPED_DATASET_FACETS,
    MAPPED_RUN_FACETS,
    MAX_ASSERTIONS,
    PARENT_FACET,
    SYMLINKS_FACET,
    aliases,
    failed_assertions,
    kept_facets,
    parent_links,
    unknown_access,
    warehouse_run_ids,
)

KIND = "openlineage"
_RUN_ENDS = {"COMPLETE": "completed", "FAIL": "failed", "ABORT": "killed"}
_SUBTYPES = {"IDENTITY", "TRANSFORMATION", "AGGREGATION", "JOIN", "FILTER", "GROUP_BY", "SORT", "WINDOW",
             "CONDITIONAL"}
_MAX_TYPE_LENGTH = 256
_MAX_WARNINGS = 100


def wrap(event: dict[str, Any], namespaces: NamespaceMap, *, producer: str | None = None) -> dict[str, Any]:
    """The raw-log envelope carrying ``event`` verbatim; InvalidEventError when it is not acceptable.

    The envelope's namespace is the warehouse namespace of the event's job (of its dataset for
    a DatasetEvent). Its ``namespaces`` record pins the warehouse namespace of every OpenLineage
    namespace the event names (``referenced_namespaces``), as ``namespaces`` maps them now: the
    ingest checks WRITE on exactly these (``touched_namespaces``), and the compaction maps with
    the record, never with a map changed since.
    """
    check_openlineage(event)
    canonical = canonical_json(event)
    refuse_nul(canonical, event)
    # the trusted construction: checked above, the envelope's own parts are checked as the schema
    # says without its validator's walk (the endpoint's path: most of a request's work was that walk)
    envelope = derived_event(KIND, event_namespace(event, namespaces), {}, event, event_time=event_time(event),
                             event_id=id_of(canonical),
                             producer=(producer or str(event.get("producer") or ""))[:256])
    envelope["namespaces"] = pin_namespaces(namespaces, *referenced_namespaces(event))
    return envelope


def envelope_of(event: Any, namespaces: NamespaceMap, *, producer: str | None = None) -> dict[str, Any]:
    """``wrap(event)``, or for a malformed event an envelope all the same (namespace ``default``,
    time now), so the compaction quarantines it with its reason instead of it being lost."""
    try:
        return wrap(event, namespaces, producer=producer)
    except InvalidEventError as exc:
        payload = event if isinstance(event, dict) else {"value": event}
        try:
            event_id = content_id(payload)
        except InvalidEventError:  # not even JSON the log can write: its reason stands in for it
            payload = {"unwritable": str(exc)[:1000]}
            event_id = content_id(payload)
        return {"schema_version": SCHEMA_VERSION, "event_id": event_id, "kind": KIND,
                "event_time": format_time(datetime.now(UTC)), "namespace": DEFAULT_NAMESPACE, "payload": payload}


def event_namespace(event: Mapping[str, Any], namespaces: NamespaceMap) -> str:
    """The warehouse namespace an OpenLineage event belongs to."""
    if event_shape(event) == "dataset":
        return namespaces.for_dataset(event["dataset"]["namespace"])
    return namespaces.for_job(event["job"]["namespace"])


def referenced_namespaces(event: Mapping[str, Any]) -> tuple[set[str], set[str]]:
    """Every OpenLineage namespace a checked event names, by every route it has into the
    warehouse: ``(job namespaces, dataset namespaces)``. Jobs: the event's job, its ``parent``
    facet's job and root job. Datasets: the DatasetEvent's dataset, inputs and outputs, each
    one's ``symlinks`` identifiers and ``columnLineage`` sources (fields' ``inputFields`` and
    the dataset-level ``dataset`` list). Malformed parts are skipped, as the mapping skips them.
    (Parsed JSON is dicts and lists: checked as such, which is several times faster than the
    ``Mapping`` ABC on the endpoint's path.)"""
    jobs: set[str] = set()
    datasets: set[str] = set()
    _named(event.get("job"), jobs)
    parent = _dict_facet(event.get("run"), PARENT_FACET)
    if parent is not None:
        _named(parent.get("job"), jobs)
        root = parent.get("root")
        if isinstance(root, dict):
            _named(root.get("job"), jobs)
    listed = [event.get("dataset")] if event_shape(event) == "dataset" else []
    listed += [*(event.get("inputs") or []), *(event.get("outputs") or [])]
    for dataset in listed:
        if not isinstance(dataset, dict):
            continue
        _named(dataset, datasets)
        symlinks = _dict_facet(dataset, SYMLINKS_FACET)
        if symlinks is not None:
            for item in _list(symlinks.get("identifiers")):
                _named(item, datasets)
        column_lineage = _dict_facet(dataset, "columnLineage")
        if column_lineage is None:
            continue
        for item in _list(column_lineage.get("dataset")):
            _named(item, datasets)
        fields = column_lineage.get("fields")
        for spec in fields.values() if isinstance(fields, dict) else ():  # the hot loop: one per output field
            sources = spec.get("inputFields") if isinstance(spec, dict) else None
            for item in sources if isinstance(sources, list) else ():
                namespace = item.get("namespace") if isinstance(item, dict) else None
                if isinstance(namespace, str) and namespace:
                    datasets.add(namespace)
    return jobs, datasets


def _named(value: Any, into: set[str]) -> None:
    if isinstance(value, dict):
        namespace = value.get("namespace")
        if isinstance(namespace, str) and namespace:
            into.add(namespace)


def _dict_facet(owner: Any, name: str) -> dict[str, Any] | None:
    facets = owner.get("facets") if isinstance(owner, dict) else None
    facet = facets.get(name) if isinstance(facets, dict) else None
    return facet if isinstance(facet, dict) else None


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def touched_namespaces(envelope: Mapping[str, Any]) -> set[str]:
    """Every warehouse namespace a wrapped event writes into: the values its ``namespaces`` record pins."""
    record = envelope.get("namespaces") or {}
    return {envelope["namespace"], *record.get("jobs", {}).values(), *record.get("datasets", {}).values()}


def expand(envelope: Mapping[str, Any], namespaces: NamespaceMap) -> list[dict[str, Any]]:
    """The native events an ``openlineage`` envelope stands for, each with a derived id."""
    event = envelope["payload"]
    namespaces = PinnedNamespaceMap.pinned(envelope.get("namespaces"), namespaces)
    base_id = envelope["event_id"]
    moment = event_time(event)
    derived: list[tuple[str, str, dict[str, str], dict[str, Any]]] = []  # (kind, namespace, run, payload)
    shape = event_shape(event)
    if shape == "dataset":
        return _declared_dataset(event["dataset"], event, envelope, namespaces)
    if shape == "job":
        return _declared_job(event, envelope, namespaces)
    try:
        run = job_program(event["job"]["namespace"], event["job"]["name"], namespaces).run(run_id_of(event))
    except InvalidEntityError as exc:
        raise InvalidEventError(f"OpenLineage event: {exc}") from exc
    namespace = envelope["namespace"]
    event_type = event.get("eventType")
    if event_type == "START":
        derived.append(("run_start", namespace, run, {}))
    elif event_type in _RUN_ENDS:
        derived.append(("run_end", namespace, run, {"status": _RUN_ENDS[event_type]}))
    for side, access in (("inputs", "read"), ("outputs", "write")):
        for dataset in event.get(side) or []:
            said = "unknown" if side == "inputs" and unknown_access(dataset) else access  # our export's word
            derived.append(("dataset_access", namespace, run,
                            {"dataset": _dataset_ref(dataset, namespaces), "access": said}))
    events = [derived_event(kind, namespace, run, payload, event_time=moment, event_id=f"{base_id}.{index}",
                            producer=envelope.get("producer"))
              for index, (kind, namespace, run, payload) in enumerate(derived)]
    # What a dataset's facets describe (its column lineage, its schema) loses only itself when the
    # raw format refuses it (too many fields, a field named twice, a path too long): the run, its
    # accesses and the rest stand, and the run carries a warning naming what was skipped.
    # Each item: what it describes, then the payloads that may stand for it, the preferred last.
    described: list[tuple[str, list[tuple[str, dict[str, Any]]]]] = []
    for dataset in event.get("outputs") or []:
        operations = _column_lineage_operations(dataset, namespaces)
        if operations is not None:
            described.append(("field_operations", [(f"column lineage of {_dataset_label(dataset)}", operations)]))
    # one observed schema per dataset: a dataset the run reads and writes has the one it was written
    # with (two at one time would be applied in the order of their ids, as text: ".10" before ".9"),
    # or the one it was read with when the raw format refuses the output's
    changes: dict[tuple[str, str, str], list[tuple[str, dict[str, Any]]]] = {}
    for dataset in [*(event.get("inputs") or []), *(event.get("outputs") or [])]:
        change = schema_change(dataset, namespaces)
        if change is not None:
            key = _dataset_key(dataset, namespaces)
            changes[key] = [*changes.pop(key, []), (f"schema of {_dataset_label(dataset)}", change)]
    described += [("metadata_change", candidates) for candidates in changes.values()]
    warnings: list[str] = []
    for kind, candidates in described:
        for what, payload in reversed(candidates):
            try:
                events.append(derived_event(kind, namespace, run, payload, event_time=moment,
                                            event_id=f"{base_id}.{len(events)}", producer=envelope.get("producer")))
                break
            except InvalidEventError as exc:
                warnings.append(f"{what} skipped: {str(exc)[:200]}")
    return events + _kept_events(event, envelope, run, namespaces, first_index=len(events), warnings=warnings)


def _dataset_label(dataset: Mapping[str, Any]) -> str:
    """A dataset as a warning names it: its OpenLineage name, cut."""
    return f"dataset {str(dataset.get('name'))[:80]}"


def _declared_job(event: dict[str, Any], envelope: Mapping[str, Any], namespaces: NamespaceMap
                  ) -> list[dict[str, Any]]:
    """A JobEvent's events, without a run: declared lineage. Each input is a declared read and
    each output a declared write of the job's program (a ``dataset_access`` naming the program as
    ``job``, no run); a dataset carrying facets is declared with them, as a DatasetEvent's is; the
    declaration itself is a ``run_facets`` naming the program as ``job``, marked ``declaration``
    and holding the job's facets (its ``jobType`` gives the program's job type): the compaction
    keeps the program's latest declaration, so a JobEvent of no dataset ends what it declared."""
    try:
        program = job_program(event["job"]["namespace"], event["job"]["name"], namespaces)
    except InvalidEntityError as exc:
        raise InvalidEventError(f"OpenLineage event: {exc}") from exc
    moment = event_time(event)
    events: list[dict[str, Any]] = []
    for side, access in (("inputs", "read"), ("outputs", "write")):
        for dataset in event.get(side) or []:
            events.append(derived_event(
                "dataset_access", envelope["namespace"], {}, {"dataset": _dataset_ref(dataset, namespaces),
                                                              "access": access},
                event_time=moment, event_id=f"{envelope['event_id']}.{len(events)}", producer=envelope.get("producer"),
                job=program.job()))
    written = {_dataset_key(dataset, namespaces) for dataset in event.get("outputs") or []
               if schema_change(dataset, namespaces) is not None}
    inputs = [(dataset, _dataset_key(dataset, namespaces) not in written) for dataset in event.get("inputs") or []]
    for dataset, with_schema in [*inputs, *((dataset, True) for dataset in event.get("outputs") or [])]:
        if dataset.get("facets") or dataset.get("inputFacets") or dataset.get("outputFacets"):
            events += _declared_dataset(dataset, event, envelope, namespaces, first_index=len(events),
                                        with_schema=with_schema)
    # the declaration itself, with the job's facets (its jobType: the program's job type): what the
    # program declared before and does not declare here ends, all of it for a job of no dataset
    kept = kept_facets(event["job"], frozenset(), "job")
    for payload in ({"declaration": True, "job": kept.facets}, {"declaration": True, "job": {}}):
        try:
            events.append(derived_event("run_facets", envelope["namespace"], {}, payload,
                                        event_time=moment, event_id=f"{envelope['event_id']}.{len(events)}",
                                        producer=envelope.get("producer"), job=program.job()))
            break
        except InvalidEventError:
            pass  # facets the raw format refuses leave the declaration standing, as a dataset's do
    return events


def _dataset_key(dataset: Mapping[str, Any], namespaces: NamespaceMap) -> tuple[str, str, str]:
    ref = _dataset_ref(dataset, namespaces)
    return ref["namespace"], ref.get("type", "dataset"), ref["name"]


def _declared_dataset(dataset: dict[str, Any], event: dict[str, Any], envelope: Mapping[str, Any],
                      namespaces: NamespaceMap, first_index: int = 0, with_schema: bool = True
                      ) -> list[dict[str, Any]]:
    """A DatasetEvent's events (or a JobEvent's dataset's), without a run: the dataset with its
    facets and aliases (which create it when new) and its ``schema`` facet as an observed schema
    (a new version when it differs). A facet too large to keep is dropped, and facets the raw
    format refuses as a whole leave the dataset and its schema standing (no run carries a warning
    about either); a schema it refuses (a field named twice) refuses the event with the reason, for
    no run is there to carry a warning (a RunEvent skips it and warns on its run).
    ``with_schema`` false: an input the job also writes, whose schema is the output's."""
    ref = _dataset_ref(dataset, namespaces)
    kept = kept_facets(dataset, MAPPED_DATASET_FACETS, f"dataset {ref['name'][:80]}")
    declared = {"dataset": ref, "facets": kept.facets, "aliases": aliases(dataset, namespaces)}
    payloads: list[tuple[str, dict[str, Any]]] = [("dataset_facets", {k: v for k, v in declared.items() if v})]
    change = schema_change(dataset, namespaces) if with_schema else None
    if change is not None:
        payloads.append(("metadata_change", change))
    events = []
    for index, (kind, payload) in enumerate(payloads, start=first_index):
        def build(body: dict[str, Any], index: int = index, kind: str = kind) -> dict[str, Any]:
            return derived_event(kind, envelope["namespace"], {}, body, event_time=event_time(event),
                                 event_id=f"{envelope['event_id']}.{index}", producer=envelope.get("producer"))
        try:
            events.append(build(payload))
        except InvalidEventError:  # facets the raw format refuses (too many, a bad alias): the rest stands
            if kind != "dataset_facets":
                raise  # a schema it refuses refuses the event, with the reason (no run to warn on)
            events.append(build({"dataset": ref}))
    return events


def run_id_of(event: Mapping[str, Any]) -> str:
    """The run id a RunEvent names: its ``runId``, or the id a warehouse export kept beside the
    UUID it gave (``lineageWarehouse_run``)."""
    return warehouse_run_ids(event).get("runId") or str(event["run"]["runId"])


def kept_verbatim(envelope: Mapping[str, Any], namespaces: NamespaceMap) -> dict[str, Any] | None:
    """A RunEvent as it came, for the warehouse to give back (the export); None for a DatasetEvent
    or JobEvent. It is the checked envelope itself, of kind ``openlineage``, named by its run,
    whose payload holds the event and the warehouse namespaces it touches (an export gives it
    only to a caller who may read them all), the event as a skeleton and its parts
    (``lineage.openlineage.kept_parts``: what every event repeats is stored once). No raw-format
    event (the format's ``openlineage`` kind has no run): only the compaction's staging reads it,
    beside what ``expand`` derives, keyed by the envelope's content id, so the same event is kept
    once."""
    event = envelope["payload"]
    if event_shape(event) != "run":
        return None
    namespaces = PinnedNamespaceMap.pinned(envelope.get("namespaces"), namespaces)
    try:
        run = job_program(event["job"]["namespace"], event["job"]["name"], namespaces).run(run_id_of(event))
    except InvalidEntityError as exc:
        raise InvalidEventError(f"OpenLineage event: {exc}") from exc
    skeleton, parts = kept_parts.split(envelope["namespace"], event, run_id=run["run_id"],
                                       event_time=parse_time(envelope["event_time"]))
    return {**envelope, "run": run,
            "payload": {"event": skeleton, "parts": parts, "namespaces": sorted(touched_namespaces(envelope))}}


def _kept_events(event: dict[str, Any], envelope: Mapping[str, Any], run: dict[str, str],
                 namespaces: NamespaceMap, first_index: int, warnings: Iterable[str] = ()) -> list[dict[str, Any]]:
    """The events keeping what the warehouse stores beside runs and accesses: the run's parent
    (``run_parent``), each dataset's facets and aliases (``dataset_facets``), and the run's and
    job's facets with the warnings about this event (``run_facets``), in that order. Nothing here
    rejects the event: what does not fit is skipped, with a warning."""
    payloads: list[tuple[str, dict[str, Any]]] = []
    links, linked_warnings = parent_links(event, namespaces)
    warnings = [*warnings, *linked_warnings]
    if links:
        payloads.append(("run_parent", links))
    datasets: dict[str, dict[str, Any]] = {}
    for dataset in [*(event.get("inputs") or []), *(event.get("outputs") or [])]:
        ref = _dataset_ref(dataset, namespaces)
        kept = kept_facets(dataset, MAPPED_DATASET_FACETS, f"dataset {ref['name'][:80]}")
        warnings.extend(kept.warnings)
        entry = datasets.setdefault(ref["name"], {"dataset": ref, "facets": {}, "aliases": [],
                                                  "failed_assertions": []})
        entry["facets"].update(kept.facets)
        entry["aliases"] += [alias for alias in aliases(dataset, namespaces) if alias not in entry["aliases"]]
        checks = entry["failed_assertions"]
        entry["failed_assertions"] = [*checks, *(item for item in failed_assertions(dataset) if item not in checks)][
            :MAX_ASSERTIONS]
    payloads += [("dataset_facets", {key: value for key, value in entry.items() if value})
                 for entry in datasets.values() if entry["facets"] or entry["aliases"] or entry["failed_assertions"]]
    facets: dict[str, Any] = {}
    for side, owner, skip in (("run", event.get("run"), MAPPED_RUN_FACETS), ("job", event.get("job"), frozenset())):
        kept = kept_facets(owner, skip, side)
        warnings.extend(kept.warnings)
        if kept.facets:
            facets[side] = kept.facets
    kept_events: list[dict[str, Any]] = []

    def build(kind: str, payload: dict[str, Any]) -> dict[str, Any] | str:
        """The next kept event, or why the raw format refuses it."""
        try:
            return derived_event(kind, envelope["namespace"], run, payload, event_time=event_time(event),
                                 event_id=f"{envelope['event_id']}.{first_index + len(kept_events)}",
                                 producer=envelope.get("producer"))
        except InvalidEventError as exc:
            return str(exc)[:200]

    for kind, payload in payloads:
        built = build(kind, payload)
        if isinstance(built, str) and kind == "run_parent" and len(payload) > 1:
            built = _links_apart(payload, build, warnings)
        if isinstance(built, str):
            warnings.append(f"{kind} skipped: {built}")
        else:
            kept_events.append(built)
    warnings = [*envelope_warnings(event), *warnings]
    if facets or warnings:
        built = build("run_facets", {**facets, **({"warnings": list(dict.fromkeys(warnings))[:_MAX_WARNINGS]}
                                                  if warnings else {})})
        if isinstance(built, str):  # the facets do not fit the format: keep the warnings
            built = build("run_facets", {"warnings": [*dict.fromkeys(warnings), f"facets skipped: {built}"][
                -_MAX_WARNINGS:]})
        if not isinstance(built, str):
            kept_events.append(built)
    return kept_events


_LINK_LABELS = {"parent": "parent facet's parent run", "root": "parent facet's root"}


def _links_apart(payload: dict[str, Any], build: Callable[[str, dict[str, Any]], dict[str, Any] | str],
                 warnings: list[str]) -> dict[str, Any] | str:
    """A ``run_parent`` the raw format refuses whole, built from the links it holds one by one:
    the event keeping those the format takes, a warning naming each it refuses (so a parent run
    id the format refuses keeps the root, and the reverse). Every link refused: the first reason."""
    alone = {relation: build("run_parent", {relation: linked}) for relation, linked in payload.items()}
    refused = {relation: reason for relation, reason in alone.items() if isinstance(reason, str)}
    if len(refused) == len(alone):
        return next(iter(refused.values()))
    warnings.extend(f"{_LINK_LABELS[relation]} skipped: {reason}" for relation, reason in refused.items())
    return build("run_parent", {relation: payload[relation] for relation in alone if relation not in refused})


def _identity(dataset: Mapping[str, Any]) -> DatasetIdentity:
    try:
        return dataset_identity(dataset["namespace"], dataset["name"])
    except InvalidEntityError as exc:
        raise InvalidEventError(f"OpenLineage event: {exc}") from exc


def _dataset_ref(dataset: Mapping[str, Any], namespaces: NamespaceMap) -> dict[str, str]:
    """A dataset of an event as our events name it: warehouse namespace + rendered identity."""
    return namespaces.dataset_ref(_identity(dataset))


def _facet(dataset: Mapping[str, Any], name: str) -> Mapping[str, Any] | None:
    facets = dataset.get("facets")
    facet = facets.get(name) if isinstance(facets, Mapping) else None
    return facet if isinstance(facet, Mapping) else None


def schema_change(dataset: Mapping[str, Any], namespaces: NamespaceMap) -> dict[str, Any] | None:
    """An ``observe_schema`` change for a dataset with a ``schema`` facet (None without a usable
    one): the facet reports what the dataset looks like, so it is not held to the compatibility
    rule declared schemas follow."""
    facet = _facet(dataset, "schema")
    if not facet:
        return None
    # remembered by what determines it (a task's START, RUNNING and COMPLETE repeat the facet); an
    # event's fields come from JSON (lists, never tuples, which orjson writes alike)
    key: tuple[Any, ...] | None = None
    if (isinstance(dataset.get("namespace"), str) and isinstance(dataset.get("name"), str)
            and type(facet.get("fields")) is list):
        try:
            key = (namespaces, dataset["namespace"], dataset["name"], orjson.dumps(facet["fields"]))
        except TypeError:  # not JSON: derived as always
            key = None
    remembered = _OBSERVED_SCHEMAS.get(key) if key is not None else None
    if remembered is not None:
        return orjson.loads(remembered) if remembered else None  # a fresh copy; b"" for no usable field
    fields = list(_schema_fields(facet.get("fields"), ""))
    change = None
    if fields:
        ref = _dataset_ref(dataset, namespaces)
        change = {"entity": [["namespace", ref["namespace"]], [ref.get("type", "dataset"), ref["name"]]],
                  "operation": "observe_schema", "schema": {"fields": fields}}
    if key is not None:
        derived = orjson.dumps(change) if change else b""
        _OBSERVED_SCHEMAS.put(key, derived, len(key[3]) + len(derived))
    return change


# A schema of 9,000 columns is about 1 MB of JSON, and again as the change derived from it.
_OBSERVED_SCHEMAS = BoundedMemo(entries=4096, max_bytes=32 * 1024 * 1024, item_bytes=512 * 1024)


def _schema_fields(fields: Any, prefix: str) -> Iterator[dict[str, Any]]:
    """A schema facet's fields as ``{"name", "type"}`` (and ``nullable`` when the field says it, as our
    export does), nested fields as ``parent/child`` paths."""
    if not isinstance(fields, list):
        return
    for field in fields:
        if not isinstance(field, Mapping) or not isinstance(field.get("name"), str) or not field["name"]:
            continue
        path = prefix + field["name"]
        type_name = field.get("type")
        found = {"name": path, "type": type_name[:_MAX_TYPE_LENGTH] if isinstance(type_name, str) and type_name
                 else "unknown"}
        if isinstance(field.get("nullable"), bool):  # our export's word (the spec has none): said, it is kept;
            found["nullable"] = field["nullable"]  # unsaid, the current schema's holds (``unstated_nullability``)
        yield found
        yield from _schema_fields(field.get("fields"), path + "/")


# Keys and records together: the memo never holds more than this (200 distinct 1 MB outputs once
# held half a gigabyte); a larger output than _DERIVED_OUTPUT_BYTES is derived each time.
_DERIVED_OPERATIONS = BoundedMemo(entries=1 << 20, max_bytes=32 * 1024 * 1024)
_DERIVED_OUTPUT_BYTES = 256 * 1024


def _column_lineage_operations(output: Mapping[str, Any], namespaces: NamespaceMap) -> dict[str, Any] | None:
    """``field_operations(output)``, derived once per distinct output (a task's START, RUNNING and
    COMPLETE usually repeat it): the record is kept as JSON and a fresh copy returned each time.
    The memo (``_DERIVED_OPERATIONS``) is bounded by bytes."""
    if _facet(output, "columnLineage") is None:
        return None
    try:
        key = (namespaces, orjson.dumps(output, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS))
    except TypeError:  # e.g. an integer beyond 64 bits in some facet: derive it without the memo
        return field_operations(output, namespaces)
    if len(key[1]) > _DERIVED_OUTPUT_BYTES:
        return field_operations(output, namespaces)
    record = _DERIVED_OPERATIONS.get(key)
    if record is None:
        record = orjson.dumps(field_operations(output, namespaces))
        _DERIVED_OPERATIONS.put(key, record, len(key[1]) + len(record))
    derived: dict[str, Any] | None = orjson.loads(record)
    return derived


def memo_bytes() -> int:
    """What the column-lineage memo holds now, in bytes (keys and records)."""
    return _DERIVED_OPERATIONS.held_bytes()


def field_operations(output: Mapping[str, Any], namespaces: NamespaceMap) -> dict[str, Any] | None:
    """The field-operations record a ``columnLineage`` facet on ``output`` stands for (None without one).

    Sources listed only in the facet (not among the event's inputs) are read too. Dataset-level
    dependencies (the facet's ``dataset`` list) are inputs of every output field, as INDIRECT.
    Each output field's operation is named for its inputs' transformations.
    """
    facet = _facet(output, "columnLineage")
    if facet is None or not isinstance(facet.get("fields"), Mapping):
        return None
    reads: dict[tuple[str, str], dict[str, Any]] = {}  # source identity -> its read operation

    def read_of(item: Mapping[str, Any]) -> dict[str, Any] | None:
        """The read operation of ``item``'s source dataset (None for a malformed source)."""
        try:
            identity = _identity(item)
        except InvalidEventError:
            return None
        key = (identity.namespace, identity.name)
        if key not in reads:
            reads[key] = {"id": f"read:{len(reads) + 1}", "type": "read", "name": "read",
                          "description": f"read {identity.render()}",
                          "inputs": [{"source": _dataset_ref(item, namespaces)}], "outputs": []}
        return reads[key]

    def inputs_of(items: Any, default: dict[str, Any] | None) -> list[dict[str, Any]]:
        found = []
        for item in items if isinstance(items, list) else []:
            field = item.get("field") if isinstance(item, Mapping) else None
            read = read_of(item) if isinstance(field, str) and field else None
            if read is None:
                continue
            if field not in read["outputs"]:
                read["outputs"].append(field)
            for transformation in _transformations(item.get("transformations"), default):
                found.append({"field": field, "origin": read["id"], **transformation})
        return found

    dataset_level = inputs_of(facet.get("dataset"), {"type": "INDIRECT"})
    transforms = []
    for name, spec in sorted(facet["fields"].items()):
        if not isinstance(spec, Mapping) or not name:
            continue
        inputs = inputs_of(spec.get("inputFields"), _old_shape(spec)) + dataset_level
        if not inputs:
            continue
        description = spec.get("transformationDescription") or next(
            (item["transformation"].get("description") for item in inputs
             if item.get("transformation", {}).get("description")), "")
        operation_name = _operation_name(inputs)
        transforms.append({"id": f"field:{name}", "type": "transform", "name": operation_name,
                           "description": str(description)[:4096], "inputs": _unique(inputs), "outputs": [name]})
    if not transforms:
        return None
    write = {"id": "write", "type": "write", "name": "write",
             "inputs": [{"field": op["outputs"][0], "origin": op["id"]} for op in transforms]}
    return {"destination": _dataset_ref(output, namespaces), "operations": [*reads.values(), *transforms, write]}


def _old_shape(spec: Mapping[str, Any]) -> dict[str, Any] | None:
    """The transformation an old-shape facet (``transformationType``) gives each input."""
    kind = spec.get("transformationType")
    if kind == "IDENTITY":
        return {"type": "DIRECT", "subtype": "IDENTITY"}
    if kind == "MASKED":
        return {"type": "DIRECT", "subtype": "TRANSFORMATION", "masking": True}
    return None


def _transformations(raw: Any, default: dict[str, Any] | None) -> list[dict[str, Any]]:
    """``[{"transformation": {...}}]`` per transformation of an input (``[{}]`` when untyped)."""
    found = []
    for item in raw if isinstance(raw, list) else []:
        if not isinstance(item, Mapping) or item.get("type") not in ("DIRECT", "INDIRECT"):
            continue
        transformation: dict[str, Any] = {"type": item["type"]}
        if isinstance(item.get("subtype"), str) and item["subtype"] in _SUBTYPES:  # a list or object: dropped
            transformation["subtype"] = item["subtype"]
        if isinstance(item.get("description"), str) and item["description"]:
            transformation["description"] = item["description"][:4096]
        if isinstance(item.get("masking"), bool):
            transformation["masking"] = item["masking"]
        found.append({"transformation": transformation})
    if found:
        return found
    return [{"transformation": default}] if default else [{}]


def _operation_name(inputs: list[dict[str, Any]]) -> str:
    """Named for what the DIRECT inputs say: identity, aggregation or transformation."""
    subtypes = {item.get("transformation", {}).get("subtype") for item in inputs
                if item.get("transformation", {}).get("type") == "DIRECT"}
    if subtypes == {"IDENTITY"}:
        return "identity"
    if "AGGREGATION" in subtypes:
        return "aggregation"
    return "transformation"


def _unique(inputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: set[str] = set()
    kept = []
    for item in inputs:
        key = repr(sorted(item.items(), key=lambda pair: pair[0]))
        if key not in seen:
            seen.add(key)
            kept.append(item)
    return kept


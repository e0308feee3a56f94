"""Offline validation of OpenLineage events against the spec 2-0-2 JSON Schema and its facet schemas.

The schemas are the official files in ``tests/fixtures/openlineage/spec`` (their source is in its
README.md). ``validate_event`` checks an event against the core ``OpenLineage.json`` (a RunEvent,
DatasetEvent or JobEvent), then checks each facet whose key a facet schema declares against that schema.

Which key a facet file declares is read from the file's top-level ``properties`` (for example
``"schema": {"$ref": "#/$defs/SchemaDatasetFacet"}``). Where a facet goes (run, job, dataset, input or
output facets) is read from the core definition its ``$defs`` entry extends (``RunFacet``, ``JobFacet``,
``DatasetFacet``, ``InputDatasetFacet``, ``OutputDatasetFacet``). So ``documentation`` under ``job.facets``
is checked as a DocumentationJobFacet and under a dataset's ``facets`` as a DocumentationDatasetFacet.
Facets with other keys (custom facets) are checked only by the core schema, as base facets. A facet
marked ``"_deleted": true`` is only checked by the core schema.

Every ``$ref`` resolves through a ``referencing.Registry`` that holds each file by its ``$id``, so no
network access happens. Formats ``uuid`` and ``date-time`` (RFC 3339, with a time zone) are checked.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker, ValidationError
from jsonschema.exceptions import best_match
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

SPEC_DIR = Path(__file__).resolve().parent / "fixtures" / "openlineage" / "spec"
CORE_PATH = SPEC_DIR / "OpenLineage.json"
EVENT_KINDS = ("RunEvent", "DatasetEvent", "JobEvent")
FACET_KINDS = ("RunFacet", "JobFacet", "DatasetFacet", "InputDatasetFacet", "OutputDatasetFacet")
Schema = Mapping[str, Any]
FacetKey = tuple[str, str]  # (kind, facet key or definition name), e.g. ("DatasetFacet", "schema")

FORMAT_CHECKER = FormatChecker(formats=("uuid",))
RFC3339 = re.compile(r"(\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:\d{2})")


def is_date_time(value: object) -> bool:
    """RFC 3339 date-time: the shape by regex, the ranges (month, day, hour...) by ``fromisoformat``."""
    if not isinstance(value, str):
        return True
    match = RFC3339.fullmatch(value)
    if not match:
        return False
    main, fraction, zone = match.groups()
    micros = f".{fraction[:6]}" if fraction else ""  # fromisoformat keeps microseconds; Java sends nanoseconds
    datetime.fromisoformat(f"{main.upper()}{micros}{'+00:00' if zone in 'Zz' else zone}")
    return True


FORMAT_CHECKER.checks("date-time", raises=ValueError)(is_date_time)  # not a decorator: it is untyped


def load(path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(path.read_text("utf-8"))
    return loaded


@cache
def core_schema() -> dict[str, Any]:
    return load(CORE_PATH)


@cache
def facet_schemas() -> tuple[dict[str, Any], ...]:
    return tuple(load(path) for path in sorted((SPEC_DIR / "facets").glob("*.json")))


@cache
def registry() -> Registry[Any]:
    documents = (core_schema(), *facet_schemas())
    resources = [(doc["$id"], Resource.from_contents(doc, default_specification=DRAFT202012)) for doc in documents]
    return Registry().with_resources(resources)


def validator(schema: Schema) -> Draft202012Validator:
    return Draft202012Validator(schema, registry=registry(), format_checker=FORMAT_CHECKER)


def base_kind(definition: Schema) -> str | None:
    """The core facet kind (RunFacet, ...) a facet definition extends through its ``allOf``, if any."""
    core_id = core_schema()["$id"]
    for part in definition.get("allOf", []):
        for kind in FACET_KINDS:
            if part.get("$ref") == f"{core_id}#/$defs/{kind}":
                return kind
    return None


def facet_definitions(schema: Schema, document: Schema, seen: frozenset[str] = frozenset()) -> Iterator[FacetKey]:
    """(kind, definition name) of each facet definition a property's schema leads to, following the
    file's local ``$ref``s and ``anyOf``/``oneOf`` branches (LineageFacet, BaseSubsetDatasetFacet)."""
    ref = schema.get("$ref", "")
    if ref.startswith("#/$defs/") and ref not in seen:
        name = ref.removeprefix("#/$defs/")
        definition = document["$defs"][name]
        kind = base_kind(definition)
        if kind:
            yield kind, name
        else:
            yield from facet_definitions(definition, document, seen | {ref})
    for branch in (*schema.get("anyOf", []), *schema.get("oneOf", [])):
        yield from facet_definitions(branch, document, seen)


@cache
def facet_refs() -> dict[FacetKey, tuple[str, ...]]:
    """(kind, key) -> the absolute ``$ref``s of the facet definitions declared for that key and kind."""
    refs: dict[FacetKey, tuple[str, ...]] = {}
    for document in facet_schemas():
        for key, schema in document.get("properties", {}).items():
            for kind, name in facet_definitions(schema, document):
                refs[kind, key] = (*refs.get((kind, key), ()), f"{document['$id']}#/$defs/{name}")
    return refs


@cache
def facet_validator(kind: str, key: str) -> Draft202012Validator | None:
    refs = facet_refs().get((kind, key))
    if not refs:
        return None
    return validator({"$ref": refs[0]} if len(refs) == 1 else {"anyOf": [{"$ref": ref} for ref in refs]})


@cache
def core_validator() -> Draft202012Validator:
    return validator(core_schema())


@cache
def event_validator(kind: str) -> Draft202012Validator:
    return validator({"$ref": f"{core_schema()['$id']}#/$defs/{kind}"})


def located(error: ValidationError, prefix: Iterable[str | int]) -> ValidationError:
    """The error with its path (and message) starting at the event's root. The prefix goes on the
    outermost error: ``best_match`` may return an ``anyOf``/``oneOf`` branch's error, whose
    ``absolute_path`` starts with its parent's."""
    outermost = error
    while outermost.parent is not None:
        outermost = outermost.parent
    outermost.path.extendleft(reversed(list(prefix)))
    error.message = f"{error.json_path}: {error.message}"
    return error


def facets_of(holder: object, key: str) -> Mapping[str, Any]:
    facets = holder.get(key) if isinstance(holder, Mapping) else None
    return facets if isinstance(facets, Mapping) else {}


def facet_groups(event: Mapping[str, Any]) -> Iterator[tuple[tuple[str | int, ...], str, Mapping[str, Any]]]:
    """(path, kind, facets) of every facets object in an event that passed the core schema."""
    yield ("run", "facets"), "RunFacet", facets_of(event.get("run"), "facets")
    yield ("job", "facets"), "JobFacet", facets_of(event.get("job"), "facets")
    yield ("dataset", "facets"), "DatasetFacet", facets_of(event.get("dataset"), "facets")
    for side, own, own_kind in (("inputs", "inputFacets", "InputDatasetFacet"),
                                ("outputs", "outputFacets", "OutputDatasetFacet")):
        datasets = event.get(side)
        for index, dataset in enumerate(datasets if isinstance(datasets, list) else []):
            yield (side, index, "facets"), "DatasetFacet", facets_of(dataset, "facets")
            yield (side, index, own), own_kind, facets_of(dataset, own)


def check_facets(event: Mapping[str, Any]) -> None:
    for path, kind, facets in facet_groups(event):
        for key, facet in facets.items():
            checker = facet_validator(kind, key)
            if checker is None or not isinstance(facet, Mapping) or facet.get("_deleted") is True:
                continue
            error = best_match(checker.iter_errors(facet))
            if error is not None:
                raise located(error, (*path, key))


def intended_kind(event: Mapping[str, Any]) -> str:
    """The event definition the event means to be: the one its ``schemaURL`` names, else by its shape."""
    named = str(event.get("schemaURL", "")).rpartition("#/$defs/")[2]
    if named in EVENT_KINDS:
        return named
    return "RunEvent" if "run" in event else "DatasetEvent" if "dataset" in event else "JobEvent"


def core_error(event: Mapping[str, Any]) -> ValidationError | None:
    """The core schema's most relevant error. Errors under the root ``oneOf`` (RunEvent, DatasetEvent,
    JobEvent) are taken from the intended definition alone, for a message that names the field."""
    if core_validator().is_valid(event):
        return None
    intended = event_validator(intended_kind(event))
    return best_match(intended.iter_errors(event)) or best_match(core_validator().iter_errors(event))


def validate_event(event: dict[str, Any]) -> None:
    """Raise ``jsonschema.ValidationError`` (its message starts with the JSON path) unless ``event`` is a
    valid OpenLineage RunEvent, DatasetEvent or JobEvent whose standard facets match their schemas."""
    error = core_error(event)
    if error is not None:
        raise located(error, ())
    check_facets(event)


def validate_events(events: Iterable[dict[str, Any]]) -> None:
    """``validate_event`` on each event; the error names the event's index."""
    for index, event in enumerate(events):
        try:
            validate_event(event)
        except ValidationError as error:
            error.message = f"event {index}: {error.message}"
            raise

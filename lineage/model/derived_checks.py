"""What an event the core derives from a validated one still needs checked (the trusted
construction of ``lineage.model.events.derived_event``), without the JSON Schema validator's cost.

A derived event's structure is its builder's, but its texts and lists come from the source's
producer (names, run ids, field names, descriptions, facets), and any of them may break a rule
of the format (a run id with a space, a 2,000-character column name). ``plainly_valid`` holds
when the event's id, namespace, run, producer and payload meet every rule the schema file sets
for them (the file stays the single home of the rules: the checks are compiled from it, as
predicates that answer yes or no and build no error) and a schema change's fields make a schema
(``parse_change``: names unique and not blank). A check is never looser than the schema: a
pattern must match the whole text, an array must be a list, and a schema keyword the compiler
does not know fails loudly when the checks are compiled. When an event is not plainly valid,
its caller validates it in full, for the schema's own reason. The event's time is not checked:
``format_time`` wrote it.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

import orjson

from lineage.errors import InvalidMetadataChangeError
from lineage.ids import DATA_TYPES
from lineage.memo import BoundedMemo
from lineage.model.program_metadata import parse_change
from lineage.schemas import schema

Check = Callable[[Any], bool]
_ANNOTATIONS = {"description", "title"}


def _plain_runless(event: Mapping[str, Any]) -> bool:
    """A dataset declared without a run: its facets (no failed checks) or its observed schema; or
    a program's declared access (``job``, no run); or an OpenLineage event's envelope (its run is
    in its payload)."""
    payload = event["payload"]
    if "job" in event:  # a program's declared access, or its declaration with its job's facets (no run
        # facets, no warnings)
        return bool(event["kind"] == "dataset_access"
                    or (event["kind"] == "run_facets" and "job" in payload and set(payload) <= {"job", "declaration"}))
    if event["kind"] == "openlineage":
        return True
    if event["kind"] == "dataset_facets":
        return "failed_assertions" not in payload
    return bool(event["kind"] == "metadata_change" and payload.get("operation") == "observe_schema")


def _declares(event: Mapping[str, Any]) -> bool:
    """A run's facets marked as a declaration, which only a program's are."""
    return bool(event["kind"] == "run_facets" and isinstance(event["payload"], Mapping)
                and "declaration" in event["payload"])


def plainly_valid(event: Mapping[str, Any]) -> bool:
    """Whether the derived ``event`` is valid by the checks above (see the module's docstring)."""
    envelope, payloads = _checks()
    check = payloads.get(event["kind"])
    owner = event.get("run") or event.get("job") or {}
    return (check is not None and all(_plain_part(key, event[key], rule) for key, rule in envelope.items()
                                      if key in event)
            and (("run" in event and "job" not in event and not _declares(event))
                 or ("run" not in event and _plain_runless(event)))
            and owner.get("program_type") not in DATA_TYPES
            and _plain_payload(event["kind"], event["payload"], check))


# Payloads found plainly valid, by kind and JSON text: the expansion derives the same field-operations
# record and schema change again and again (a task's START, RUNNING and COMPLETE repeat them; hourly
# runs repeat them every hour), and checking a 20-column record costs more than rendering it. The
# checks are pure functions of this key, so a hit is the same answer. The small payloads of the
# other kinds (an access, a parent link, a dataset's facets) repeat as often and are remembered
# apart, so that their number does not push the large records out.
_REMEMBERED_KINDS = frozenset({"field_operations", "metadata_change"})
_PLAIN_PAYLOADS = BoundedMemo(entries=4096, max_bytes=32 * 1024 * 1024, item_bytes=256 * 1024)
_SMALL_PAYLOAD_BYTES = 2048
_PLAIN_SMALL = BoundedMemo(entries=16384, max_bytes=16 * 1024 * 1024)


def _plain_payload(kind: str, payload: Any, check: Check) -> bool:
    try:
        text = orjson.dumps(payload)
    except TypeError:  # not JSON: the full validation says why
        return False
    if kind in _REMEMBERED_KINDS:
        return _remembered(_PLAIN_PAYLOADS, (kind, text), len(text), payload, check)
    if len(text) <= _SMALL_PAYLOAD_BYTES:
        return _remembered(_PLAIN_SMALL, (kind, text), len(text), payload, check)
    return check(payload)


def _remembered(memo: BoundedMemo, key: Any, size: int, value: Any, check: Check) -> bool:
    """``check(value)``, remembered under ``key`` (what determines the value) when it holds."""
    if key in memo:
        return True
    if not check(value):
        return False
    memo.put(key, True, size)
    return True


# The envelope's parts that repeat across the events one source event derives (its namespace, run
# or program, producer), found valid, by value: a run's check walks five patterns. A derived
# event's own id differs every time and is checked each time.
_PLAIN_PARTS = BoundedMemo(entries=4096, max_bytes=4 * 1024 * 1024)


def _plain_part(key: str, value: Any, rule: Check) -> bool:
    if key == "event_id" or not isinstance(value, (str, dict)):  # an id differs each time; only texts
        return rule(value)  # and objects of texts are remembered (True == 1 as a key)
    memo_key = (key, tuple(value.items()) if isinstance(value, dict) else value)
    try:
        hash(memo_key)
    except TypeError:  # a list or dict inside: not remembered (and not valid: the full check says why)
        return rule(value)
    return _remembered(_PLAIN_PARTS, memo_key, len(repr(memo_key)), value, rule)


@cache
def _checks() -> tuple[dict[str, Check], dict[str, Check]]:
    """The checks of the envelope's varying parts (id, namespace, run, producer) and of each
    kind's payload, compiled from the schema; a schema change also passes ``parse_change``. (An
    ``openlineage`` envelope is built by ``lineage.openlineage.mapping.wrap`` around an event
    ``check_openlineage`` accepted; its payload rule is the schema's all the same.)"""
    root = schema()
    envelope = {key: _compiled(root["properties"][key]) for key in ("event_id", "namespace", "run", "job", "producer")}
    payloads = {}
    for branch in root["allOf"]:
        kind = branch["if"].get("properties", {}).get("kind", {}).get("const")
        payload = branch["then"].get("properties", {}).get("payload", {})
        if kind is not None and "$ref" in payload:  # the rules on run-less events are ``_plain_runless``'s
            payloads[kind] = _compiled(payload)
    shape = payloads["metadata_change"]
    payloads["metadata_change"] = lambda payload: shape(payload) and _makes_a_change(payload)
    return envelope, payloads


def _makes_a_change(payload: Mapping[str, Any]) -> bool:
    try:
        parse_change(payload)
    except InvalidMetadataChangeError:
        return False
    return True


def _compiled(spec: Mapping[str, Any]) -> Check:
    """A yes/no check of the values ``spec`` accepts (no looser than the schema's validator)."""
    while "$ref" in spec:
        spec = schema()["definitions"][spec["$ref"].rsplit("/", 1)[1]]
    if not set(spec) - _ANNOTATIONS:  # the empty schema: anything
        return lambda _: True
    kind = spec.get("type")
    if isinstance(kind, list):  # any of several types, each with the spec's other rules
        alternatives: list[Check] = [_is_null if each == "null" else _compiled({**spec, "type": each})
                                     for each in kind]
        return lambda value: any(check(value) for check in alternatives)
    if "enum" in spec and set(spec) - _ANNOTATIONS <= {"enum", "type"}:
        allowed = frozenset(spec["enum"])
        if not all(isinstance(value, str) for value in allowed):
            raise ValueError(f"only enums of texts are compiled, got {spec['enum']}")
        return lambda value: isinstance(value, str) and value in allowed
    if kind == "string":
        return _text(spec)
    if kind == "boolean" and set(spec) - _ANNOTATIONS == {"type"}:
        return lambda value: isinstance(value, bool)
    if kind == "array":
        return _array(spec)
    if kind == "object":
        return _object(spec)
    raise ValueError(f"schema rule not compiled into a check: {dict(spec)}")


def _is_null(value: Any) -> bool:
    return value is None


def _text(spec: Mapping[str, Any]) -> Check:
    _only(spec, {"type", "minLength", "maxLength", "pattern"})
    low, high = spec.get("minLength", 0), spec.get("maxLength", sys.maxsize)
    whole = re.compile(spec["pattern"]).fullmatch if "pattern" in spec else None
    if whole is None:
        return lambda value: isinstance(value, str) and low <= len(value) <= high
    return lambda value: isinstance(value, str) and low <= len(value) <= high and whole(value) is not None


def _array(spec: Mapping[str, Any]) -> Check:
    _only(spec, {"type", "minItems", "maxItems", "items"})
    low, high = spec.get("minItems", 0), spec.get("maxItems", sys.maxsize)
    items = spec.get("items", {})
    if isinstance(items, list):  # a tuple: a rule per position
        positions = [_compiled(item) for item in items]
        return lambda value: (isinstance(value, list) and low <= len(value) <= high
                              and all(check(item) for check, item in zip(positions, value, strict=False)))
    item_check = _compiled(items)
    return lambda value: (isinstance(value, list) and low <= len(value) <= high
                          and all(item_check(item) for item in value))


def _object(spec: Mapping[str, Any]) -> Check:
    _only(spec, {"type", "properties", "required", "additionalProperties", "minProperties", "maxProperties",
                 "propertyNames", "oneOf"})
    members = {key: _compiled(member) for key, member in spec.get("properties", {}).items()}
    required = frozenset(spec.get("required", ()))
    extra = _extra(spec.get("additionalProperties", True))
    least, most = spec.get("minProperties", 0), spec.get("maxProperties", sys.maxsize)
    name = _compiled({"type": "string", **spec["propertyNames"]}) if "propertyNames" in spec else None
    one_of = _one_of_keys(spec.get("oneOf"))

    def closed(value: Any) -> bool:  # the common shape, checked in one pass
        if not isinstance(value, dict) or not value.keys() >= required:
            return False
        for key, item in value.items():
            member = members.get(key)
            if member is None or not member(item):
                return False
        return True

    def check(value: Any) -> bool:
        if not isinstance(value, dict) or not least <= len(value) <= most or not value.keys() >= required:
            return False
        if one_of and sum(key in value for key in one_of) != 1:
            return False
        for key, item in value.items():
            member = members.get(key, extra)
            if member is None or not member(item) or (name is not None and not name(key)):
                return False
        return True

    if extra is None and not one_of and name is None and least == 0 and most == sys.maxsize:
        return closed
    return check


def _extra(rule: bool | Mapping[str, Any]) -> Check | None:
    """The check of an object's keys beyond its properties (None: there must be none)."""
    if rule is False:
        return None
    if rule is True:
        return lambda _: True
    return _compiled(rule)


def _one_of_keys(branches: Any) -> tuple[str, ...]:
    """A ``oneOf`` of branches each requiring one key, as those keys (exactly one must be present)."""
    if branches is None:
        return ()
    if any(set(branch) != {"required"} or len(branch["required"]) != 1 for branch in branches):
        raise ValueError(f"only a oneOf of single required keys is compiled, got {branches}")
    return tuple(branch["required"][0] for branch in branches)


def _only(spec: Mapping[str, Any], keywords: set[str]) -> None:
    unknown = set(spec) - keywords - _ANNOTATIONS
    if unknown:
        raise ValueError(f"schema keywords not compiled into a check: {sorted(unknown)} in {dict(spec)}")

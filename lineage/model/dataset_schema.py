"""A dataset's schema as programs report it: named, typed fields (R13 of the *Metadata and Data
Discovery* design; the *Datasets 3.5.0* design), and the rule an update must follow
("Updatable Datasets" of the *Datasets 3.5.0* design).

The schema is kept as the dataset's SYSTEM property ``schema`` (canonical JSON), and its field
names are what ``field:`` search terms match. An update is compatible when every reader of the
old schema can read data written with the new one: fields may be added when optional, types
may widen (int -> long, float -> double), a required field may become optional. Removing a
field, narrowing or changing a type and making an optional field required are not. The rule is
for *declared* schemas; an *observed* one (``SchemaSource``) is kept whatever it changes, and
each version records what it changed (``schema_changes``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import orjson

from lineage.errors import InvalidSchemaError

SCHEMA_PROPERTY = "schema"
MAX_FIELDS = 10_000
MAX_FIELD_NAME_LENGTH = 1024
MAX_TYPE_LENGTH = 256


@dataclass(frozen=True)
class SchemaField:
    name: str
    type: str
    nullable: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "type": self.type, "nullable": self.nullable}


@dataclass(frozen=True)
class DatasetSchema:
    fields: tuple[SchemaField, ...]

    def to_json(self) -> str:
        """The canonical text stored as the ``schema`` property."""
        return orjson.dumps({"fields": [f.to_dict() for f in self.fields]}).decode("utf-8")


FieldSpec = SchemaField | tuple[str, str] | tuple[str, str, bool] | Mapping[str, Any]


def schema(fields: Iterable[FieldSpec]) -> DatasetSchema:
    """Build and validate a schema from fields, ``(name, type)`` pairs or ``{"name", "type", "nullable"}``."""
    given: list[tuple[object, object, object]] = []  # (name, type, nullable), checked by _checked
    for item in fields:
        if isinstance(item, SchemaField):
            given.append((item.name, item.type, item.nullable))
        elif isinstance(item, tuple):
            field = SchemaField(*item)
            given.append((field.name, field.type, field.nullable))
        elif isinstance(item, Mapping):
            unknown = set(item) - {"name", "type", "nullable"}
            if unknown:
                raise InvalidSchemaError(f"schema field {item.get('name')!r} has unknown keys: {sorted(unknown)}")
            given.append((item.get("name"), item.get("type"), item.get("nullable", True)))
        else:
            raise InvalidSchemaError(f"a schema field is a name and a type, got {item!r}")
    return _checked(given)


def parse_schema(payload: Any) -> DatasetSchema:
    """The schema of a ``{"fields": [...]}`` object (as events carry it)."""
    if not isinstance(payload, Mapping) or not isinstance(payload.get("fields"), list):
        raise InvalidSchemaError('a schema is an object {"fields": [{"name": ..., "type": ...}, ...]}')
    return schema(payload["fields"])


def _checked(fields: list[tuple[object, object, object]]) -> DatasetSchema:
    if not fields:
        raise InvalidSchemaError("a schema needs at least one field")
    if len(fields) > MAX_FIELDS:
        raise InvalidSchemaError(f"a schema has at most {MAX_FIELDS} fields, got {len(fields)}")
    checked: list[SchemaField] = []
    seen: set[str] = set()
    for name, type_name, nullable in fields:
        if not isinstance(name, str) or not name.strip() or len(name) > MAX_FIELD_NAME_LENGTH:
            raise InvalidSchemaError(f"schema field name {name!r} must be 1-{MAX_FIELD_NAME_LENGTH} characters")
        if not isinstance(type_name, str) or not type_name.strip() or len(type_name) > MAX_TYPE_LENGTH:
            raise InvalidSchemaError(f"schema field {name!r} needs a type name (1-{MAX_TYPE_LENGTH} characters)")
        if not isinstance(nullable, bool):
            raise InvalidSchemaError(f"schema field {name!r}: nullable must be true or false")
        if name in seen:
            raise InvalidSchemaError(f"schema field {name!r} appears twice")
        seen.add(name)
        checked.append(SchemaField(name, type_name, nullable))
    return DatasetSchema(tuple(checked))


def unstated_nullability(payload: Any) -> frozenset[str]:
    """The fields of a ``{"fields": [...]}`` object given without ``nullable``: an observed schema
    (an OpenLineage ``schema`` facet, whose specification has no nullability) does not say
    whether they are required."""
    fields = payload.get("fields") if isinstance(payload, Mapping) else None
    return frozenset(f["name"] for f in fields or () if isinstance(f, Mapping) and "nullable" not in f
                     and isinstance(f.get("name"), str))


def with_nullability_of(current: DatasetSchema | None, observed: DatasetSchema,
                        unstated: frozenset[str]) -> DatasetSchema:
    """``observed`` with each field in ``unstated`` as required or optional as ``current``'s field
    of that name is (optional when it is new): an observation that does not say is no change of
    nullability, so a declared NOT NULL stands through a producer that cannot tell."""
    if current is None or not unstated:
        return observed
    known = {f.name: f.nullable for f in current.fields}
    return DatasetSchema(tuple(SchemaField(f.name, f.type, known[f.name])
                               if f.name in unstated and f.name in known and known[f.name] != f.nullable else f
                               for f in observed.fields))


# Type names as Spark, Avro and SQL spell them, folded to one name per type.
_TYPE_ALIASES = {"integer": "int", "int32": "int", "bigint": "long", "int64": "long", "real": "float",
                 "float32": "float", "float64": "double", "double precision": "double"}
_WIDENINGS = {("int", "long"), ("float", "double")}


def _type_name(type_name: str) -> str:
    folded = type_name.strip().lower()
    return _TYPE_ALIASES.get(folded, folded)


def incompatibilities(current: DatasetSchema, proposed: DatasetSchema) -> list[str]:
    """Why ``proposed`` cannot replace ``current`` (empty when it can), one reason per field
    and rule, in the order of the fields."""
    reasons = []
    offered = {f.name: f for f in proposed.fields}
    for old in current.fields:
        new = offered.get(old.name)
        if new is None:
            reasons.append(f"field {old.name!r} is removed")
            continue
        before, after = _type_name(old.type), _type_name(new.type)
        if before != after and (before, after) not in _WIDENINGS:
            change = "narrows" if (after, before) in _WIDENINGS else "changes"
            reasons.append(f"field {old.name!r} {change} its type from {old.type} to {new.type}")
        if old.nullable and not new.nullable:
            reasons.append(f"field {old.name!r} becomes required (it was optional)")
    known = {f.name for f in current.fields}
    reasons += [f"new field {f.name!r} is required (a new field must be optional)"
                for f in proposed.fields if f.name not in known and not f.nullable]
    return reasons


SchemaSource = Literal["declared", "observed"]
"""Where a schema version came from. *Declared*: a program's ``record_schema`` or the API's
``PUT .../properties``, a request the compatibility rule above checks. *Observed*: what a
producer saw the dataset look like (an OpenLineage ``schema`` facet), a fact: a different one
is a new version whatever it changes."""


@dataclass(frozen=True)
class SchemaChanges:
    """What a schema version changed from the one before it: fields added and removed (with
    their type and nullability), fields whose type changed (the type names as given), fields
    whose nullability changed, and whether the fields kept were reordered."""

    added: tuple[SchemaField, ...] = ()
    removed: tuple[SchemaField, ...] = ()
    retyped: tuple[tuple[str, str, str], ...] = ()  # (name, type before, type after)
    nullability: tuple[tuple[str, bool, bool], ...] = ()  # (name, nullable before, nullable after)
    reordered: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"added": [f.to_dict() for f in self.added], "removed": [f.to_dict() for f in self.removed],
                "retyped": [{"name": name, "before": before, "after": after} for name, before, after in self.retyped],
                "nullability": [{"name": name, "before": before, "after": after}
                                for name, before, after in self.nullability],
                "reordered": self.reordered}


def schema_changes(previous: DatasetSchema, new: DatasetSchema) -> SchemaChanges:
    """What ``new`` changes from ``previous``, field by field in the order of the fields (a
    type is compared as written: ``integer`` -> ``int`` is a retyping, though the
    compatibility rule folds the two)."""
    before = {f.name: f for f in previous.fields}
    after = {f.name: f for f in new.fields}
    kept = [f for f in new.fields if f.name in before]
    return SchemaChanges(
        added=tuple(f for f in new.fields if f.name not in before),
        removed=tuple(f for f in previous.fields if f.name not in after),
        retyped=tuple((f.name, before[f.name].type, f.type) for f in kept if before[f.name].type != f.type),
        nullability=tuple((f.name, before[f.name].nullable, f.nullable) for f in kept
                          if before[f.name].nullable != f.nullable),
        reordered=[f.name for f in kept] != [f.name for f in previous.fields if f.name in after])

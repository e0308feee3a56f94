"""SYSTEM metadata that programs record (``metadata_change`` events), and the rule that orders it.

Program-recorded metadata reaches the warehouse through the raw log and the compaction, so
events can arrive late and out of order. The rule: per entity, tag and property key, **the
later event wins by event time**, whatever order the compactions see them in. Each applied
event leaves a watermark per key it touched (and one per kind for "remove all"); an older
event never undoes a newer one.

A dataset's schema comes two ways: ``set_schema`` *declares* one (a program's ``record_schema``),
which must be compatible with the current one; ``observe_schema`` reports what a producer saw
(an OpenLineage ``schema`` facet), which becomes a new version whatever it changes
(``lineage.model.dataset_schema.SchemaSource``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from lineage.errors import InvalidEntityError, InvalidMetadataChangeError, InvalidMetadataError, InvalidSchemaError
from lineage.model.dataset_schema import SCHEMA_PROPERTY, SchemaSource, parse_schema, unstated_nullability
from lineage.model.metadata_entity import MetadataEntity, entity
from lineage.model.metadata_values import check_properties, check_tags

ALL_KEYS = "*"  # the watermark key of "remove all of this kind"


@dataclass(frozen=True)
class MetadataChange:
    """One program-recorded change: properties and tags to set, and keys to remove (``None``:
    all of that kind); a schema change says whether it declares or observes the schema."""

    entity: MetadataEntity
    set_properties: Mapping[str, str] = field(default_factory=dict)
    add_tags: tuple[str, ...] = ()
    remove_properties: tuple[str, ...] | None = ()
    remove_tags: tuple[str, ...] | None = ()
    schema_source: SchemaSource = "declared"
    unstated_nullability: frozenset[str] = frozenset()  # an observed schema's fields that do not say


def parse_change(payload: Mapping[str, Any]) -> MetadataChange:
    """The change a ``metadata_change`` payload asks for (the JSON Schema checked its shape)."""
    try:
        subject = entity((str(key), str(value)) for key, value in payload["entity"])
    except InvalidEntityError as exc:
        raise InvalidMetadataChangeError(f"entity: {exc}") from exc
    operation = payload["operation"]
    try:
        if operation == "add_properties":
            properties = check_properties(payload.get("properties", {}))
            if SCHEMA_PROPERTY in properties:
                raise InvalidMetadataChangeError(f"the {SCHEMA_PROPERTY!r} property is set with the set_schema "
                                                 "operation, which checks it")
            return MetadataChange(subject, set_properties=properties)
        if operation == "add_tags":
            return MetadataChange(subject, add_tags=tuple(check_tags(payload.get("tags", []))))
        if operation == "remove_properties":
            keys = payload.get("keys")
            return MetadataChange(subject, remove_properties=None if keys is None else tuple(keys))
        if operation == "remove_tags":
            tags = payload.get("tags")
            return MetadataChange(subject, remove_tags=None if tags is None else tuple(tags))
        if operation == "remove_all":
            return MetadataChange(subject, remove_properties=None, remove_tags=None)
        if operation in ("set_schema", "observe_schema"):
            if subject.type not in ("dataset", "stream"):
                raise InvalidMetadataChangeError(f"{operation} applies to a dataset or stream, not a {subject.type}")
            described = parse_schema(payload.get("schema")).to_json()
            if operation == "set_schema":
                return MetadataChange(subject, set_properties={SCHEMA_PROPERTY: described})
            return MetadataChange(subject, set_properties={SCHEMA_PROPERTY: described}, schema_source="observed",
                                  unstated_nullability=unstated_nullability(payload.get("schema")))
    except (InvalidMetadataError, InvalidSchemaError) as exc:
        raise InvalidMetadataChangeError(f"{operation}: {exc}") from exc
    raise InvalidMetadataChangeError(f"unknown operation {operation!r}")


Watermarks = Mapping[tuple[str, str], datetime]  # (kind, key or ALL_KEYS) -> event time last applied


@dataclass(frozen=True)
class Resolved:
    """What of a change still applies at its event time, and the watermarks it leaves."""

    set_properties: dict[str, str]
    add_tags: list[str]
    remove_properties: list[str]
    remove_tags: list[str]
    watermarks: dict[tuple[str, str], datetime]

    @property
    def is_empty(self) -> bool:
        return not (self.set_properties or self.add_tags or self.remove_properties or self.remove_tags)


def resolve(change: MetadataChange, at: datetime, current: Mapping[str, Any], watermarks: Watermarks) -> Resolved:
    """Keep only the parts of ``change`` (recorded ``at``) no newer event has overridden.

    ``current`` is the entity's SYSTEM state (``{"tags": [...], "properties": {...}}``).
    A key applies when ``at`` is not older than its own watermark nor its kind's "remove all"; a
    property set at the very time of its watermark applies when its value is not below the
    current one (ties broken by content).
    """

    def applies(kind: str, key: str) -> bool:
        newest = max((t for t in (watermarks.get((kind, key)), watermarks.get((kind, ALL_KEYS))) if t), default=None)
        return newest is None or at >= newest

    def removes(kind: str, key: str, present: list[str]) -> bool:
        """A removal applies when no newer event set the key; against a set of the same moment, the
        set wins, whichever came first (a tie settled by content: a removal is the least value)."""
        return applies(kind, key) and not (key in present and watermarks.get((kind, key)) == at)

    marks: dict[tuple[str, str], datetime] = {}
    removals: dict[str, list[str]] = {}
    for kind, removal, present in (("property", change.remove_properties, list(current["properties"])),
                                   ("tag", change.remove_tags, list(current["tags"]))):
        if removal is None:  # remove all of the kind: what newer events set stays
            if applies(kind, ALL_KEYS):
                marks[(kind, ALL_KEYS)] = at
            removals[kind] = [key for key in present if removes(kind, key, present)]
        else:
            removals[kind] = [key for key in removal if removes(kind, key, present)]
            marks.update({(kind, key): at for key in removals[kind]})
    def wins(key: str, value: str) -> bool:
        """A property set at the time its own newest event set it too (two events of one moment)
        applies when its value is not below the current one, compared as text: ties are broken by
        content, so the arrival order of the two does not choose the value."""
        if not applies("property", key):
            return False
        own = watermarks.get(("property", key))
        held = current["properties"].get(key)
        return own is None or at > own or held is None or value >= held

    set_properties = {k: v for k, v in change.set_properties.items() if wins(k, v)}
    add_tags = [tag for tag in change.add_tags if applies("tag", tag)]
    marks.update({("property", k): at for k in set_properties})
    marks.update({("tag", t): at for t in add_tags})
    return Resolved(set_properties, add_tags, removals["property"], removals["tag"], marks)

"""Metadata entities (the *Metadata Custom Entities and Authorization* design): an ordered list
of key=value pairs with a type.

One module builds, parses, renders and validates them. Rendering is
``namespace=myns,dataset=purchases,field=empName``; a ``,``, ``=`` or ``\\`` inside a key or
value is escaped with a backslash, so any value (commas, colons, spaces, quotes, unicode)
round-trips: ``parse(render(e)) == e``.

Known types have a fixed key order (``namespace`` first); anything else with a namespace is a
custom entity under its parents (a file of a partition of a fileset), and an entity without a
namespace is an external resource (``database=myDatabase,table=myTable``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import unquote

from lineage.errors import InvalidEntityError

MAX_KEY_LENGTH = 128
MAX_VALUE_LENGTH = 1024
KEY_PATTERN = re.compile(r"[a-z][a-z0-9_]*\Z")

# type -> its keys, in order; "version" of an application is optional.
KNOWN_TYPES: dict[str, tuple[str, ...]] = {
    "namespace": ("namespace",),
    "application": ("namespace", "application", "version"),
    "program": ("namespace", "application", "version", "type", "program"),
    "program_run": ("namespace", "application", "version", "type", "program", "run"),
    "dataset": ("namespace", "dataset"),
    "stream": ("namespace", "stream"),
}
OPTIONAL_KEYS = {"version"}


@dataclass(frozen=True)
class MetadataEntity:
    parts: tuple[tuple[str, str], ...]
    type: str

    @property
    def namespace(self) -> str | None:
        return self.parts[0][1] if self.parts and self.parts[0][0] == "namespace" else None

    def value(self, key: str) -> str | None:
        return next((value for k, value in self.parts if k == key), None)

    def render(self) -> str:
        return ",".join(f"{_escape(key)}={_escape(value)}" for key, value in self.parts)

    def without_version(self) -> MetadataEntity:
        return MetadataEntity(tuple((k, v) for k, v in self.parts if k != "version"), self.type)

    def to_dict(self) -> dict[str, object]:
        return {"type": self.type, "details": [{"key": k, "value": v} for k, v in self.parts]}


def entity(parts: Iterable[tuple[str, str]], entity_type: str | None = None) -> MetadataEntity:
    """Build and validate an entity; the type defaults to the known type matching the keys, or
    the last key (a custom entity such as ``field`` or ``file``)."""
    pairs = tuple((str(key), str(value)) for key, value in parts)
    if not pairs:
        raise InvalidEntityError("an entity needs at least one key=value pair")
    for key, value in pairs:
        if len(key) > MAX_KEY_LENGTH or not KEY_PATTERN.match(key):
            raise InvalidEntityError(
                f"entity key {key[:40]!r} must be lowercase letters, digits and '_' (up to {MAX_KEY_LENGTH})")
        if not value:
            raise InvalidEntityError(f"entity key {key!r} has an empty value")
        if len(value) > MAX_VALUE_LENGTH:
            raise InvalidEntityError(f"entity key {key!r}: the value is over {MAX_VALUE_LENGTH} characters")
        if "\x00" in value:
            raise InvalidEntityError(f"entity key {key!r}: the value contains a NUL character")
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        raise InvalidEntityError(f"entity keys repeat: {', '.join(keys)}")
    if "namespace" in keys and keys[0] != "namespace":
        raise InvalidEntityError("'namespace' must be the first key of an entity")
    chosen = entity_type or _known_type(keys) or keys[-1]
    expected = KNOWN_TYPES.get(chosen)
    if expected is not None and [k for k in expected if k in keys or k not in OPTIONAL_KEYS] != keys:
        raise InvalidEntityError(f"a {chosen} entity has the keys {', '.join(expected)} in that order "
                                 f"({', '.join(sorted(OPTIONAL_KEYS))} optional), got {', '.join(keys)}")
    return MetadataEntity(pairs, chosen)


def dataset_entity(namespace: str, dataset_type: str, name: str) -> MetadataEntity:
    """The entity of a dataset or stream (``dataset_type`` is ``dataset`` or ``stream``)."""
    return entity([("namespace", namespace), (dataset_type, name)])


def application_entity(namespace: str, application: str) -> MetadataEntity:
    return entity([("namespace", namespace), ("application", application)])


def program_entity(namespace: str, application: str, program_type: str, program: str) -> MetadataEntity:
    return entity([("namespace", namespace), ("application", application), ("type", program_type),
                   ("program", program)])


def program_run_entity(namespace: str, application: str, program_type: str, program: str,
                       run_id: str) -> MetadataEntity:
    """A program run: the updater of what a run changed."""
    return entity([("namespace", namespace), ("application", application), ("type", program_type),
                   ("program", program), ("run", run_id)])


def _known_type(keys: Sequence[str]) -> str | None:
    for name, expected in KNOWN_TYPES.items():
        if [k for k in expected if k in keys or k not in OPTIONAL_KEYS] == list(keys):
            return name
    return None


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


def parse(text: str, entity_type: str | None = None) -> MetadataEntity:
    """The inverse of ``MetadataEntity.render``."""
    pairs: list[tuple[str, str]] = []
    key: str | None = None
    current: list[str] = []
    escaped = False
    for char in text:
        if escaped:
            current.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == "=" and key is None:
            key, current = "".join(current), []
        elif char == ",":
            if key is None:
                raise InvalidEntityError(f"{text[:80]!r}: a part has no '='")
            pairs.append((key, "".join(current)))
            key, current = None, []
        else:
            current.append(char)
    if escaped:
        raise InvalidEntityError(f"{text[:80]!r}: ends with a lone backslash")
    if key is None:
        raise InvalidEntityError(f"{text[:80]!r}: a part has no '='")
    pairs.append((key, "".join(current)))
    return entity(pairs, entity_type)


def path_name(text: str) -> str:
    """A name as one segment of a REST path writes it, percent-encoded (a ``/`` of it ``%2F``, a
    ``%`` ``%25``: ``s3:%2F%2Flake%2Forders``, as links write it): the name."""
    return unquote(text) if "%" in text else text


# REST paths (the *Metadata and Data Discovery* design): the plural collection names of known
# types, then custom /{type}/{name} pairs.
_COLLECTIONS = {"datasets": "dataset", "streams": "stream", "apps": "application"}


def from_path(namespace: str, segments: Sequence[str], version: str | None = None) -> MetadataEntity:
    """The entity a REST path names under ``/v3/namespaces/{namespace}/``: ``datasets/{ds}``,
    ``streams/{s}``, ``apps/{app}`` (``version`` from ``?version=``), ``apps/{app}/{type}/{program}``,
    each optionally followed by custom ``/{type}/{name}`` pairs (``field/empName``)."""
    parts: list[tuple[str, str]] = [("namespace", namespace)]
    rest = list(segments)
    if rest and rest[0] in _COLLECTIONS:
        if len(rest) < 2:
            raise InvalidEntityError(f"'{rest[0]}' must be followed by a name")
        kind = _COLLECTIONS[rest[0]]
        parts.append((kind, rest[1]))
        rest = rest[2:]
        if kind == "application":
            if version:
                parts.append(("version", version))
            if len(rest) >= 2 and rest[0] not in {"field", "partition", "file"}:
                parts.extend([("type", rest[0]), ("program", rest[1])])
                rest = rest[2:]
                if len(rest) >= 2 and rest[0] == "runs":
                    parts.append(("run", rest[1]))
                    rest = rest[2:]
    if len(rest) % 2:
        raise InvalidEntityError(f"custom entity parts come in /type/name pairs; '{rest[-1]}' has no name")
    parts.extend((rest[index], rest[index + 1]) for index in range(0, len(rest), 2))
    return entity(parts)


_COLLECTION_OF = {kind: collection for collection, kind in _COLLECTIONS.items()}


def to_path(subject: MetadataEntity) -> tuple[str | None, tuple[str, ...], str | None]:
    """The REST path naming ``subject``: ``(namespace, segments, version)``, the inverse of
    ``from_path`` (``from_path(*to_path(e)) == e`` for an entity in a namespace). An external
    resource (no namespace; under ``/v3/external/``) is its ``type/name`` pairs."""
    namespace = subject.namespace
    rest = list(subject.parts[1:] if namespace is not None else subject.parts)
    segments: list[str] = []
    version = None
    if namespace is not None and rest and rest[0][0] in _COLLECTION_OF:
        kind, name = rest.pop(0)
        segments += [_COLLECTION_OF[kind], name]
        if kind == "application":
            if rest and rest[0][0] == "version":
                version = rest.pop(0)[1]
            if len(rest) >= 2 and (rest[0][0], rest[1][0]) == ("type", "program"):
                segments += [rest[0][1], rest[1][1]]
                rest = rest[2:]
                if rest and rest[0][0] == "run":
                    segments += ["runs", rest.pop(0)[1]]
    for key, value in rest:
        segments += [key, value]
    return namespace, tuple(segments), version

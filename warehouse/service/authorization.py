"""Authorization for metadata and lineage ("Authorization for Metadata" of the *Metadata
Custom Entities and Authorization* design).

Principals are Airflow's logged-in users. Privileges are READ, WRITE and ADMIN, each including
the ones before it (ADMIN can write, WRITE can read). They are granted on an *enforceable*
entity: the instance, a namespace, a dataset or stream, or a program. Any other entity is
checked on its nearest enforceable parent:

- a field, partition or file (custom parts under a dataset) on its dataset;
- a dataset, stream or program (and a program's runs) on itself, then its namespace;
- an application, or a custom entity under a namespace, on its namespace;
- an external resource (outside any namespace) on the instance.

An Airflow admin is an instance admin and may do anything. A grant on the instance covers
external resources and creating namespaces; it does not reach into namespaces.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import IntEnum

from lineage.errors import InvalidEntityError, NotAuthorizedError
from lineage.model.metadata_entity import MetadataEntity, entity, from_path, parse, path_name

INSTANCE = "instance"  # the key grants on the instance are stored under
HIDDEN = "hidden"  # what a caller sees in place of something they may not read
PROGRAM_RUN_KEYS = ("namespace", "application", "type", "program", "run")
MAX_PRINCIPAL_LENGTH = 256


class Privilege(IntEnum):
    READ = 1
    WRITE = 2
    ADMIN = 3

    @classmethod
    def parse(cls, name: object) -> Privilege:
        if isinstance(name, str) and name.upper() in cls.__members__:
            return cls[name.upper()]
        raise InvalidEntityError(f"privilege {str(name)[:40]!r} is not one of READ, WRITE, ADMIN")


def check_principal(value: str) -> str:
    """A principal (an Airflow user name) as grants and ingest keys take it."""
    if not value.strip() or len(value) > MAX_PRINCIPAL_LENGTH or "\x00" in value:
        raise InvalidEntityError(f"a principal is an Airflow user name of 1-{MAX_PRINCIPAL_LENGTH} characters")
    return value


def namespace_key(namespace: str) -> str:
    return entity([("namespace", namespace)]).render()


def enforcement_keys(subject: MetadataEntity) -> tuple[str, ...]:
    """The keys a check on ``subject`` looks at, nearest first."""
    namespace = subject.namespace
    if namespace is None:
        return (INSTANCE,)
    parts = subject.parts
    outer = namespace_key(namespace)
    if len(parts) >= 2 and parts[1][0] in ("dataset", "stream"):
        return entity(parts[:2]).render(), outer
    versionless = subject.without_version().parts
    if [key for key, _ in versionless[1:4]] == ["application", "type", "program"]:
        return entity(versionless[:4]).render(), outer
    return (outer,)


def grant_key(subject: MetadataEntity) -> str | None:
    """The enforceable entity inside a namespace that a READ grant on shows ``subject`` (a
    dataset or stream for itself and what is under it; a program, any version, for itself and
    its runs), or None when only its namespace (or, outside any, the instance) covers it.
    Stored with each row search reads, so search filters on it and never re-derives the rule."""
    keys = enforcement_keys(subject)
    return keys[0] if len(keys) == 2 else None


_GRANT_ENTITY = ("the entity is 'instance' or a path such as 'namespaces/sales', 'namespaces/sales/datasets/orders', "
                 "'namespaces/sales/datasets/s3://lake/orders', 'namespaces/sales/apps/Shop/spark/Load' "
                 "(or a key as grants are listed, such as 'namespace=sales,dataset=s3://lake/orders')")


def grant_subject(text: str) -> MetadataEntity | None:
    """The entity a grant names: ``instance`` (None); an API path (``namespaces/sales``,
    ``namespaces/sales/datasets/orders``, ``namespaces/sales/apps/Shop/spark/Load``), where a
    dataset's or stream's name is the whole rest of the path, its ``/`` written raw or ``%2F``
    (``namespaces/sales/datasets/s3://lake/orders``, ``.../s3:%2F%2Flake%2Forders``) and a ``%``
    of it ``%25``; or the key grants are stored and listed under
    (``namespace=sales,dataset=s3://lake/orders``, a ``,``, ``=`` or ``\\`` of a name escaped
    with a backslash). Either way a dataset grant is stored under the key its dataset is checked on."""
    if text == INSTANCE:
        return None
    if text.startswith("namespace="):
        return _grant_key_subject(text)
    head, _, rest = text.removeprefix("/").partition("/")
    namespace, _, rest = rest.partition("/")
    if head != "namespaces" or not namespace:
        raise InvalidEntityError(_GRANT_ENTITY)
    collection, _, name = rest.partition("/")
    if collection in ("datasets", "streams"):
        return _dataset_subject(path_name(namespace), collection, name)
    segments = [path_name(part) for part in rest.removesuffix("/").split("/")] if rest else []
    return from_path(path_name(namespace), segments)


def _dataset_subject(namespace: str, collection: str, name: str) -> MetadataEntity:
    """The dataset or stream of a grant path: ``name`` is all of the rest of the path
    (``s3://lake/orders``), unless it reads as parts under a dataset (``orders/field/id``), which
    grants do not go on."""
    parts = [path_name(part) for part in name.split("/")]
    try:
        under = from_path(namespace, [collection, *parts])
    except InvalidEntityError:  # no /type/name pairs after its first segment: a name holding '/'
        return from_path(namespace, [collection, path_name(name)])
    if len(parts) == 1:
        return under
    return _refused(under, f"a {collection.removesuffix('s')} whose name reads so is written with its '/' as '%2F'")


def _grant_key_subject(text: str) -> MetadataEntity:
    """The entity of a grant key (``namespace=sales,dataset=orders``), once it is one grants go on."""
    return _refused(parse(text), "in a key, a ',' or '=' inside a name is escaped: 'namespace=sales,dataset=a\\,b'")


def _refused(subject: MetadataEntity, hint: str) -> MetadataEntity:
    """``subject`` once grants go on it; else the refusal, with ``hint`` on how to name it."""
    try:
        grant_target(subject)
    except InvalidEntityError as error:
        raise InvalidEntityError(f"{error} ({hint})") from None
    return subject


def grant_target(subject: MetadataEntity | None) -> str:
    """The key a grant on ``subject`` is stored under (None: the instance); only enforceable
    entities take grants."""
    if subject is None:
        return INSTANCE
    keys = enforcement_keys(subject)
    if keys[0] != subject.render():
        raise InvalidEntityError(f"grants are given on the instance, a namespace, a dataset, a stream or a program; "
                                 f"a {subject.type} is checked on {keys[0]}")
    return keys[0]


@dataclass(frozen=True)
class Access:
    """What one caller may do: their grants (enforceable key -> highest privilege)."""

    principal: str
    instance_admin: bool = False
    grants: Mapping[str, Privilege] = field(default_factory=dict)

    def allows(self, subject: MetadataEntity, needed: Privilege) -> bool:
        return self.instance_admin or any(self.grants.get(key, 0) >= needed for key in enforcement_keys(subject))

    def allows_key(self, key: str, needed: Privilege) -> bool:
        return self.instance_admin or self.grants.get(key, 0) >= needed

    def require(self, subject: MetadataEntity, needed: Privilege) -> None:
        if not self.allows(subject, needed):
            where = " or ".join(enforcement_keys(subject))
            raise NotAuthorizedError(f"user {self.principal!r} needs {needed.name} on {where}")

    def require_key(self, key: str, needed: Privilege) -> None:
        if not self.allows_key(key, needed):
            raise NotAuthorizedError(f"user {self.principal!r} needs {needed.name} on {key}")

    def writes_some_namespace(self) -> bool:
        """Whether the caller holds WRITE on at least one whole namespace (what ingest needs)."""
        return self.instance_admin or any(
            privilege >= Privilege.WRITE and key.startswith("namespace=") and "," not in key
            for key, privilege in self.grants.items())

    def sees_namespace(self, namespace: str) -> bool:
        """Whether the caller holds anything in ``namespace`` (on it, or on one of its entities)."""
        outer = namespace_key(namespace)
        return self.instance_admin or any(key == outer or key.startswith(outer + ",") for key in self.grants)

    def require_namespace(self, namespace: str) -> None:
        """No existence oracle: a caller who holds nothing in ``namespace`` is refused (403) with
        the same message whether or not it exists; call it before looking the namespace up (only
        those who hold something in it, or instance admins, learn that it is missing: 404)."""
        if not self.sees_namespace(namespace):
            raise NotAuthorizedError(f"user {self.principal!r} holds no privilege in namespace {namespace!r}")

    def shown_updater(self, updater: str) -> str:
        """Who made a change (``updater``, ``last-updated-by``) as the caller may see it: a program
        run of a program they cannot read becomes ``hidden``, as the lineage graph hides it; an
        API user's name shows as is."""
        try:
            subject = parse(updater)
        except InvalidEntityError:
            return updater
        if [key for key, _ in subject.parts] != [*PROGRAM_RUN_KEYS] or self.allows(subject, Privilege.READ):
            return updater
        return HIDDEN

    def readable(self) -> Readable | None:
        """What search may show (None: everything, for an instance admin)."""
        if self.instance_admin:
            return None
        keys = sorted(k for k, p in self.grants.items() if p >= Privilege.READ)
        namespaces = [k for k in keys if k.startswith("namespace=") and "," not in k]  # names have no commas
        return Readable(namespaces=tuple(k.removeprefix("namespace=") for k in namespaces),
                        entity_keys=tuple(k for k in keys if k != INSTANCE and k not in namespaces),
                        external=INSTANCE in keys)


@dataclass(frozen=True)
class Readable:
    """READ grants in the form a query filters on: whole namespaces, entity keys (an entity and
    whatever is under it), and external resources."""

    namespaces: tuple[str, ...]
    entity_keys: tuple[str, ...]
    external: bool

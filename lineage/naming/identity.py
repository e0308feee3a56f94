"""One identity rule for the datasets and jobs the warehouse learns of from outside its own
client: OpenLineage producers (Airflow, dbt, Spark, Flink, any client) and automatic capture.

A **physical dataset** keeps the identity OpenLineage gives it (its naming spec): a namespace
naming the data source (``s3://lake``, ``postgres://db:5432``, ``file``, ``bigquery``) and a
name inside it (``sales/2026``, ``shop.public.orders``, ``/tmp/a.csv``). In the warehouse it
is a dataset whose name is the identity's *rendering*, OpenLineage's URI form
``{namespace}/{name}``: ``s3://lake/sales/2026``, ``postgres://db:5432/shop.public.orders``,
``file//tmp/a.csv``. The rendering is reversible (``parse_dataset(render) == identity``), so
two identities never merge: a ``/`` inside the namespace (after its ``scheme://``) is written
``%2F`` and a ``%`` ``%25``; the name is kept as is. Names of our own client (format v1) never
contain ``/``, so a rendered name never collides with one.

A **job** keeps its identity too: the OpenLineage job namespace is the program's application
and the job name its program (any text), of program type ``openlineage``.

The warehouse's **own names** (datasets and programs of our client) have an OpenLineage
identity of the reserved scheme ``lineage://`` (``NATIVE_SCHEME``), which is how the export
names them and which the mapping reads back to the same names: dataset ``orders`` of namespace
``sales`` is ``(lineage://sales, orders)`` (a stream ``(lineage://sales/streams, clicks)``), and
program ``etl`` of type ``spark`` in application ``nightly`` of ``sales`` is the job
``(lineage://sales/nightly, spark/etl)``. Such an identity lands in its own namespace (before
any rule of the map), so a poster needs WRITE there, as for any other.

Which **warehouse namespace** (authorization, quarantine of unknown namespaces) an identity
lands in is decided by ``NamespaceMap`` (the setting ``LINEAGE_NAMESPACE_MAP``): the longest
configured prefix of the OpenLineage namespace wins; otherwise a job namespace that is a valid
warehouse namespace name is its own (``default`` stays ``default``), and everything else lands
in ``default``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache

from lineage.errors import InvalidEntityError

MAX_RENDERED_LENGTH = 1024  # a metadata entity's value limit: the rendering is the dataset's name
PROGRAM_TYPE = "openlineage"
DEFAULT_NAMESPACE = "default"

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
_URI_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*")
_WAREHOUSE_NAMESPACE = re.compile(r"[A-Za-z0-9_]{1,64}\Z")  # the event format's namespace rule
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_PROGRAM_TYPE = re.compile(r"[a-z][a-z0-9_]{0,31}\Z")  # the event format's program type rule


@dataclass(frozen=True)
class DatasetIdentity:
    """A dataset as OpenLineage names it: its data source (``namespace``) and ``name``."""

    namespace: str
    name: str

    def render(self) -> str:
        """The warehouse dataset name: ``{namespace}/{name}`` (the namespace escaped)."""
        return _rendered(self.namespace, self.name)


# An event names the same few datasets many times (an OpenLineage event its inputs and outputs in
# accesses, column lineage, schemas and facets; a task's START, RUNNING and COMPLETE again): checked
# and rendered identities are kept, by their texts (pure functions of them).
_IDENTITIES_KEPT = 4096


@lru_cache(maxsize=_IDENTITIES_KEPT)
def _rendered(namespace: str, name: str) -> str:
    scheme = _scheme(namespace)
    rest = namespace[len(scheme):].replace("%", "%25").replace("/", "%2F")
    return f"{scheme}{rest}/{name}"


def dataset_identity(namespace: object, name: object) -> DatasetIdentity:
    """A checked identity; InvalidEntityError names what is wrong."""
    if isinstance(namespace, str) and isinstance(name, str):
        return _text_identity(namespace, name)
    return _checked_identity(namespace, name)


@lru_cache(maxsize=_IDENTITIES_KEPT)
def _text_identity(namespace: str, name: str) -> DatasetIdentity:
    return _checked_identity(namespace, name)


def _checked_identity(namespace: object, name: object) -> DatasetIdentity:
    for label, value in (("namespace", namespace), ("name", name)):
        if not isinstance(value, str) or not value:
            raise InvalidEntityError(f"a dataset {label} must be non-empty text, got {value!r}")
        if _CONTROL.search(value):
            raise InvalidEntityError(f"dataset {label} {value[:80]!r} contains a control character")
    identity = DatasetIdentity(str(namespace), str(name))
    native_dataset(identity)  # a name of the reserved scheme must be one the warehouse could have
    if len(identity.render()) > MAX_RENDERED_LENGTH:
        raise InvalidEntityError(f"dataset {identity.render()[:80]!r}...: namespace and name are over "
                                 f"{MAX_RENDERED_LENGTH} characters together")
    return identity


def parse_dataset(rendered: str) -> DatasetIdentity | None:
    """The identity a warehouse dataset name renders, or None for a name of our own client."""
    scheme = _scheme(rendered)
    rest = rendered[len(scheme):]
    cut = rest.find("/")
    if cut < 0:
        return None
    namespace = scheme + rest[:cut].replace("%2F", "/").replace("%25", "%")
    return DatasetIdentity(namespace, rest[cut + 1:])


NATIVE_SCHEME = "lineage://"
_STREAMS = "streams"


def native_dataset(identity: DatasetIdentity) -> tuple[str, str, str] | None:
    """``(warehouse namespace, dataset type, name)`` of an identity of the reserved scheme (None
    for any other); InvalidEntityError when it names no dataset the warehouse could have."""
    if not identity.namespace.startswith(NATIVE_SCHEME):
        return None
    namespace, _, kind = identity.namespace[len(NATIVE_SCHEME):].partition("/")
    if not _WAREHOUSE_NAMESPACE.match(namespace) or kind not in ("", _STREAMS):
        raise InvalidEntityError(f"dataset namespace {identity.namespace[:80]!r}: the {NATIVE_SCHEME} scheme names "
                                 f"the warehouse's own datasets, as {NATIVE_SCHEME}<namespace> or "
                                 f"{NATIVE_SCHEME}<namespace>/{_STREAMS}")
    if parse_dataset(identity.name) is not None:
        raise InvalidEntityError(f"dataset name {identity.name[:80]!r} of {NATIVE_SCHEME}: a name of the "
                                 "warehouse's own holds no '<scheme>://.../' identity")
    return namespace, "stream" if kind else "dataset", identity.name


@lru_cache(maxsize=65536)  # an export names every dataset of its window, over and over
def exported_dataset(namespace: str, dataset_type: str, name: str) -> DatasetIdentity:
    """The OpenLineage identity of a warehouse dataset: the identity its name renders, or for a
    name of our own client one of the reserved scheme (``native_dataset`` reads it back)."""
    parsed = parse_dataset(name) if dataset_type == "dataset" else None
    if parsed is not None:
        return parsed
    return DatasetIdentity(NATIVE_SCHEME + namespace + ("/" + _STREAMS if dataset_type == "stream" else ""), name)


def exported_job(namespace: str, application: str, program_type: str, program: str) -> tuple[str, str]:
    """The OpenLineage job ``(namespace, name)`` of a warehouse program: an OpenLineage job's own,
    or for a program of our own client one of the reserved scheme (``job_program`` reads it back)."""
    if program_type == PROGRAM_TYPE:
        return application, program
    return f"{NATIVE_SCHEME}{namespace}/{application}", f"{program_type}/{program}"


def _native_job(job_namespace: str, job_name: str) -> JobProgram | None:
    if not job_namespace.startswith(NATIVE_SCHEME):
        return None
    namespace, _, application = job_namespace[len(NATIVE_SCHEME):].partition("/")
    program_type, _, program = job_name.partition("/")
    if (not _WAREHOUSE_NAMESPACE.match(namespace) or not application or not program
            or not _PROGRAM_TYPE.match(program_type) or program_type == PROGRAM_TYPE):
        raise InvalidEntityError(f"job {job_namespace[:80]!r} / {job_name[:80]!r}: the {NATIVE_SCHEME} scheme names "
                                 f"the warehouse's own programs, as namespace {NATIVE_SCHEME}<namespace>/<application> "
                                 "and name <program type>/<program>")
    return JobProgram(namespace, application, program, program_type)


def check_job_part(label: str, value: object) -> str:
    """A job namespace or name as the program identity keeps it (any text but control characters)."""
    if not isinstance(value, str) or not value:
        raise InvalidEntityError(f"job {label} must be non-empty text, got {value!r}")
    if _CONTROL.search(value) or len(value) > MAX_RENDERED_LENGTH:
        raise InvalidEntityError(f"job {label} {value[:80]!r} has a control character or is over "
                                 f"{MAX_RENDERED_LENGTH} characters")
    return value


@dataclass(frozen=True)
class JobProgram:
    """The program an OpenLineage job is: in warehouse namespace ``namespace``, application = the
    job namespace, program = the job name, of program type ``openlineage``."""

    namespace: str
    application: str
    program: str
    program_type: str = PROGRAM_TYPE

    def run(self, run_id: str) -> dict[str, str]:
        """A run of this program as events name it (``namespace`` apart: the envelope's)."""
        return {**self.job(), "run_id": run_id}

    def job(self) -> dict[str, str]:
        """This program as a declared access names it (no run)."""
        return {"application": self.application, "program_type": self.program_type, "program": self.program}


def job_program(job_namespace: object, job_name: object, namespaces: NamespaceMap) -> JobProgram:
    """The program of the OpenLineage job ``(job_namespace, job_name)``; InvalidEntityError names a bad part."""
    application = check_job_part("namespace", job_namespace)
    name = check_job_part("name", job_name)
    native = _native_job(application, name)
    if native is not None and namespaces.for_job(application) == native.namespace:
        return native
    return JobProgram(namespaces.for_job(application), application, name)


def _scheme(namespace: str) -> str:
    match = _SCHEME.match(namespace)
    return match.group(0) if match else ""


@dataclass(frozen=True)
class NamespaceMap:
    """OpenLineage namespaces -> warehouse namespaces: ``(prefix, namespace)`` rules."""

    rules: tuple[tuple[str, str], ...] = ()
    fallback: str = DEFAULT_NAMESPACE  # where a dataset no rule maps lands

    @classmethod
    def of(cls, pairs: Iterable[tuple[str, str]]) -> NamespaceMap:
        rules = []
        for prefix, namespace in pairs:
            if not prefix:
                raise InvalidEntityError("a namespace map rule needs a non-empty OpenLineage namespace prefix")
            if not _WAREHOUSE_NAMESPACE.match(namespace):
                raise InvalidEntityError(f"namespace map rule {prefix!r}: {namespace!r} is not a warehouse "
                                         "namespace name (1-64 letters, digits or '_')")
            rules.append((prefix, namespace))
        return cls(tuple(sorted(rules, key=lambda rule: -len(rule[0]))))

    def _mapped(self, ol_namespace: str) -> str | None:
        return next((namespace for prefix, namespace in self.rules if ol_namespace.startswith(prefix)), None)

    def for_dataset(self, ol_namespace: str) -> str:
        """The warehouse namespace of a dataset of data source ``ol_namespace``."""
        return _own_namespace(ol_namespace) or self._mapped(ol_namespace) or self.fallback

    def dataset_ref(self, identity: DatasetIdentity) -> dict[str, str]:
        """A dataset as our events name it: its warehouse namespace and its rendered identity (a
        name of the reserved scheme: the warehouse name it stands for, unless a pinned map put it
        in another namespace, where it stays rendered)."""
        namespace = self.for_dataset(identity.namespace)
        native = native_dataset(identity)
        if native is not None and native[0] == namespace:
            kind = {"type": native[1]} if native[1] != "dataset" else {}
            return {"namespace": namespace, "name": native[2], **kind}
        return {"namespace": namespace, "name": identity.render()}

    def for_job(self, ol_namespace: str) -> str:
        """The warehouse namespace of a job of OpenLineage namespace ``ol_namespace``."""
        mapped = _own_namespace(ol_namespace) or self._mapped(ol_namespace)
        if mapped:
            return mapped
        return ol_namespace if _WAREHOUSE_NAMESPACE.match(ol_namespace) else DEFAULT_NAMESPACE


NO_MAPPING = NamespaceMap()  # the defaults alone


def _own_namespace(ol_namespace: str) -> str | None:
    """The warehouse namespace an OpenLineage namespace of the reserved scheme names."""
    if not ol_namespace.startswith(NATIVE_SCHEME):
        return None
    namespace = ol_namespace[len(NATIVE_SCHEME):].partition("/")[0]
    return namespace if _WAREHOUSE_NAMESPACE.match(namespace) else None


@dataclass(frozen=True)
class PinnedNamespaceMap(NamespaceMap):
    """A ``NamespaceMap`` decided once, when an event was ingested: the warehouse namespace of
    each OpenLineage job and dataset namespace the event names, as the map then in force gave
    it (the ingest checked WRITE on exactly these). A later change of ``LINEAGE_NAMESPACE_MAP``,
    or a replay from quarantine, therefore never moves the event's data into a namespace nobody
    checked. A namespace the record does not name (an event written before records existed)
    falls back to the rules, which are the current map's."""

    jobs: tuple[tuple[str, str], ...] = ()
    datasets: tuple[tuple[str, str], ...] = ()

    @classmethod
    def pinned(cls, record: object, current: NamespaceMap) -> NamespaceMap:
        """The map ``record`` (an envelope's ``namespaces``) pins, over ``current``; ``current``
        itself when there is no usable record."""
        if not isinstance(record, dict):
            return current
        pairs = {side: tuple(sorted((str(k), str(v)) for k, v in (record.get(side) or {}).items()
                                    if isinstance(k, str) and isinstance(v, str) and _WAREHOUSE_NAMESPACE.match(v)))
                 for side in ("jobs", "datasets") if isinstance(record.get(side) or {}, dict)}
        return cls(current.rules, current.fallback, pairs.get("jobs", ()), pairs.get("datasets", ()))

    def for_dataset(self, ol_namespace: str) -> str:
        return _lookup(self.datasets, ol_namespace) or super().for_dataset(ol_namespace)

    def for_job(self, ol_namespace: str) -> str:
        return _lookup(self.jobs, ol_namespace) or super().for_job(ol_namespace)


def _lookup(pairs: tuple[tuple[str, str], ...], key: str) -> str | None:
    return next((value for name, value in pairs if name == key), None)


def pin_namespaces(namespaces: NamespaceMap, jobs: Iterable[str], datasets: Iterable[str]) -> dict[str, dict[str, str]]:
    """The record ``PinnedNamespaceMap.pinned`` reads: each job and dataset namespace, mapped now."""
    return {"jobs": {name: _mapped_now(namespaces, True, name) for name in sorted(jobs)},
            "datasets": {name: _mapped_now(namespaces, False, name) for name in sorted(datasets)}}


@lru_cache(maxsize=_IDENTITIES_KEPT)
def _mapped_now(namespaces: NamespaceMap, job: bool, name: str) -> str:
    """A map's answer for one namespace, remembered (a producer names the same few over and over)."""
    return namespaces.for_job(name) if job else namespaces.for_dataset(name)

_OBJECT_STORES = {"s3": "s3", "s3a": "s3", "s3n": "s3", "gs": "gs", "wasb": "wasb", "wasbs": "wasbs",
                  "abfs": "abfs", "abfss": "abfss", "oss": "oss", "cos": "cos"}


def path_identity(uri: str) -> DatasetIdentity:
    """A file or folder's identity by the OpenLineage naming spec: ``/tmp/a`` or ``file:/tmp/a``
    -> (``file``, ``/tmp/a``); ``s3a://lake/sales/2026`` -> (``s3://lake``, ``sales/2026``);
    ``hdfs://nn:8020/x`` -> (``hdfs://nn:8020``, ``/x``). A trailing ``/`` is dropped, and so is
    a ``user:secret@`` before the host."""
    text = uri.rstrip("/") or "/"
    scheme, sep, rest = text.partition(":")
    if not sep or len(scheme) < 2 or not _URI_SCHEME.fullmatch(scheme):  # a bare path (a Windows drive
        return dataset_identity("file", text)  # letter counts as one, and so does /a/08:00 before its colon)
    if scheme == "file":
        return dataset_identity("file", "/" + rest.lstrip("/"))
    authority, _, path = rest.removeprefix("//").partition("/")
    authority = authority.rsplit("@", 1)[-1]  # no user:secret@ (old s3 URLs carried access keys there)
    store = _OBJECT_STORES.get(scheme.lower())
    if store is not None:
        return dataset_identity(f"{store}://{authority}", path or "/")
    return dataset_identity(f"{scheme}://{authority}", "/" + path)


def path_dataset_identity(uri: str) -> DatasetIdentity:
    """The dataset a path belongs to: ``path_identity`` with its partition folders trimmed, as
    the OpenLineage Spark integration's default trimmers do, so a job reading or writing one
    day's folder names the same dataset every day: ``s3a://lake/events/dt=2026-11-24/hour=08``
    -> (``s3://lake``, ``events``); ``/lake/sales/2026/11/24`` -> (``file``, ``/lake/sales``)."""
    identity = path_identity(uri)
    trimmed = partition_root(identity.name)
    return identity if trimmed == identity.name else dataset_identity(identity.namespace, trimmed)


# the OpenLineage Java client's trimmers, their regular expressions in ASCII as Java's are
_DATES = ((re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}"), "%Y-%m-%d"),
          (re.compile(r"[0-9]{2}\.[0-9]{2}\.[0-9]{4}"), "%d.%m.%Y"),
          (re.compile(r"[0-9]{8}"), "%Y%m%d"))
_YEAR_MONTHS = ((re.compile(r"[0-9]{6}\Z"), "%Y%m"), (re.compile(r"[0-9]{4}-[0-9]{2}\Z"), "%Y-%m"))
_DATE_LEFTOVERS = re.compile(r"[ \t\n\x0b\f\r:.\-0-9]")


def partition_root(name: str) -> str:
    """``name`` without its trailing partition folders (while at least one folder is left): a
    ``key=value`` folder, a date (``2026-11-24``, ``24.11.2026``, ``20261124``, with a time of
    day after it), a year and month (``202611``, ``2026-11``), or ``yyyy/MM[/dd]`` folders. The
    rest of the name is kept as written."""
    parts = name.split("/")
    while sum(1 for part in parts if part) > 1:
        folders = [part for part in parts if part]
        for width, layout in ((2, "%Y%m"), (3, "%Y%m%d")):  # yyyy/MM, then yyyy/MM/dd, as the trimmer tries
            if len(folders) > width and _is_date("".join(folders[-width:]), layout):
                break
        else:
            if not _is_partition(folders[-1]):
                break
            width = 1
        for _ in range(width):
            while parts and not parts[-1]:
                parts.pop()
            parts.pop()
        while len(parts) > 1 and not parts[-1]:
            parts.pop()
    return "/".join(parts)


def _is_partition(folder: str) -> bool:
    if folder.count("=") == 1:
        return True
    if any(pattern.match(folder) and _is_date(folder, layout) for pattern, layout in _YEAR_MONTHS):
        return True
    for pattern, layout in _DATES:
        for found in pattern.finditer(folder):
            if _is_date(found.group(), layout):
                rest = folder.replace(found.group(), "", 1).replace("T", "", 1).replace("Z", "", 1)
                return not _DATE_LEFTOVERS.sub("", rest)
    return False


def _is_date(text: str, layout: str) -> bool:
    """A real date (or year and month) written in ``layout``'s digits exactly: 2026-02-30 is
    not one (Java's formatter, unlike this, would clamp it to the 28th)."""
    digits = sum("0" <= char <= "9" for char in text)
    if digits != len(text.replace("-", "").replace(".", "")) or digits != (6 if layout in ("%Y%m", "%Y-%m") else 8):
        return False
    try:
        datetime.strptime(text, layout)
    except ValueError:
        return False
    return True


_JDBC_SCHEMES = {"postgresql": "postgres", "mariadb": "mysql"}
_JDBC_DATABASE_KEYS = ("databasename", "database", "db", "service_name", "servicename", "sid")
_JDBC_PROPERTY = re.compile(r"([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*([^;&?,()\[\]]*)")


def jdbc_identity(url: str, table: str) -> DatasetIdentity:
    """A JDBC table's identity by the OpenLineage naming spec: namespace ``{scheme}://{host:port}``,
    name ``{database}.{table}`` (``jdbc:postgresql://db:5432/shop`` + ``public.orders`` ->
    ``postgres://db:5432``, ``shop.public.orders``). Only the place is kept, so that one table
    keeps one identity and no secret becomes a dataset's name: not a ``user:password@``, nor
    ``?``/``&`` parameters, ``;``/``:``/``,`` properties (SQL Server's ``;databaseName=``,
    Snowflake's ``?db=`` and Teradata's ``/DATABASE=`` name the database; SQL Server's
    ``;serverName=`` the host), nor what MySQL's ``address=(host=...)(...)`` and Oracle's
    descriptors hold beside the host and port. Oracle's ``@host:port:SID`` is named as its
    ``@//host:port/service`` form. A URL with no host (``jdbc:derby:memory:db``,
    ``jdbc:h2:mem:x``, ``jdbc:sqlite:/data/x.db``) keeps its place as written: ``derby:memory:db``."""
    rest = url.strip().removeprefix("jdbc:")
    properties = {key.lower(): value.strip() for key, value in _JDBC_PROPERTY.findall(rest)}
    scheme = rest.split(":", 1)[0].lower() or "jdbc"
    slashes = rest.find("//")
    if slashes >= 0:
        authority, _, path = rest[slashes + 2:].partition("/")
        userinfo, at, host = authority.rpartition("@")
        if at and "=" not in userinfo:  # user:password@ (an @ inside a property's value stays)
            authority = host
        database = re.split(r"[;?&:,]", path, maxsplit=1)[0]
    else:
        place = re.split(r"[;?&]", rest, maxsplit=1)[0]
        host_port_sid = place.rpartition("@")[2].split(":")
        if "@" in place and len(host_port_sid) == 3 and "(" not in place:  # Oracle's @host:port:SID
            authority, database = ":".join(host_port_sid[:2]), host_port_sid[2]
        elif "host" not in properties:  # an embedded or file database
            database = next((properties[key] for key in _JDBC_DATABASE_KEYS if properties.get(key)), "")
            return dataset_identity(place.rstrip(":") or "jdbc", ".".join(part for part in (database, table) if part))
        else:
            authority, database = "(", ""
    if "(" in authority or authority.startswith("["):  # host and port among properties
        authority = properties.get("host", "") + (f":{properties['port']}" if properties.get("port") else "")
    authority = re.split(r"[;?&]", authority, maxsplit=1)[0]
    if not authority and properties.get("servername"):
        port = properties.get("portnumber") or properties.get("port")
        authority = properties["servername"] + (f":{port}" if port else "")
    if "=" in database or not database:
        database = next((properties[key] for key in _JDBC_DATABASE_KEYS if properties.get(key)), "")
    return dataset_identity(f"{_JDBC_SCHEMES.get(scheme, scheme)}://{authority}",
                            ".".join(part for part in (database, table) if part))


def table_identity(catalog: str | None, database: str | None, table: str) -> DatasetIdentity:
    """A catalog table's identity: namespace the catalog (``spark_catalog``), name
    ``database.table``."""
    return dataset_identity(catalog or "spark_catalog", ".".join(part for part in (database, table) if part))

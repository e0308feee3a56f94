"""Links the pages follow, built from an entity by the core's ``to_path`` (the inverse of the
routes' ``from_path``), so no page re-derives REST path rules: this module is their one home.
Paths are relative to the API's prefix (``/lineage/``): API resources (``metadata``, ``tags``,
``lineage``, ``runs``...) and pages (``page``, ``lineagePage``, ``provenancePage``).

A page starts from what its own URL names (``ns`` and ``target``; ``ns``, ``type`` and
``name``; ``ns``, ``dataset`` and ``field``; ``ns`` alone): ``page_entity`` reads those
parameters back into the entity, whose links the ``/links`` route answers.
"""

from __future__ import annotations

from urllib.parse import quote, unquote, urlencode

from lineage.errors import InvalidEntityError
from lineage.model.metadata_entity import MetadataEntity, dataset_entity, entity, from_path, to_path


def _encoded(segments: tuple[str, ...]) -> str:
    return "/".join(quote(segment, safe="") for segment in segments)


def _page(page: str, **params: str | None) -> str:
    return f"ui/{page}?" + urlencode({key: value for key, value in params.items() if value})


def _namespace_path(namespace: str) -> str:
    return f"v3/namespaces/{quote(namespace, safe='')}"


def _path(subject: MetadataEntity) -> tuple[str, str]:
    """(API path, encoded target) of ``subject``: under its namespace, or ``v3/external/``."""
    namespace, segments, _ = to_path(subject)
    target = _encoded(segments)
    return (f"{_namespace_path(namespace)}/{target}" if namespace is not None else f"v3/external/{target}"), target


def entity_links(subject: MetadataEntity) -> dict[str, str]:
    """The API resources of ``subject`` and the pages that show it."""
    namespace, _, version = to_path(subject)
    path, target = _path(subject)
    page = "run" if subject.type == "program_run" else "entity"
    links = {"metadata": f"{path}/metadata", "tags": f"{path}/metadata/tags",
             "properties": f"{path}/metadata/properties", "history": f"{path}/metadata/history",
             "page": _page(page, ns=namespace, target=target, version=version,
                           external="1" if namespace is None else None)}
    name = subject.value(subject.type) or ""
    if subject.type in ("dataset", "stream"):
        links["lineage"] = f"{path}/lineage"
        links["lineageDiff"] = f"{path}/lineage/diff"
        links["lineagePage"] = _page("lineage", ns=namespace, type=subject.type, name=name)
        if subject.type == "dataset":
            links["fields"] = f"{path}/lineage/fields"
            links["schemas"] = f"{path}/schemas"
            links["incidents"] = f"{path}/incidents"
            links["blastRadius"] = f"{path}/blast-radius"
    elif subject.type == "namespace":
        links["search"] = f"{_namespace_path(name)}/metadata/search"
        links["suggest"] = f"{_namespace_path(name)}/metadata/suggest"
    elif subject.type == "program":
        links["runs"] = f"{path}/runs"
    elif subject.type == "program_run":
        links["run"] = path
        links["accesses"] = f"{path}/accesses"
        links["lineage"] = f"{path}/lineage"
    elif namespace is not None and [key for key, _ in subject.parts[:3]] == ["namespace", "dataset", "field"]:
        dataset = subject.value("dataset") or ""
        dataset_path, _ = _path(dataset_entity(namespace, "dataset", dataset))
        links["lineage"] = f"{dataset_path}/fields/{quote(name, safe='')}/lineage"
        links["lineageDiff"] = f"{links['lineage']}/diff"
        links["provenancePage"] = _page("fields", ns=namespace, dataset=dataset, field=name)
    return links


def details_links(entity_type: str, details: list[dict[str, str]]) -> dict[str, str]:
    """The links of an entity given as the API renders it (``{"type", "details"}``)."""
    return entity_links(entity(((part["key"], part["value"]) for part in details), entity_type))


def field_links(namespace: str, dataset: str, field: str) -> dict[str, str]:
    """The links of a dataset's field (its metadata entity is ``.../datasets/{ds}/field/{f}``)."""
    return entity_links(entity([*dataset_entity(namespace, "dataset", dataset).parts, ("field", field)]))


_NAMED_BY = ("a page names an entity by ns with target (version), external=1 with target, ns with type and name, "
             "ns with dataset and field, or ns alone")


def page_entity(ns: str | None = None, target: str | None = None, version: str | None = None,
                external: bool = False, data_type: str | None = None, name: str | None = None,
                dataset: str | None = None, field: str | None = None) -> MetadataEntity:
    """The entity a page's URL parameters name, the inverse of the ``page``, ``lineagePage`` and
    ``provenancePage`` links: ``target`` is the path under the namespace (or, with ``external``,
    an external resource's ``type/name`` pairs), each segment URL-encoded as ``page`` links give it."""
    given = {key for key, value in (("target", target), ("version", version), ("type", data_type), ("name", name),
                                    ("dataset", dataset), ("field", field)) if value}
    if external:
        segments = [unquote(part) for part in (target or "").split("/") if part]
        if ns or given - {"target"} or not segments or len(segments) % 2:
            raise InvalidEntityError(f"{_NAMED_BY}; an external entity is type/name pairs")
        return entity(zip(segments[::2], segments[1::2], strict=True))
    if not ns:
        raise InvalidEntityError(_NAMED_BY)
    if given <= {"target", "version"} and target:
        return from_path(ns, [unquote(part) for part in target.split("/") if part], version or None)
    if given == {"type", "name"} and data_type in ("dataset", "stream"):
        return dataset_entity(ns, data_type, name or "")
    if given == {"dataset", "field"}:
        return entity([*dataset_entity(ns, "dataset", dataset or "").parts, ("field", field or "")])
    if not given:
        return entity([("namespace", ns)])
    raise InvalidEntityError(_NAMED_BY)

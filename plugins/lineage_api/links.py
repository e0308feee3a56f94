"""Links the pages follow, built from an entity by the core's ``to_path`` (the inverse of the
routes' ``from_path``), so no page re-derives REST path rules. Paths are relative to the
API's prefix (``/lineage/``): API resources (``metadata``, ``lineage``, ``runs``...) and pages
(``page``, ``lineagePage``, ``provenancePage``).
"""

from __future__ import annotations

from urllib.parse import quote, urlencode

from lineage.metadata_entity import MetadataEntity, dataset_entity, entity, to_path


def _encoded(segments: tuple[str, ...]) -> str:
    return "/".join(quote(segment, safe="") for segment in segments)


def _page(page: str, **params: str | None) -> str:
    return f"ui/{page}?" + urlencode({key: value for key, value in params.items() if value})


def entity_links(subject: MetadataEntity) -> dict[str, str]:
    """The API resources of ``subject`` and the pages that show it."""
    namespace, segments, version = to_path(subject)
    target = _encoded(segments)
    path = f"v3/namespaces/{quote(namespace, safe='')}/{target}" if namespace is not None else f"v3/external/{target}"
    page = "run" if subject.type == "program_run" else "entity"
    links = {"metadata": f"{path}/metadata",
             "page": _page(page, ns=namespace, target=target, version=version,
                           external="1" if namespace is None else None)}
    name = subject.value(subject.type)
    if subject.type in ("dataset", "stream"):
        links["lineage"] = f"{path}/lineage"
        links["lineagePage"] = _page("lineage", ns=namespace, type=subject.type, name=name)
        if subject.type == "dataset":
            links["fields"] = f"{path}/lineage/fields"
    elif subject.type == "program":
        links["runs"] = f"{path}/runs"
    elif subject.type == "program_run":
        links["accesses"] = f"{path}/accesses"
    elif subject.type == "field" and [key for key, _ in subject.parts[:2]] == ["namespace", "dataset"]:
        links["provenancePage"] = _page("fields", ns=namespace, dataset=subject.value("dataset"), field=name)
    return links


def details_links(entity_type: str, details: list[dict[str, str]]) -> dict[str, str]:
    """The links of an entity given as the API renders it (``{"type", "details"}``)."""
    return entity_links(entity(((part["key"], part["value"]) for part in details), entity_type))


def field_links(namespace: str, dataset: str, field: str) -> dict[str, str]:
    """The links of a dataset's field (its metadata entity is ``.../datasets/{ds}/field/{f}``)."""
    return entity_links(entity([*dataset_entity(namespace, "dataset", dataset).parts, ("field", field)]))

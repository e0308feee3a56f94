"""Where a page starts: the links of the entity its own URL names (``lineage_api.links``).

Every other answer carries its entities' links; this is the one path the pages know, so no page
builds a REST path. Nothing is read from the warehouse: following a link answers 404 for an
entity that does not exist, and 403 for one the caller may not read.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from lineage_api.links import entity_links, page_entity
from lineage_api.models.base import Links

router = APIRouter()


@router.get("/links", response_model=Links)
def links(ns: Annotated[str | None, Query(description="the namespace")] = None,
          target: Annotated[str | None, Query(description="the entity's path under the namespace "
                                                          "(or an external resource's type/name pairs)")] = None,
          version: Annotated[str | None, Query(description="an application's version, with target")] = None,
          external: Annotated[bool, Query(description="target names an external resource (no ns)")] = False,
          data_type: Annotated[str | None, Query(alias="type", description="dataset or stream, with name")] = None,
          name: Annotated[str | None, Query(description="the dataset's or stream's name, with type")] = None,
          dataset: Annotated[str | None, Query(description="a dataset, with field")] = None,
          field: Annotated[str | None, Query(description="the dataset's field")] = None) -> dict[str, Any]:
    """The links of an entity named as a page's URL names it: ``ns`` with ``target`` (its path under
    the namespace, each segment URL-encoded, as ``datasets/orders``; ``version`` of an application),
    ``external=1`` with ``target`` (``database/crm/table/customers``), ``ns`` with ``type`` and
    ``name`` (a dataset or stream), ``ns`` with ``dataset`` and ``field``, or ``ns`` alone (the
    namespace: its ``search`` and ``suggest``)."""
    return entity_links(page_entity(ns, target, version, external, data_type, name, dataset, field))

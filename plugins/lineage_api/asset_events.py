"""Asset events the API emits (seed 001 "Notifications", seed 003 "Scheduling Logic"):

- each metadata change made through it, on ``lineage_metadata_changes`` with
  ``{"change_ids": [...], "source": "api", "updater": ...}``;
- each namespace deletion, on ``lineage_namespace_deletions`` with ``{"namespace",
  "deletion_id", "deleted_by"}``: the cleanup DAG is scheduled on it.

An asset exists once a DAG naming it has been parsed; until then the change is stored and a
warning says no event was sent.
"""

from __future__ import annotations

import logging
from typing import Any

from lineage.assets import METADATA_CHANGES, NAMESPACE_DELETIONS, AssetName

log = logging.getLogger(__name__)


def emit_metadata_changes(change_ids: list[int], updater: str) -> bool:
    """Record one asset event carrying ``change_ids``; False when the asset is not registered."""
    return _emit(METADATA_CHANGES, {"change_ids": change_ids, "source": "api", "updater": updater})


def emit_namespace_deletion(namespace: str, deletion_id: int, deleted_by: str) -> bool:
    """Record the deletion's asset event, which schedules the cleanup DAG."""
    return _emit(NAMESPACE_DELETIONS, {"namespace": namespace, "deletion_id": deletion_id, "deleted_by": deleted_by})


def _emit(asset: AssetName, extra: dict[str, Any]) -> bool:
    from airflow.assets.manager import asset_manager
    from airflow.models.asset import AssetModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        model = session.scalar(select(AssetModel).where(AssetModel.name == asset.name, AssetModel.uri == asset.uri))
        if model is None:
            log.warning("asset %s is not registered yet (parse the lineage DAGs); stored without an asset event: %s",
                        asset.name, extra)
            return False
        event = asset_manager.register_asset_change(asset=model, extra=extra, source_is_api=True, session=session)
    return event is not None

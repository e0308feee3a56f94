"""Asset events the API emits: each metadata change made through it (seed 001 "Notifications").

The event goes to the asset ``lineage_metadata_changes`` (``lineage.assets.METADATA_CHANGES``)
with ``{"change_ids": [...], "source": "api", "updater": ...}``, so a DAG scheduled on it runs
on metadata changes. The asset exists once the compaction DAG, which also emits it, has been
parsed; until then the change is stored and a warning says no event was sent.
"""

from __future__ import annotations

import logging

from lineage.assets import METADATA_CHANGES

log = logging.getLogger(__name__)


def emit_metadata_changes(change_ids: list[int], updater: str) -> bool:
    """Record one asset event carrying ``change_ids``; False when the asset is not registered."""
    from airflow.assets.manager import asset_manager
    from airflow.models.asset import AssetModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        model = session.scalar(select(AssetModel).where(AssetModel.name == METADATA_CHANGES.name,
                                                        AssetModel.uri == METADATA_CHANGES.uri))
        if model is None:
            log.warning("asset %s is not registered yet (parse the lineage_compaction DAG); "
                        "metadata changes %s were stored without an asset event", METADATA_CHANGES.name, change_ids)
            return False
        event = asset_manager.register_asset_change(
            asset=model, extra={"change_ids": change_ids, "source": "api", "updater": updater},
            source_is_api=True, session=session)
    return event is not None

"""The Airflow Assets the warehouse publishes: names and URIs in one place, for the DAGs that
emit them, the plugin that emits metadata changes, and the DAGs users write to subscribe.

    from airflow.sdk import Asset, dag
    from warehouse.service.assets import METADATA_CHANGES

    @dag(schedule=[Asset(name=METADATA_CHANGES.name, uri=METADATA_CHANGES.uri)])
    def on_metadata_change(): ...   # each event's extra carries {"change_ids": [...]}
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote


@dataclass(frozen=True)
class AssetName:
    name: str
    uri: str


RUNS = AssetName("lineage_runs", "lineage://warehouse/lineage/runs")
DATASET_ACCESSES = AssetName("lineage_dataset_accesses", "lineage://warehouse/lineage/dataset_accesses")
PENDING_EVENTS = AssetName("lineage_pending_events", "lineage://warehouse/lineage/pending_events")
MARTS = AssetName("lineage_marts", "lineage://warehouse/lineage_marts")
METADATA_CHANGES = AssetName("lineage_metadata_changes", "lineage://warehouse/lineage/metadata_changes")
NAMESPACE_DELETIONS = AssetName("lineage_namespace_deletions", "lineage://warehouse/lineage/namespace_deletions")
DATASET_CHANGES = "lineage_dataset_changes"
"""The asset alias the compaction DAG emits each changed dataset's event through (``dataset_asset``);
schedule a DAG on one dataset's asset to hear when its lineage changes."""


def dataset_asset(namespace: str, dataset_type: str, name: str) -> AssetName:
    """The asset of a dataset (or stream) of the warehouse: its lineage changes are its events,
    each event's extra the day and the changes (``warehouse.pipeline.change_announcements``)."""
    return _per_dataset("lineage_dataset", "datasets", namespace, dataset_type, name)


BLAST_RADIUS = "lineage_blast_radius"
"""The asset alias the compaction DAG emits each dataset an incident's bad writes reached through
(``affected_asset``); schedule a DAG on one dataset's to hear when bad data reached it."""


def affected_asset(namespace: str, dataset_type: str, name: str) -> AssetName:
    """The asset whose events say that bad data reached a dataset: each event's extra names the
    incident, the level and whether the dataset still holds it
    (``warehouse.pipeline.blast_announcements``)."""
    return _per_dataset("lineage_affected", "affected", namespace, dataset_type, name)


def _per_dataset(prefix: str, folder: str, namespace: str, dataset_type: str, name: str) -> AssetName:
    """One dataset's asset of a kind: its name readable, its URI's path segments quoted."""
    path = "/".join(quote(part, safe="") for part in (namespace, dataset_type, name))
    return AssetName(f"{prefix}.{namespace}.{dataset_type}.{name}", f"lineage://warehouse/{folder}/{path}")

"""Asset events the API emits ("Notifications" of the *Metadata and Data Discovery* design,
"Scheduling Logic" of the *System Applications (CDAP 6.0)* design):

- each metadata change made through it, on ``lineage_metadata_changes`` with
  ``{"change_ids": [...], "source": "api", "updater": ...}``;
- each namespace deletion, on ``lineage_namespace_deletions`` with ``{"namespace",
  "deletion_id", "deleted_by"}``: the cleanup DAG is scheduled on it.

They go through Airflow's public interface, its stable REST API, as the caller: ``GET
/api/v2/assets`` finds the asset's id, ``POST /api/v2/assets/events`` records the event (Airflow
adds ``"from_rest_api": true`` to its extra). The caller's own token travels (the
``Authorization`` header, or the UI's ``_token`` cookie), so Airflow decides whether they may
create asset events (the simple auth manager: role OP or above).

The API is reached at ``LINEAGE_AIRFLOW_API_URL`` when set, else at the api-server serving
the request (the plugin is mounted in it). An event that cannot be recorded (the asset is not
registered until a DAG naming it was parsed, Airflow refuses the caller, Airflow does not
answer) leaves the change stored: the answer says ``assetEvent: false`` and a warning is
logged; the cleanup DAG also cleans deletions whose event was missed, on its next run.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import httpx
from fastapi import Request

from warehouse.service.assets import METADATA_CHANGES, NAMESPACE_DELETIONS, AssetName

log = logging.getLogger(__name__)
TIMEOUT_S = 10.0


@dataclass(frozen=True)
class AirflowApi:
    """Airflow's REST API at ``base`` (its root, before ``/api/v2``), called with ``token``."""

    base: str
    token: str | None

    @classmethod
    def for_request(cls, request: Request, configured: str | None) -> AirflowApi:
        scheme, _, credentials = request.headers.get("authorization", "").partition(" ")
        token = credentials if scheme.lower() == "bearer" and credentials else request.cookies.get("_token")
        if configured:
            return cls(configured, token)
        # The mounted app's root path ends with its own prefix; Airflow's root is before it.
        mount = request.scope.get("root_path", "")
        airflow_root = mount.rsplit("/", 1)[0] if mount else ""
        return cls(f"{request.url.scheme}://{request.url.netloc}{airflow_root}", token)

    def emit(self, asset: AssetName, extra: dict[str, Any]) -> bool:
        """Record one event of ``asset``; False (and a warning) when it cannot be recorded."""
        if not self.token:
            log.warning("no Airflow token in the request: no asset event on %s %s", asset.name, extra)
            return False
        headers = {"Authorization": f"Bearer {self.token}"}
        try:
            with httpx.Client(base_url=f"{self.base}/api/v2", headers=headers, timeout=TIMEOUT_S) as client:
                found = client.get("/assets", params={"name_pattern": asset.name, "uri_pattern": asset.uri,
                                                      "limit": 100})
                found.raise_for_status()
                ids = [a["id"] for a in found.json()["assets"] if (a["name"], a["uri"]) == (asset.name, asset.uri)]
                if not ids:
                    log.warning("asset %s is not registered yet (parse the lineage DAGs); stored without an asset "
                                "event: %s", asset.name, extra)
                    return False
                client.post("/assets/events", json={"asset_id": ids[0], "extra": extra}).raise_for_status()
        except httpx.HTTPStatusError as error:
            log.warning("Airflow refused the asset event on %s (%s: %s); stored without it: %s", asset.name,
                        error.response.status_code, error.response.text[:300], extra)
            return False
        except httpx.HTTPError as error:
            log.warning("Airflow's API at %s did not answer (%s); no asset event on %s: %s", self.base, error,
                        asset.name, extra)
            return False
        return True


def emit_metadata_changes(airflow: AirflowApi, change_ids: list[int], updater: str) -> bool:
    """Record one asset event carrying ``change_ids``."""
    return airflow.emit(METADATA_CHANGES, {"change_ids": change_ids, "source": "api", "updater": updater})


def emit_namespace_deletion(airflow: AirflowApi, namespace: str, deletion_id: int, deleted_by: str) -> bool:
    """Record the deletion's asset event, which schedules the cleanup DAG."""
    return airflow.emit(NAMESPACE_DELETIONS, {"namespace": namespace, "deletion_id": deletion_id,
                                              "deleted_by": deleted_by})

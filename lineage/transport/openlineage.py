"""An ``openlineage-python`` transport that writes events straight into the raw log root.

For producers that run where the log root is reachable (Airflow workers with the OpenLineage
provider, ``dbt-ol``, any Python job): no HTTP hop, no api-server to keep up. Configure it by
dotted path, e.g. in ``openlineage.yml``::

    transport:
      type: lineage.transport.openlineage.RawLogTransport
      log_root: s3a://lake/lineage/raw-events   # default: LINEAGE_LOG_ROOT
      namespace_map: "airflow=etl"               # default: LINEAGE_NAMESPACE_MAP

or ``OPENLINEAGE__TRANSPORT__TYPE=lineage.transport.openlineage.RawLogTransport``.

Each event is wrapped verbatim in an ``openlineage`` envelope (format v2) and written as one
atomic file of the hour's partition, like the client's own files. A malformed event is written
all the same, so the compaction quarantines it with its reason instead of it vanishing in a
producer's log. This module is only imported by ``openlineage-python``, which it needs.
"""

from __future__ import annotations

from typing import Any

import orjson
from openlineage.client.serde import Serde
from openlineage.client.transport.transport import Config, Transport

from lineage.naming.identity import NamespaceMap
from lineage.openlineage.mapping import envelope_of
from lineage.settings import Settings, namespace_map
from lineage.transport.log_file import EventLogWriter


class RawLogConfig(Config):
    """Where the transport writes (``log_root``) and how namespaces map (``namespace_map``)."""

    def __init__(self, log_root: str, namespaces: NamespaceMap) -> None:
        self.log_root = log_root
        self.namespaces = namespaces

    @classmethod
    def from_dict(cls, params: dict[str, Any]) -> RawLogConfig:
        settings = Settings.from_env()
        raw_map = params.get("namespace_map")
        return cls(str(params.get("log_root") or settings.log_root),
                   namespace_map(str(raw_map)) if raw_map else settings.namespace_map)


class RawLogTransport(Transport):
    """Writes each OpenLineage event into the warehouse's raw log root."""

    kind = "lineage_raw_log"
    config_class = RawLogConfig

    def __init__(self, config: RawLogConfig) -> None:
        self.config = config
        self._writer = EventLogWriter(config.log_root)

    def emit(self, event: Any) -> str:
        """Write ``event`` (an openlineage-python event object or a dict); returns the file written."""
        payload = event if isinstance(event, dict) else orjson.loads(Serde.to_json(event))
        return self._writer.write([envelope_of(payload, self.config.namespaces)], prefix="openlineage")

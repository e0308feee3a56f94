"""Every setting of the product, read from environment variables prefixed ``LINEAGE_``.

This is the only module that reads the environment. The defaults describe the embedded
setup: a project-local folder (``.local/`` in a checkout) for raw logs and PostgreSQL, local
Spark, an hourly compaction.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from lineage.errors import InvalidEntityError, SettingsError
from lineage.naming.identity import NamespaceMap

PREFIX = "LINEAGE_"
WAREHOUSE_CONN_ID = "lineage_warehouse"

# Spark's defaults for the embedded setup: under ``spark-submit`` only the keys it left unset.
LOCAL_SPARK_MASTER = "local[2]"
DEFAULT_SPARK_CONF: dict[str, str] = {
    "spark.driver.memory": "2g",
    "spark.sql.shuffle.partitions": "4",
    "spark.ui.enabled": "false",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.ui.showConsoleProgress": "false",
}


CHECKOUT = Path(__file__).resolve().parents[1]
# A checkout (or its editable install) keeps the DAGs and the dbt project in ``dags/`` and ``dbt/``;
# an installed wheel puts them beside this package, as ``lineage_dags`` and ``lineage_dbt``
# (pyproject.toml's package-dir).
IN_CHECKOUT = (CHECKOUT / "pyproject.toml").exists()
DAGS_FOLDER = CHECKOUT / ("dags" if IN_CHECKOUT else "lineage_dags")
DBT_PROJECT = CHECKOUT / ("dbt" if IN_CHECKOUT else "lineage_dbt")


def _default_home() -> Path:
    if IN_CHECKOUT:
        return CHECKOUT / ".local"
    return Path.home() / ".lineage"


def _default_dbt_bin() -> str:
    local = CHECKOUT / ".venv-dbt" / "bin" / "dbt"
    return str(local) if local.exists() else "dbt"


@dataclass(frozen=True)
class Settings:
    """Resolved settings; build with ``Settings.from_env()``."""

    home: Path
    log_root: str
    database_url: str
    pg_port: int
    # ``LINEAGE_SPARK_MASTER``; None: spark-submit's ``--master`` when launched by it, else local.
    spark_master: str | None = None
    # ``LINEAGE_SPARK_CONF`` only; ``spark_jobs.session`` lays it over ``DEFAULT_SPARK_CONF``.
    spark_conf: dict[str, str] = field(default_factory=dict)
    schedule: str = "@hourly"
    lookback_hours: int = 168
    # On a log root without folder times (object stores), how often a scheduled compaction lists
    # every partition for files delivered into hours older than the lookback (0: never; then
    # ``lineage compact --late``). Local and HDFS roots check every partition on every run.
    late_sweep_hours: int = 24
    max_event_bytes: int = 1_048_576
    max_clock_skew_hours: int = 24  # an event time further ahead of the compaction's clock is quarantined
    event_id_retention_days: int = 7
    # A processed field operation or metadata change record stays in lineage.pending_events this
    # many days (to look at), then a compaction deletes it; the raw log keeps every event. 0 (the
    # default): deleted by the first compaction after it was processed.
    pending_retention_days: int = 0
    compaction_chunk_mb: int = 32
    # A compaction started without a Spark session parses new local log files of at most this
    # many MB in its own process (no JVM start); larger batches and remote log roots use Spark.
    # Default: 1024 when Spark would run on this machine anyway (no LINEAGE_SPARK_MASTER, not
    # under spark-submit), where it only adds a JVM; 16 when a cluster is there to use.
    in_process_mb: int = 1024
    # The field lineage stage derives at most this many pending field operation records in its
    # own process (no JVM start); more go to Spark. Default: 20,000 (one chunk) on one machine,
    # 2,000 when a cluster is there to use.
    field_lineage_in_process_records: int = 20_000
    # The ``lineage_refresh`` DAG (compaction + marts on every new raw log file, ``dags/``).
    refresh_on_new_files: bool = False
    embedded_postgres: bool = True
    dbt_bin: str = "dbt"
    dbt_project_dir: Path = DBT_PROJECT
    # Run the marts' build under ``dbt-ol`` (next to ``dbt_bin``), so the warehouse records the
    # lineage of its own marts through the in-process OpenLineage transport.
    dbt_openlineage: bool = False
    auto_create_namespaces: bool = False
    # The API (one connection pool per api-server process): its size, how long a request waits
    # to connect or for a free connection, and the longest one SQL statement may run.
    api_pool_size: int = 8
    api_connect_timeout_s: int = 5
    api_statement_timeout_ms: int = 30_000
    # OpenLineage namespaces -> warehouse namespaces (``LINEAGE_NAMESPACE_MAP``, lineage.naming.identity).
    namespace_map: NamespaceMap = field(default_factory=NamespaceMap)
    # The OpenLineage endpoint's log (``warehouse.ingest.sealed_log``): the local spool of its open files
    # (None: ``_spool`` under a local log root, else under ``home``), when a file is sealed into
    # the log (age, size), and the largest request body it takes (after gzip).
    ingest_spool: Path | None = None
    # Where the client spills a run's events when the log root stays unavailable (lineage.client.delivery).
    spill_dir: Path = Path(".local/spill")
    write_attempts: int = 3
    ingest_seal_seconds: int = 60
    ingest_seal_mb: int = 16
    ingest_max_request_mb: int = 64
    # The most events one OpenLineage request may carry (a larger array is answered 413 before
    # any event is checked), and how long reading a request body may take (a stalled body 408).
    ingest_max_events: int = 10_000
    ingest_read_seconds: int = 60
    # Where the API reaches Airflow's REST API to emit asset events (None: the api-server that
    # serves the request, at the address it was called by).
    airflow_api_url: str | None = None
    # Tags that follow the data (warehouse.service.tag_propagation): tag -> propagation policy
    # (``LINEAGE_TAG_POLICIES``, a JSON object; "default" is DIRECT IDENTITY and TRANSFORMATION,
    # masking and aggregation stop it), and the window the compaction DAG propagates over.
    tag_policies: dict[str, str] = field(default_factory=lambda: {"PII": "default"})
    tag_propagation_days: int = 30

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Read settings from ``environ`` (default: the process environment)."""
        env = os.environ if environ is None else environ
        home = Path(env.get(PREFIX + "HOME") or _default_home())
        pg_port = _int(env, "PG_PORT", 54329, minimum=1, maximum=65535)
        database_url = env.get(PREFIX + "DATABASE_URL") or (
            f"postgresql+psycopg://postgres@127.0.0.1:{pg_port}/lineage"
        )
        return cls(
            home=home,
            log_root=env.get(PREFIX + "LOG_ROOT") or str(home / "raw-events"),
            database_url=_check_database_url(database_url),
            pg_port=pg_port,
            spark_master=env.get(PREFIX + "SPARK_MASTER") or None,
            spark_conf=_spark_conf(env.get(PREFIX + "SPARK_CONF", "")),
            schedule=env.get(PREFIX + "SCHEDULE") or "@hourly",
            lookback_hours=_int(env, "LOOKBACK_HOURS", 168, minimum=1, maximum=24 * 366),
            late_sweep_hours=_int(env, "LATE_SWEEP_HOURS", 24, minimum=0, maximum=24 * 366),
            max_event_bytes=_int(env, "MAX_EVENT_BYTES", 1_048_576, minimum=1024, maximum=64 * 1_048_576),
            max_clock_skew_hours=_int(env, "MAX_CLOCK_SKEW_HOURS", 24, minimum=1, maximum=24 * 366),
            event_id_retention_days=_int(env, "EVENT_ID_RETENTION_DAYS", 7, minimum=1, maximum=3650),
            pending_retention_days=_int(env, "PENDING_RETENTION_DAYS", 0, minimum=0, maximum=3650),
            compaction_chunk_mb=_int(env, "COMPACTION_CHUNK_MB", 32, minimum=1, maximum=65536),
            in_process_mb=_int(env, "COMPACTION_IN_PROCESS_MB", IN_PROCESS_MB_CLUSTER if _spark_cluster(env)
                               else IN_PROCESS_MB_LOCAL, minimum=0, maximum=65536),
            field_lineage_in_process_records=_int(
                env, "FIELD_LINEAGE_IN_PROCESS_RECORDS", IN_PROCESS_RECORDS_CLUSTER if _spark_cluster(env)
                else IN_PROCESS_RECORDS_LOCAL, minimum=0, maximum=10_000_000),
            refresh_on_new_files=_bool(env, "REFRESH_ON_NEW_FILES", False),
            embedded_postgres=not env.get(PREFIX + "DATABASE_URL"),
            dbt_bin=env.get(PREFIX + "DBT_BIN") or _default_dbt_bin(),
            dbt_project_dir=Path(env.get(PREFIX + "DBT_PROJECT_DIR") or DBT_PROJECT),
            dbt_openlineage=_bool(env, "DBT_OPENLINEAGE", False),
            auto_create_namespaces=_bool(env, "AUTO_CREATE_NAMESPACES", False),
            api_pool_size=_int(env, "API_POOL_SIZE", 8, minimum=1, maximum=1000),
            api_connect_timeout_s=_int(env, "API_CONNECT_TIMEOUT_S", 5, minimum=1, maximum=600),
            api_statement_timeout_ms=_int(env, "API_STATEMENT_TIMEOUT_MS", 30_000, minimum=100, maximum=3_600_000),
            airflow_api_url=_check_http_url(env, "AIRFLOW_API_URL"),
            namespace_map=namespace_map(env.get(PREFIX + "NAMESPACE_MAP", "")),
            ingest_spool=Path(env[PREFIX + "INGEST_SPOOL"]) if env.get(PREFIX + "INGEST_SPOOL") else None,
            spill_dir=Path(env.get(PREFIX + "SPILL_DIR") or home / "spill"),
            write_attempts=_int(env, "WRITE_ATTEMPTS", 3, minimum=1, maximum=20),
            ingest_seal_seconds=_int(env, "INGEST_SEAL_SECONDS", 60, minimum=1, maximum=60),
            ingest_seal_mb=_int(env, "INGEST_SEAL_MB", 16, minimum=1, maximum=4096),
            ingest_max_request_mb=_int(env, "INGEST_MAX_REQUEST_MB", 64, minimum=1, maximum=1024),
            ingest_max_events=_int(env, "INGEST_MAX_EVENTS", 10_000, minimum=1, maximum=1_000_000),
            ingest_read_seconds=_int(env, "INGEST_READ_SECONDS", 60, minimum=1, maximum=3600),
            tag_policies=_tag_policies(env.get(PREFIX + "TAG_POLICIES", "")),
            tag_propagation_days=_int(env, "TAG_PROPAGATION_DAYS", 30, minimum=1, maximum=3660),
        )

    def spool(self) -> Path:
        """Where the OpenLineage endpoint keeps its open log files: ``LINEAGE_INGEST_SPOOL``, else
        ``_spool`` under a local log root (same filesystem: sealing is a rename), else
        ``$LINEAGE_HOME/ingest-spool``."""
        if self.ingest_spool is not None:
            return self.ingest_spool
        scheme = urlsplit(self.log_root).scheme
        if scheme in ("", "file"):
            return Path(urlsplit(self.log_root).path if scheme else self.log_root) / "_spool"
        return self.home / "ingest-spool"


# The warehouse URL's own parameter for a connection pooler in front of PostgreSQL, named after
# PgBouncer's setting: ``?pool_mode=transaction`` (PgBouncer's transaction pooling). libpq
# never sees it (``libpq_url`` removes it); ``session`` (the default) is a direct connection or
# session pooling. Statement pooling cannot run a multi-statement transaction: refused.
POOL_MODE = "pool_mode"
POOL_MODES = ("session", "transaction")


def pool_mode(database_url: str) -> str:
    """The URL's ``pool_mode`` (``session`` when absent); SettingsError for any other value."""
    modes = [unquote(value) for key, _, value in _query_items(database_url) if unquote(key) == POOL_MODE]
    if not modes:
        return "session"
    mode = modes[-1].strip().lower()
    if mode == "statement":
        raise SettingsError(f"{POOL_MODE}=statement: the compaction and the migrations need multi-statement "
                            f"transactions; run PgBouncer in transaction mode and set {POOL_MODE}=transaction")
    if mode not in POOL_MODES:
        raise SettingsError(f"{POOL_MODE} must be one of {', '.join(POOL_MODES)}, got {modes[-1]!r}")
    return mode


def connect_options(database_url: str) -> dict[str, Any]:
    """psycopg's connection options for ``database_url``: behind transaction pooling, no
    statement is ever prepared (psycopg prepares one on its 5th execution on a connection, and
    PgBouncer 1.18 would send the next execution to a server connection that never saw it)."""
    return {"prepare_threshold": None} if pool_mode(database_url) == "transaction" else {}


def libpq_url(database_url: str) -> str:
    """The URL psycopg and libpq accept (``postgresql://``) for a SQLAlchemy-style URL, without
    our own ``pool_mode`` parameter (validated here: every connection passes through)."""
    pool_mode(database_url)
    parts = urlsplit(without_parameters(database_url, POOL_MODE))
    return urlunsplit(("postgresql", *parts[1:]))


def without_parameters(database_url: str, *names: str) -> str:
    """``database_url`` without the query parameters ``names`` (the rest kept as written)."""
    parts = urlsplit(database_url)
    query = "&".join(item for item in parts.query.split("&") if item and unquote(item.partition("=")[0]) not in names)
    return urlunsplit((*parts[:3], query, parts.fragment))


def _query_items(database_url: str) -> list[tuple[str, str, str]]:
    return [item.partition("=") for item in urlsplit(database_url).query.split("&") if item]


def redact_url(database_url: str) -> str:
    """The URL with its password replaced by ``***``, for logs and summaries."""
    parts = urlsplit(database_url)
    if parts.password is None:
        return database_url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit((parts.scheme, netloc, *parts[2:]))


def _check_database_url(url: str) -> str:
    scheme = urlsplit(url).scheme
    if scheme not in ("postgresql", "postgresql+psycopg", "postgres"):
        raise SettingsError(
            f"{PREFIX}DATABASE_URL must be a PostgreSQL URL (postgresql+psycopg://user:pass@host:port/db), "
            f"got scheme {scheme!r}"
        )
    pool_mode(url)
    return url


def _check_http_url(env: Mapping[str, str], name: str) -> str | None:
    raw = (env.get(PREFIX + name) or "").strip()
    if not raw:
        return None
    parts = urlsplit(raw)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise SettingsError(f"{PREFIX}{name} must be an http(s) URL such as http://airflow:8080, got {raw!r}")
    return raw.rstrip("/")


def _int(env: Mapping[str, str], name: str, default: int, *, minimum: int, maximum: int) -> int:
    raw = env.get(PREFIX + name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError as exc:
        raise SettingsError(f"{PREFIX}{name} must be an integer, got {raw!r}") from exc
    if not minimum <= value <= maximum:
        raise SettingsError(f"{PREFIX}{name} must be between {minimum} and {maximum}, got {value}")
    return value


def _bool(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = (env.get(PREFIX + name) or "").strip().lower()
    if not raw:
        return default
    if raw in ("true", "1", "yes", "on"):
        return True
    if raw in ("false", "0", "no", "off"):
        return False
    raise SettingsError(f"{PREFIX}{name} must be true or false, got {raw!r}")


IN_PROCESS_MB_LOCAL, IN_PROCESS_MB_CLUSTER = 1024, 16
IN_PROCESS_RECORDS_LOCAL, IN_PROCESS_RECORDS_CLUSTER = 20_000, 2_000


def _spark_cluster(env: Mapping[str, str]) -> bool:
    """Whether Spark jobs go to a cluster: ``LINEAGE_SPARK_MASTER`` is set, or ``spark-submit``
    launched this process (it leaves its JVM's gateway port in the environment)."""
    return bool(env.get(PREFIX + "SPARK_MASTER")) or "PYSPARK_GATEWAY_PORT" in env


def _spark_conf(raw: str) -> dict[str, str]:
    """Parse ``LINEAGE_SPARK_CONF``: a JSON object, or ``key=value`` pairs separated by commas."""
    return _pairs(raw, "SPARK_CONF", lambda item: item.partition("="))


def _tag_policies(raw: str) -> dict[str, str]:
    """``LINEAGE_TAG_POLICIES``: a JSON object of tag -> policy text (default ``{"PII": "default"}``;
    ``{}`` propagates no tag). The policies' texts are checked where they are read."""
    if not raw.strip():
        return {"PII": "default"}
    if not raw.strip().startswith("{"):
        raise SettingsError(f"{PREFIX}TAG_POLICIES must be a JSON object of tag -> policy, "
                            'e.g. {"PII": "default", "email": "carries=IDENTITY"}')
    return _pairs(raw, "TAG_POLICIES", lambda item: item.partition("="))


def namespace_map(raw: str) -> NamespaceMap:
    """Parse ``LINEAGE_NAMESPACE_MAP``: ``prefix=namespace`` pairs (or a JSON object), e.g.
    ``s3://finance-=finance,postgres://shop-db:5432=shop`` (the last ``=`` splits a pair)."""
    try:
        return NamespaceMap.of(_pairs(raw, "NAMESPACE_MAP", lambda item: item.rpartition("=")).items())
    except InvalidEntityError as exc:
        raise SettingsError(f"{PREFIX}NAMESPACE_MAP: {exc}") from exc


def _pairs(raw: str, name: str, split: Callable[[str], tuple[str, str, str]]) -> dict[str, str]:
    """A JSON object, or ``key=value`` items separated by commas (``split`` finds the ``=``)."""
    raw = raw.strip()
    if not raw:
        return {}
    if raw.startswith("{"):
        try:
            loaded = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise SettingsError(f"{PREFIX}{name} is not valid JSON: {exc.msg}") from exc
        if not isinstance(loaded, dict):
            raise SettingsError(f"{PREFIX}{name} must be a JSON object, got {type(loaded).__name__}")
        return {str(key): str(value) for key, value in loaded.items()}
    pairs: dict[str, str] = {}
    for item in raw.split(","):
        key, sep, value = split(item)
        if not sep or not key.strip():
            raise SettingsError(f"{PREFIX}{name} entry {item!r} is not key=value")
        pairs[key.strip()] = value.strip()
    return pairs

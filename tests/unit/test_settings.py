from __future__ import annotations

import pytest

from lineage.errors import SettingsError
from lineage.settings import Settings, connect_options, libpq_url, pool_mode, redact_url


def test_defaults_describe_the_embedded_setup(tmp_path) -> None:  # type: ignore[no-untyped-def]
    settings = Settings.from_env({"LINEAGE_HOME": str(tmp_path)})
    assert settings.log_root == str(tmp_path / "raw-events")
    assert settings.database_url == "postgresql+psycopg://postgres@127.0.0.1:54329/lineage"
    assert settings.embedded_postgres is True
    assert settings.spark_master is None  # spark-submit's master when launched by it, else local[2]
    assert settings.spark_conf == {}
    assert settings.schedule == "@hourly"
    assert settings.dbt_openlineage is False


def test_every_setting_comes_from_one_prefix() -> None:
    settings = Settings.from_env({
        "LINEAGE_LOG_ROOT": "s3a://bucket/lineage",
        "LINEAGE_DATABASE_URL": "postgresql://u:p@db:5432/wh",
        "LINEAGE_SPARK_MASTER": "spark://master:7077",
        "LINEAGE_SPARK_CONF": "spark.executor.memory=4g, spark.sql.shuffle.partitions=64",
        "LINEAGE_SCHEDULE": "*/15 * * * *",
        "LINEAGE_LOOKBACK_HOURS": "24",
    })
    assert settings.log_root == "s3a://bucket/lineage"
    assert settings.embedded_postgres is False
    assert settings.spark_master == "spark://master:7077"
    assert settings.spark_conf["spark.executor.memory"] == "4g"
    assert settings.spark_conf["spark.sql.shuffle.partitions"] == "64"
    assert settings.schedule == "*/15 * * * *"
    assert settings.lookback_hours == 24


def test_spark_conf_accepts_json() -> None:
    settings = Settings.from_env({"LINEAGE_SPARK_CONF": '{"spark.driver.memory": "8g"}'})
    assert settings.spark_conf["spark.driver.memory"] == "8g"


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"LINEAGE_PG_PORT": "abc"}, "LINEAGE_PG_PORT must be an integer, got 'abc'"),
        ({"LINEAGE_LOOKBACK_HOURS": "0"}, "LINEAGE_LOOKBACK_HOURS must be between 1 and"),
        ({"LINEAGE_DATABASE_URL": "mysql://x/y"}, "must be a PostgreSQL URL"),
        ({"LINEAGE_SPARK_CONF": "novalue"}, "entry 'novalue' is not key=value"),
        ({"LINEAGE_SPARK_CONF": "{not json"}, "not valid JSON"),
        ({"LINEAGE_DBT_OPENLINEAGE": "maybe"}, "LINEAGE_DBT_OPENLINEAGE must be true or false, got 'maybe'"),
    ],
)
def test_bad_settings_fail_with_the_bad_value_named(env: dict[str, str], message: str) -> None:
    with pytest.raises(SettingsError, match=message.replace("(", r"\(").replace("[", r"\[")):
        Settings.from_env(env)


def test_urls_convert_and_redact() -> None:
    assert libpq_url("postgresql+psycopg://u:secret@h:1/db") == "postgresql://u:secret@h:1/db"
    assert redact_url("postgresql://u:secret@h:1/db") == "postgresql://u:***@h:1/db"
    assert redact_url("postgresql://u@h:1/db") == "postgresql://u@h:1/db"


@pytest.mark.parametrize(("url", "mode", "for_libpq", "options"), [
    ("postgresql://u:p@h:1/db", "session", "postgresql://u:p@h:1/db", {}),
    ("postgresql+psycopg://u:p@h:6432/db?sslmode=require&pool_mode=transaction",
     "transaction", "postgresql://u:p@h:6432/db?sslmode=require", {"prepare_threshold": None}),
    ("postgresql://u:p@h:6432/db?pool_mode=Transaction&options=-c%20work_mem%3D1GB",
     "transaction", "postgresql://u:p@h:6432/db?options=-c%20work_mem%3D1GB", {"prepare_threshold": None}),
    ("postgresql://u:p@h:5432/db?pool_mode=session&sslmode=verify-full",
     "session", "postgresql://u:p@h:5432/db?sslmode=verify-full", {}),
])
def test_pool_mode_is_read_from_the_url_and_never_reaches_libpq(url: str, mode: str, for_libpq: str,
                                                                 options: dict[str, object]) -> None:
    assert pool_mode(url) == mode
    assert libpq_url(url) == for_libpq
    assert connect_options(url) == options


@pytest.mark.parametrize(("value", "message"), [
    ("statement", "pool_mode=statement: the compaction and the migrations need multi-statement transactions"),
    ("txn", "pool_mode must be one of session, transaction, got 'txn'"),
])
def test_a_pool_mode_that_cannot_work_is_refused_by_name(value: str, message: str) -> None:
    url = f"postgresql://u:p@h:6432/db?pool_mode={value}"
    for read in (pool_mode, libpq_url, lambda u: Settings.from_env({"LINEAGE_DATABASE_URL": u})):
        with pytest.raises(SettingsError, match=message):
            read(url)


def test_namespace_map_is_read_from_pairs_or_json_and_bad_targets_fail() -> None:
    mapped = Settings.from_env({"LINEAGE_NAMESPACE_MAP": "s3://finance-=finance, postgres://db:5432=shop"})
    assert mapped.namespace_map.for_dataset("s3://finance-raw") == "finance"
    assert mapped.namespace_map.for_dataset("postgres://db:5432") == "shop"
    assert Settings.from_env({"LINEAGE_NAMESPACE_MAP": '{"kafka://": "streams"}'}).namespace_map.for_dataset(
        "kafka://broker:9092") == "streams"
    with pytest.raises(SettingsError, match="LINEAGE_NAMESPACE_MAP"):
        Settings.from_env({"LINEAGE_NAMESPACE_MAP": "s3://=not-a-namespace"})


def test_compactions_parse_in_process_up_to_a_gigabyte_on_one_machine_and_16_mb_beside_a_cluster() -> None:
    from lineage.settings import Settings

    assert Settings.from_env({}).in_process_mb == 1024  # local Spark would share these cores
    assert Settings.from_env({"LINEAGE_SPARK_MASTER": "spark://spark:7077"}).in_process_mb == 16
    assert Settings.from_env({"PYSPARK_GATEWAY_PORT": "40123"}).in_process_mb == 16  # under spark-submit
    always_spark = {"LINEAGE_SPARK_MASTER": "yarn", "LINEAGE_COMPACTION_IN_PROCESS_MB": "0"}
    assert Settings.from_env(always_spark).in_process_mb == 0

"""The conf a SparkSession is built with (``spark_jobs.session.session_conf``); no JVM starts."""

from __future__ import annotations

from pyspark import SparkConf

from lineage.settings import DEFAULT_SPARK_CONF
from spark_jobs.session import session_conf


def test_session_conf_lays_the_users_conf_over_the_defaults() -> None:
    conf = session_conf({"spark.sql.shuffle.partitions": "64", "spark.executor.memory": "4g"}, None, {})
    assert conf == {**DEFAULT_SPARK_CONF, "spark.sql.shuffle.partitions": "64", "spark.executor.memory": "4g"}


def test_session_conf_keeps_what_spark_submit_set_unless_the_user_overrides_it() -> None:
    submitted = SparkConf(loadDefaults=False).setAll([("spark.sql.shuffle.partitions", "200"),
                                                      ("spark.driver.memory", "8g")])
    conf = session_conf({"spark.driver.memory": "3g"}, submitted, {})
    assert "spark.sql.shuffle.partitions" not in conf  # spark-submit's 200 stays
    assert conf["spark.driver.memory"] == "3g"  # LINEAGE_SPARK_CONF still wins
    assert conf["spark.sql.session.timeZone"] == "UTC"  # a default spark-submit left unset


def test_session_conf_passes_the_drivers_limits_to_the_executors() -> None:
    conf = session_conf({}, None, {"LINEAGE_LIMIT_TAGS_PER_REQUEST": "5", "LINEAGE_DATABASE_URL": "postgresql://x/y"})
    assert conf["spark.executorEnv.LINEAGE_LIMIT_TAGS_PER_REQUEST"] == "5"
    assert not any("DATABASE_URL" in key for key in conf)  # the URL travels in the tasks, not in the conf

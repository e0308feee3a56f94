"""The conf a SparkSession is built with (``spark_jobs.session.session_conf``, the class archive of
``spark_jobs.jvm_archive``); no JVM starts."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pyspark import SparkConf

from lineage.settings import DEFAULT_SPARK_CONF
from spark_jobs.jvm_archive import ENV_DIR, archive_path, java_binary, with_archive
from spark_jobs.session import session_conf

pytestmark = pytest.mark.unit


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


def test_the_class_archive_is_added_to_the_drivers_options_once_made(tmp_path: Path) -> None:
    """``spark_jobs.jvm_archive``: a driver JVM maps the archive made for this Java and PySpark,
    before the user's own options (which come after and win); none is named before it exists,
    and a user's own archive or class sharing choice is left alone."""
    environ = {**os.environ, ENV_DIR: str(tmp_path)}
    path = archive_path(environ)
    assert path is not None and path.parent == tmp_path and path.name.startswith("spark-")
    assert with_archive({"spark.driver.memory": "2g"}, environ) == {"spark.driver.memory": "2g"}  # not made yet
    path.write_bytes(b"made")
    conf = with_archive({"spark.driver.memory": "2g", "spark.driver.extraJavaOptions": "-Dmine=1"}, environ)
    assert conf["spark.driver.extraJavaOptions"].startswith(f"-XX:SharedArchiveFile={path} -Xshare:auto")
    assert conf["spark.driver.extraJavaOptions"].endswith(" -Dmine=1") and conf["spark.driver.memory"] == "2g"
    for own in ("-XX:SharedArchiveFile=/opt/mine.jsa", "-Xshare:off"):
        assert with_archive({"spark.driver.extraJavaOptions": own}, environ) == {"spark.driver.extraJavaOptions": own}
    assert archive_path({**environ, "JAVA_HOME": str(tmp_path), "PATH": str(tmp_path)}) is None  # no java at all


def test_the_archive_is_named_by_the_java_runtime_it_was_made_for(tmp_path: Path) -> None:
    environ = {**os.environ, ENV_DIR: str(tmp_path)}
    java = java_binary(environ)
    assert java is not None
    other = tmp_path / "jdk" / "bin"
    other.mkdir(parents=True)
    (other / "java").symlink_to(java)  # resolved: the same runtime, the same archive
    assert archive_path({**environ, "JAVA_HOME": str(tmp_path / "jdk")}) == archive_path(environ)
    (other / "java").unlink()
    (other / "java").write_bytes(b"another build")  # another runtime: another archive
    assert archive_path({**environ, "JAVA_HOME": str(tmp_path / "jdk")}) != archive_path(environ)

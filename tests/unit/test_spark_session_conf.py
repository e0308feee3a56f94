"""The conf a SparkSession is built with (``spark_jobs.session.session_conf``, the class archive of
``spark_jobs.jvm_archive``); no JVM starts."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pyspark import SparkConf

from lineage.settings import DEFAULT_SPARK_CONF
from spark_jobs.jvm_archive import ENV_DIR, archive_path, with_archive
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


def fake_java(root: Path, content: bytes = b"a java") -> dict[str, str]:
    """An environment whose ``JAVA_HOME`` holds a ``java`` file (no JVM runs here)."""
    (root / "jdk" / "bin").mkdir(parents=True, exist_ok=True)
    (root / "jdk" / "bin" / "java").write_bytes(content)
    (root / "conf").mkdir(exist_ok=True)
    return {**os.environ, "JAVA_HOME": str(root / "jdk"), ENV_DIR: str(root / "archives"),
            "SPARK_CONF_DIR": str(root / "conf")}


def test_the_class_archive_is_added_to_the_drivers_options_once_made(tmp_path: Path) -> None:
    """``spark_jobs.jvm_archive``: a driver JVM maps the archive made for this Java and PySpark,
    before the user's own options (which come after and win); none is named before it exists,
    and a user's own archive or class sharing choice is left alone."""
    environ = fake_java(tmp_path)
    path = archive_path(environ)
    assert path is not None and path.parent == tmp_path / "archives" and path.name.startswith("spark-")
    assert with_archive({"spark.driver.memory": "2g"}, environ) == {"spark.driver.memory": "2g"}  # not made yet
    path.parent.mkdir()
    path.write_bytes(b"made")
    conf = with_archive({"spark.driver.memory": "2g", "spark.driver.extraJavaOptions": "-Dmine=1"}, environ)
    assert conf["spark.driver.extraJavaOptions"].startswith(f"-XX:SharedArchiveFile={path} -Xshare:auto")
    assert conf["spark.driver.extraJavaOptions"].endswith(" -Dmine=1") and conf["spark.driver.memory"] == "2g"
    for own in ("-XX:SharedArchiveFile=/opt/mine.jsa", "-Xshare:off", "-XX:ArchiveClassesAtExit=/opt/new.jsa"):
        assert with_archive({"spark.driver.extraJavaOptions": own}, environ) == {"spark.driver.extraJavaOptions": own}
    assert archive_path({**environ, "JAVA_HOME": str(tmp_path / "none"), "PATH": str(tmp_path)}) is None  # no java


def test_the_options_of_spark_defaults_stay_beside_the_archive(tmp_path: Path) -> None:
    """A ``spark.driver.extraJavaOptions`` passed to the launcher replaces the one of
    ``spark-defaults.conf``: that one is carried over, after the archive's."""
    environ = fake_java(tmp_path)
    path = archive_path(environ)
    assert path is not None
    path.parent.mkdir()
    path.write_bytes(b"made")
    (tmp_path / "conf" / "spark-defaults.conf").write_text(
        "# the admin's\nspark.driver.memory 4g\nspark.driver.extraJavaOptions   -Dadmin.option=1 -Dother=2\n")
    conf = with_archive({}, environ)
    assert conf["spark.driver.extraJavaOptions"] == (f"-XX:SharedArchiveFile={path} -Xshare:auto -Xlog:cds=off "
                                                     "-Xlog:cds+dynamic=off -Dadmin.option=1 -Dother=2")
    (tmp_path / "conf" / "spark-defaults.conf").write_text("spark.driver.extraJavaOptions=-Xshare:off\n")
    assert with_archive({}, environ) == {}  # the admin's choice of class sharing stands


def test_the_archive_is_named_by_the_java_runtime_and_kept_out_of_paths_with_whitespace(tmp_path: Path) -> None:
    environ = fake_java(tmp_path)
    other = tmp_path / "other"
    (other / "bin").mkdir(parents=True)
    (other / "bin" / "java").symlink_to(tmp_path / "jdk" / "bin" / "java")  # resolved: the same runtime
    assert archive_path({**environ, "JAVA_HOME": str(other)}) == archive_path(environ)
    (other / "bin" / "java").unlink()
    (other / "bin" / "java").write_bytes(b"another build")  # another runtime: another archive
    assert archive_path({**environ, "JAVA_HOME": str(other)}) != archive_path(environ)
    # Spark splits the driver's options at whitespace: such a folder holds no archive
    assert archive_path({**environ, ENV_DIR: str(tmp_path / "with space")}) is None

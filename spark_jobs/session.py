"""The one place a SparkSession is built: master and conf come from settings.

The master is, in order: ``LINEAGE_SPARK_MASTER``; when the job was launched by
``spark-submit``, the master it chose (``--master``, ``spark-defaults.conf``); else
``local[2]``. The conf is ``DEFAULT_SPARK_CONF`` (under ``spark-submit``, only the keys it left
unset), then ``LINEAGE_SPARK_CONF`` over it. A driver JVM this process starts maps the class
archive ``spark_jobs.jvm_archive`` made, when there is one (half the start time).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

from pyspark import SparkConf, SparkContext
from pyspark.sql import SparkSession

from lineage.limits import PREFIX as LIMITS_PREFIX
from lineage.settings import DEFAULT_SPARK_CONF, LOCAL_SPARK_MASTER, Settings
from spark_jobs.jvm_archive import with_archive


def build_session(app_name: str, settings: Settings | None = None) -> SparkSession:
    """Get or create the SparkSession for ``app_name`` with the settings' master and conf."""
    settings = settings or Settings.from_env()
    # Executors run the interpreter the driver names: the project's venv unless told otherwise.
    os.environ["PYSPARK_PYTHON"] = settings.spark_conf.get(
        "spark.pyspark.python", os.environ.get("PYSPARK_PYTHON", sys.executable))
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    submitted = _submitted_conf()
    builder = SparkSession.builder.appName(app_name)
    if settings.spark_master or submitted is None:
        builder = builder.master(settings.spark_master or LOCAL_SPARK_MASTER)
    conf = session_conf(settings.spark_conf, submitted, os.environ)
    if submitted is None:  # this process starts the driver's JVM: with the class archive, once made
        conf = with_archive(conf)
    for key, value in conf.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


def session_conf(user_conf: Mapping[str, str], submitted: SparkConf | None,
                 environ: Mapping[str, str]) -> dict[str, str]:
    """The conf a session is built with: the defaults spark-submit left unset, the user's conf,
    and the driver's ``LINEAGE_LIMIT_*`` passed on to the executors, which parse events under
    the same limits."""
    conf = {key: value for key, value in DEFAULT_SPARK_CONF.items()
            if submitted is None or not submitted.contains(key)}
    conf.update({f"spark.executorEnv.{name}": value for name, value in environ.items()
                 if name.startswith(LIMITS_PREFIX)})
    conf.update(user_conf)
    return conf


def _submitted_conf() -> SparkConf | None:
    """What ``spark-submit`` set (its ``--master``, ``--conf``, ``spark-defaults.conf``) when it
    launched this process, else None (a plain ``python`` process starts its own JVM)."""
    if "PYSPARK_GATEWAY_PORT" not in os.environ:
        return None
    SparkContext._ensure_initialized()  # connects to spark-submit's JVM, which holds its conf
    return SparkConf()

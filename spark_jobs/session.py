"""The one place a SparkSession is built: master and conf come from settings."""

from __future__ import annotations

import os
import sys

from pyspark.sql import SparkSession

from lineage.settings import Settings


def build_session(app_name: str, settings: Settings | None = None) -> SparkSession:
    """Get or create the SparkSession for ``app_name`` with the settings' master and conf."""
    settings = settings or Settings.from_env()
    # Executors must run the same interpreter as the driver (the project's venv).
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(app_name).master(settings.spark_master)
    for key, value in settings.spark_conf.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()

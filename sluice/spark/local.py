"""A quiet local Spark session for the example pipeline and the benchmark: local mode,
no UI, WARN logs, every Sluice format registered, Python workers running this
interpreter with this checkout importable."""
from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Mapping, Optional

from sluice.spark import register

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def local_spark(app_name: str, cores: int = 2, shuffle_partitions: int = 2, attempts: int = 1,
                conf: Optional[Mapping[str, str]] = None) -> "SparkSession":
    """The session (Spark reuses a running one in this process); `cores` local threads,
    `attempts` tries per task (local mode's default is 1: no retry), `conf` more settings."""
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    path = os.environ.get("PYTHONPATH", "")
    if ROOT not in path.split(os.pathsep):
        os.environ["PYTHONPATH"] = ROOT + (os.pathsep + path if path else "")
    builder = SparkSession.builder
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    spark = (builder.master(f"local[{cores},{attempts}]" if attempts > 1 else f"local[{cores}]")
             .appName(app_name)
             .config("spark.ui.enabled", "false")
             .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.session.timeZone", "UTC")
             .config("spark.sql.streaming.numRecentProgressUpdates", "10000")
             .getOrCreate())
    spark.sparkContext.setLogLevel("WARN")
    register(spark)
    return spark

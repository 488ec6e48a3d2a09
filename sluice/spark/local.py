"""A quiet local Spark session for the example pipeline and the benchmark: local mode,
no UI, WARN logs, every Sluice format registered, Python workers running this
interpreter with this checkout importable."""
from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from sluice.spark import register

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def local_spark(app_name: str, cores: int = 2, shuffle_partitions: int = 2) -> "SparkSession":
    """The session (Spark reuses a running one in this process); `cores` local threads."""
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    path = os.environ.get("PYTHONPATH", "")
    if ROOT not in path.split(os.pathsep):
        os.environ["PYTHONPATH"] = ROOT + (os.pathsep + path if path else "")
    spark = (SparkSession.builder.master(f"local[{cores}]").appName(app_name)
             .config("spark.ui.enabled", "false")
             .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.session.timeZone", "UTC")
             .config("spark.sql.streaming.numRecentProgressUpdates", "10000")
             .getOrCreate())
    spark.sparkContext.setLogLevel("WARN")
    register(spark)
    return spark

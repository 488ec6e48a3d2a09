"""PySpark data sources and sinks for Sluice streams.

    from sluice.spark import register
    register(spark)
    df = spark.read.format("sluice").option("url", "redis://localhost:6379").option("streams", "events").load()

Formats: `sluice` (batch and streaming reads, batch and streaming writes, over RESP to
Sluice, Redis or a Redis Cluster) and `sluice-snapshot` (snapshot files read offline)."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def register(spark: "SparkSession") -> None:
    """Registers every Sluice format with this Spark session, and has their options
    checked in this process at load(), save() and start() (driver_checks)."""
    from sluice.spark import driver_checks
    from sluice.spark.snapshot_source import SluiceSnapshotDataSource
    from sluice.spark.stream_source import SluiceDataSource

    driver_checks.install()

    spark.dataSource.register(SluiceDataSource)
    spark.dataSource.register(SluiceSnapshotDataSource)

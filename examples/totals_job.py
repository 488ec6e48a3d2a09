"""The example pipeline's Structured Streaming job: page views from the `events` stream,
totalled per key (user or page) per event-time window, into the `totals` stream.

    python -m examples.totals_job --url redis://127.0.0.1:6379 --key user

Why append mode: a stream is append-only, so each window should reach `totals` once,
final. The watermark (the latest event time seen, minus `--watermark` seconds) tells
Spark when no more events can arrive for a window; in append mode Spark emits a window
exactly then, once, and drops its state. Update mode would write a window again at every
trigger that changes it (several entries per window; Spark takes it for a Python sink
only through foreachBatch), and complete mode would rewrite every window each trigger.
Events older than the watermark when they arrive are dropped, so the watermark must
exceed the producers' lateness.

Each total is an entry `<key> <value> window_start <ms> window_end <ms> events <count>
amount <sum>`, written by the `sluice` sink; `commitGroup` makes the job's progress on
`events` visible to `XINFO GROUPS events` as a group's lag."""
from __future__ import annotations

import argparse
import sys
import tempfile
from typing import Optional

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import StreamingQuery

from sluice.spark.local import local_spark

KEYS = ("user", "page")
JOB_GROUP = "spark-totals"


def page_views(spark: SparkSession, url: str, stream: str = "events",
               max_per_trigger: int = 10_000) -> DataFrame:
    """The events stream as typed columns: user, page, amount (decimal), event_time."""
    raw = (spark.readStream.format("sluice")
           .option("url", url)
           .option("streams", stream)
           .option("startingOffsets", "earliest")
           .option("maxEntriesPerTrigger", str(max_per_trigger))
           .option("commitGroup", JOB_GROUP)
           .option("decode", "true")
           .load())
    return raw.select(
        F.col("fields")["user"].alias("user"),
        F.col("fields")["page"].alias("page"),
        F.col("fields")["amount"].cast("decimal(12,2)").alias("amount"),
        F.timestamp_millis(F.col("fields")["ts"].cast("long")).alias("event_time"),
    )


def window_totals(views: DataFrame, key: str, window_seconds: int,
                  watermark_seconds: int) -> DataFrame:
    """Events and amount per key per tumbling event-time window, as the string fields of
    a `totals` entry (window bounds in epoch ms)."""
    if key not in KEYS:
        raise ValueError(f"key must be one of {', '.join(KEYS)}, not {key!r}")
    totals = (views.withWatermark("event_time", f"{watermark_seconds} seconds")
              .groupBy(F.window("event_time", f"{window_seconds} seconds"), F.col(key))
              .agg(F.count(F.lit(1)).alias("events"), F.sum("amount").alias("amount")))
    return totals.select(
        F.col(key),
        F.unix_millis(F.col("window.start")).cast("string").alias("window_start"),
        F.unix_millis(F.col("window.end")).cast("string").alias("window_end"),
        F.col("events").cast("string").alias("events"),
        F.col("amount").cast("string").alias("amount"),
    )


def start_totals(spark: SparkSession, url: str, checkpoint: str, key: str = "user",
                 window_seconds: int = 10, watermark_seconds: int = 5,
                 trigger_seconds: float = 2.0, source: str = "events",
                 sink: str = "totals") -> StreamingQuery:
    """Starts the job: `source` read from the start, totals appended to `sink`."""
    totals = window_totals(page_views(spark, url, source), key, window_seconds, watermark_seconds)
    return (totals.writeStream.format("sluice")
            .option("url", url)
            .option("stream", sink)
            .option("checkpointLocation", checkpoint)
            .outputMode("append")
            .trigger(processingTime=f"{trigger_seconds} seconds")
            .queryName("totals")
            .start())


def main(argv: Optional[list] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", default="redis://127.0.0.1:6379/0")
    ap.add_argument("--key", choices=KEYS, default="user")
    ap.add_argument("--window", type=int, default=10, help="window length, seconds")
    ap.add_argument("--watermark", type=int, default=5, help="allowed lateness, seconds")
    ap.add_argument("--checkpoint", default=None,
                    help="checkpoint directory (default: a new temporary one)")
    args = ap.parse_args(argv)
    spark = local_spark("sluice-totals")
    checkpoint = args.checkpoint or tempfile.mkdtemp(prefix="totals-checkpoint-")
    query = start_totals(spark, args.url, checkpoint, args.key, args.window, args.watermark)
    try:
        query.awaitTermination()
    except KeyboardInterrupt:
        query.stop()
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())

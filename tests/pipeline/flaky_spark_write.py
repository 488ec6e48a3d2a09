"""A Spark job (run as its own process: its local Spark retries tasks, the test session's
does not) writing numbered rows to stream `out` through format `sluice-flaky`: the
`sluice` sink with a fault put in front of one task's rows.

    python flaky_spark_write.py '{"url": ..., "mode": "batch" | "stream", ...}'

The fault: while the file `marker` exists, the first task of partition `partition` to
reach its `after_batches`-th Arrow batch (of `rows_per_batch` rows: by then the sink
has sent those rows) removes the file and fails: Spark retries the task, or with
`attempts` 1 the job fails. With `stall` N it stalls N seconds there instead, and with
`master` (a standalone cluster's URL, spark_cluster.py) the job runs there with
speculation on: Spark starts a speculative copy of the stalled task on another host.
Each task's (partition, attempt) is pushed to the list `flaky:attempts`."""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Iterator

import pyarrow as pa
import redis
from pyspark import TaskContext

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from sluice.spark.local import local_spark  # noqa: E402
from sluice.spark.stream_sink import StreamBatchWriter, StreamStreamWriter  # noqa: E402
from sluice.spark.stream_source import SluiceDataSource  # noqa: E402


FAULT_OPTIONS = ("marker", "partition", "after_batches", "stall")     # this job's, not the sink's


def faulty(options: dict, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """The batches of one task, with the fault when this task is the one."""
    context = TaskContext.get()
    client = redis.Redis.from_url(options["url"])
    client.rpush("flaky:attempts", f"{context.partitionId()}:{context.attemptNumber()}")
    for number, batch in enumerate(batches, 1):
        yield batch
        if number == int(options["after_batches"]) and context.partitionId() == int(options["partition"]):
            try:
                os.remove(options["marker"])
            except FileNotFoundError:
                continue
            if "stall" in options:
                time.sleep(float(options["stall"]))
                continue
            raise RuntimeError(f"injected failure after {number} batches")


class Faulty:
    """A writer whose tasks' rows pass through faulty() first."""

    def __init__(self, options: dict, schema, overwrite: bool) -> None:  # noqa: ANN001
        super().__init__({name: value for name, value in options.items() if name not in FAULT_OPTIONS},
                         schema, overwrite)
        self.fault = dict(options)

    def write(self, iterator: Iterator[pa.RecordBatch]):  # noqa: ANN201
        return super().write(faulty(self.fault, iterator))


class FlakyBatchWriter(Faulty, StreamBatchWriter):
    pass


class FlakyStreamWriter(Faulty, StreamStreamWriter):
    pass


class FlakySluice(SluiceDataSource):
    @classmethod
    def name(cls) -> str:
        return "sluice-flaky"

    def writer(self, schema, overwrite: bool) -> FlakyBatchWriter:  # noqa: ANN001
        return FlakyBatchWriter(self.options, schema, overwrite)

    def streamWriter(self, schema, overwrite: bool) -> FlakyStreamWriter:  # noqa: ANN001
        return FlakyStreamWriter(self.options, schema, overwrite)


def speculating_spark(master: str, conf: dict):  # noqa: ANN201 - a SparkSession
    """A session on a standalone cluster whose scheduler copies a task running 1.5 times
    longer than the median once half of its stage is done (checked every 100 ms); one
    attempt per task, so an attempt 1 can only be a speculative copy."""
    from pyspark.sql import SparkSession

    root = str(Path(__file__).resolve().parents[2])
    os.environ["PYSPARK_PYTHON"] = sys.executable         # the executors' Python workers too
    builder = SparkSession.builder.master(master).appName("flaky-write-speculation")
    settings = {**conf, "spark.ui.enabled": "false", "spark.driver.host": "127.0.0.1",
                "spark.driver.bindAddress": "127.0.0.1", "spark.executor.memory": "512m",
                "spark.executorEnv.PYTHONPATH": root,
                "spark.task.maxFailures": "1", "spark.speculation": "true",
                "spark.speculation.interval": "100ms", "spark.speculation.quantile": "0.5",
                "spark.speculation.multiplier": "1.5", "spark.speculation.minTaskRuntime": "500ms"}
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    return spark


def main(job: dict) -> None:
    conf = {"spark.sql.execution.arrow.maxRecordsPerBatch": str(job["rows_per_batch"])}
    if "master" in job:
        spark = speculating_spark(job["master"], conf)
    else:
        spark = local_spark("flaky-write", cores=2, attempts=job["attempts"], conf=conf)
    spark.dataSource.register(FlakySluice)
    options = {key: str(job[key]) for key in ("url", "marker", "partition", "after_batches", "stall")
               if key in job}
    options.update(stream="out", batchSize=str(job["rows_per_batch"]), **job.get("sink", {}))
    if job["mode"] == "batch":
        df = spark.range(job["rows"], numPartitions=job["partitions"]).selectExpr("cast(id as string) as n")
        df.write.format("sluice-flaky").mode("append").options(**options).save()
    else:
        query = (spark.readStream.schema("n string").json(job["source"])
                 .writeStream.format("sluice-flaky").options(**options)
                 .option("checkpointLocation", job["checkpoint"]).trigger(availableNow=True).start())
        query.awaitTermination(300)
        if query.exception() is not None:
            raise SystemExit(f"the query failed: {query.exception()}")
    spark.stop()


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))

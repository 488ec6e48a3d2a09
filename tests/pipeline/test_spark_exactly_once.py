"""The `sluice` sink writes each row exactly once (XADD ... IDMP) when Spark retries a task
that had written part of its rows, or a job is run again under the same producer ID,
or a micro-batch is replayed after the query died: real Spark jobs (the retries in
flaky_spark_write.py, in their own process, whose local Spark retries tasks) against a
real Sluice server; and redis-server 7.0, which has no IDMP, refused."""
from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import redis

pytest.importorskip("pyspark", reason="pyspark is not installed; `make test` installs the spark extra")

from spark_cluster import SparkCluster  # noqa: E402
from spark_streams import sluice_client, sluice_server  # noqa: E402,F401 - fixtures

JOB = Path(__file__).resolve().parent / "flaky_spark_write.py"
ROWS_PER_BATCH = 50


def run_job(client: redis.Redis, marker: Path, armed: bool = True, **job) -> subprocess.CompletedProcess:
    """One flaky_spark_write.py run against the client's server, the fault armed or not."""
    if armed:
        marker.touch()
    port = client.connection_pool.connection_kwargs["port"]
    job = {"url": f"redis://127.0.0.1:{port}/0", "marker": str(marker), "rows_per_batch": ROWS_PER_BATCH,
           "partition": 1, "after_batches": 6, "attempts": 4, **job}
    return subprocess.run([sys.executable, str(JOB), json.dumps(job)], capture_output=True, text=True,
                          timeout=600)


def finished(done: subprocess.CompletedProcess) -> None:
    assert done.returncode == 0, done.stderr[-3000:]


def numbers_written(client: redis.Redis) -> Counter:
    return Counter(int(fields[b"n"]) for _, fields in client.xrange("out"))


def attempts(client: redis.Redis) -> set:
    return {item.decode() for item in client.lrange("flaky:attempts", 0, -1)}


def test_a_retried_batch_task_adds_nothing_twice(sluice_client: redis.Redis, tmp_path: Path) -> None:
    finished(run_job(sluice_client, tmp_path / "fault", mode="batch", rows=2000, partitions=4))
    assert not (tmp_path / "fault").exists() and "1:1" in attempts(sluice_client)   # failed, retried
    assert numbers_written(sluice_client) == Counter(range(2000))
    info = sluice_client.xinfo_stream("out")
    # the failed attempt had sent 6 batches: the retry's first 300 rows were known
    assert (info["iids-duplicates"], info["idmp-duration"], info["idmp-maxsize"]) == (300, 3600, 10000)


def test_without_idmp_the_same_retry_writes_rows_twice(sluice_client: redis.Redis, tmp_path: Path) -> None:
    """The fault of the test above is real: at least once, 300 rows are written twice."""
    finished(run_job(sluice_client, tmp_path / "fault", mode="batch", rows=2000, partitions=4,
                     sink={"idempotent": "false"}))
    counts = numbers_written(sluice_client)
    assert sorted(counts.values()) == [1] * 1700 + [2] * 300 and set(counts) == set(range(2000))


def test_a_speculative_copy_of_a_task_adds_nothing_twice(sluice_client: redis.Redis, tmp_path: Path) -> None:
    """spark.speculation on a standalone cluster of two hosts (127.0.0.2 and .3): partition
    1's first attempt stalls after sending 300 of its 500 rows, the scheduler starts a
    speculative copy on the other host, which writes all 500 and wins. The target holds
    each row once, and the stream counts the copy's first 300 as known: the copy did send
    them again (plain XADD would have written them twice, as
    test_without_idmp_the_same_retry_writes_rows_twice shows for a retry). One attempt per
    task: an attempt 1 is the speculative copy, not a retry."""
    with SparkCluster(tmp_path / "spark") as cluster:
        finished(run_job(sluice_client, tmp_path / "fault", mode="batch", rows=2000, partitions=4,
                         master=cluster.url, stall=90, sink={}))
    assert {"1:0", "1:1"} <= attempts(sluice_client) and not (tmp_path / "fault").exists()
    assert numbers_written(sluice_client) == Counter(range(2000))
    assert sluice_client.xinfo_stream("out")["iids-duplicates"] == 300


def test_a_rerun_with_the_same_producer_id_adds_nothing(spark, sluice_client: redis.Redis) -> None:  # noqa: ANN001
    """A batch job run again with option producerId fixed (after a failure that Spark's
    retries did not cover) names its rows as the first run did. It is also what a
    speculative copy is to the sink: the same rows under the same names (a real one:
    test_a_speculative_copy_of_a_task_adds_nothing_twice)."""
    port = sluice_client.connection_pool.connection_kwargs["port"]
    df = spark.range(2000, numPartitions=4).selectExpr("cast(id as string) as n")
    options = {"url": f"redis://127.0.0.1:{port}/0", "stream": "out", "producerId": "job-7", "batchSize": "25"}
    for _ in range(2):
        df.write.format("sluice").mode("append").options(**options).save()
    assert numbers_written(sluice_client) == Counter(range(2000))
    assert sluice_client.xinfo_stream("out")["iids-duplicates"] == 2000
    df.write.format("sluice").mode("append").options(**{**options, "producerId": "job-8"}).save()
    assert sum(numbers_written(sluice_client).values()) == 4000      # another producer: new rows


def test_a_streaming_query_writes_once_across_a_task_retry_and_a_restart(
        sluice_client: redis.Redis, tmp_path: Path) -> None:
    """Micro-batch 0: a task fails after 300 rows and is retried. Micro-batch 1: the task
    fails and the query with it (one attempt per task); the restarted query replays the
    batch from its checkpoint and names its rows as the first run did."""
    source = tmp_path / "in"
    source.mkdir()

    def produce(part: int, count: int) -> None:
        lines = [json.dumps({"n": str(part * 1000 + i)}) for i in range(count)]
        (source / f"part-{part}.json").write_text("\n".join(lines) + "\n")

    stream = {"mode": "stream", "source": str(source), "checkpoint": str(tmp_path / "checkpoint"),
              "partition": 0}
    produce(0, 500)
    finished(run_job(sluice_client, tmp_path / "fault", **stream))
    assert "0:1" in attempts(sluice_client)
    assert numbers_written(sluice_client) == Counter(range(500))
    produce(1, 400)
    died = run_job(sluice_client, tmp_path / "fault", attempts=1, **stream)
    assert died.returncode != 0 and "injected failure after 6 batches" in died.stderr
    assert len(numbers_written(sluice_client)) == 800                 # 300 of batch 1 written
    finished(run_job(sluice_client, tmp_path / "fault", armed=False, **stream))
    assert numbers_written(sluice_client) == Counter([*range(500), *range(1000, 1400)])
    assert sluice_client.xinfo_stream("out")["iids-duplicates"] == 600


def test_each_micro_batch_names_its_rows_apart_under_a_fixed_producer_id(
        spark, sluice_client: redis.Redis, tmp_path: Path) -> None:  # noqa: ANN001
    """With option producerId a query's rows are named by it, the micro-batch and their
    place: the second batch's rows are new rows, not the first batch's again."""
    source = tmp_path / "in"
    source.mkdir()
    for part in range(2):
        (source / f"part-{part}.json").write_text("".join(
            json.dumps({"n": str(part * 1000 + i)}) + "\n" for i in range(100)))
    port = sluice_client.connection_pool.connection_kwargs["port"]
    query = (spark.readStream.schema("n string").option("maxFilesPerTrigger", 1).json(str(source))
             .writeStream.format("sluice").option("url", f"redis://127.0.0.1:{port}/0").option("stream", "out")
             .option("producerId", "fixed").option("checkpointLocation", str(tmp_path / "checkpoint"))
             .trigger(availableNow=True).start())
    assert query.awaitTermination(120) and query.exception() is None
    assert len(query.recentProgress) >= 2
    assert numbers_written(sluice_client) == Counter([*range(100), *range(1000, 1100)])


def test_an_idempotency_key_names_a_row_whatever_its_partition(spark, sluice_client: redis.Redis) -> None:  # noqa: ANN001
    """With idempotencyKey a row is named by its key: the same events written again in
    other partitions, in another order, add nothing; a null key and a missing column are
    refused."""
    port = sluice_client.connection_pool.connection_kwargs["port"]
    options = {"url": f"redis://127.0.0.1:{port}/0", "stream": "out", "producerId": "events",
               "idempotencyKey": "event"}
    events = spark.range(300, numPartitions=4).selectExpr("concat('e', id) as event", "cast(id as string) as n")
    events.write.format("sluice").mode("append").options(**options).save()
    events.repartition(3).orderBy("n").write.format("sluice").mode("append").options(**options).save()
    assert numbers_written(sluice_client) == Counter(range(300))
    assert sluice_client.xinfo_stream("out")["iids-duplicates"] == 300
    assert {f[b"event"] for _, f in sluice_client.xrange("out")} == {f"e{n}".encode() for n in range(300)}
    keyless = spark.createDataFrame([("7", None)], "n string, event string")
    with pytest.raises(Exception, match="a row for stream 'out' has no idempotency key: column event "
                                        "\\(option idempotencyKey\\) is null"):
        keyless.write.format("sluice").mode("append").options(**options).save()
    with pytest.raises(Exception, match="option idempotencyKey names column 'nope', which the DataFrame "
                                        "does not have"):
        events.write.format("sluice").mode("append").options(**{**options, "idempotencyKey": "nope"}).save()


def test_a_server_without_idmp_is_refused_unless_turned_off(spark, redis_server) -> None:  # noqa: ANN001
    """redis-server 7.0 has no XADD IDMP: the write stops on the driver, before any task,
    saying how to write at least once instead."""
    url = f"redis://127.0.0.1:{redis_server[1]}/0"
    client = redis.Redis(port=redis_server[1])
    client.flushall()
    df = spark.range(10).selectExpr("cast(id as string) as n")
    with pytest.raises(Exception, match=(
            f"the server at {url} \\(option url\\) has no idempotent production \\(XADD ... IDMP, Redis 8.6 "
            f"and Sluice have it\\), which the sink uses to write each row exactly once; set option "
            f"idempotent to false to write at least once")):
        df.write.format("sluice").mode("append").option("url", url).option("stream", "out").save()
    assert client.exists("out") == 0
    df.write.format("sluice").mode("append").option("url", url).option("stream", "out") \
        .option("idempotent", "false").save()
    assert client.xlen("out") == 10
    client.close()

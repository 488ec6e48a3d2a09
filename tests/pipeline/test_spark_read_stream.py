"""Streaming reads with format `sluice`: Trigger.AvailableNow into a parquet sink with a
checkpoint, stopped, fed, restarted: every entry delivered exactly once per stream
position; per-trigger limits shared fairly; commitGroup lag; failOnDataLoss."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
import redis

from spark_streams import Written, fill_streams, sluice_client, sluice_server  # noqa: F401 - fixtures

pytest.importorskip("pyspark", reason="pyspark is not installed; `make test` installs the spark extra")
from pyspark.errors import StreamingQueryException  # noqa: E402

QUERY_TIMEOUT_S = 180




def run_available_now(spark, url: str, base: Path, **options: str):  # noqa: ANN001, ANN201
    """One AvailableNow run into base/out with checkpoint base/checkpoint; the finished query."""
    query = (spark.readStream.format("sluice").option("url", url).options(**options).load()
             .select("stream", "id", "fields")
             .writeStream.format("parquet").option("checkpointLocation", str(base / "checkpoint"))
             .trigger(availableNow=True).start(str(base / "out")))
    try:
        assert query.awaitTermination(QUERY_TIMEOUT_S), "the AvailableNow query did not finish"
    finally:
        query.stop()
    return query


def delivered(spark, base: Path) -> Counter:  # noqa: ANN001
    """(stream, id) -> how many times the sink holds it."""
    return Counter((row.stream, row.id) for row in spark.read.parquet(str(base / "out")).select("stream", "id").collect())


def all_ids(*batches: Written) -> Counter:
    return Counter((stream, entry_id) for written in batches for stream, entries in written.items()
                   for entry_id, _ in entries)


def url_of(client: redis.Redis) -> str:
    return f"redis://127.0.0.1:{client.connection_pool.connection_kwargs['port']}"


def test_restart_from_checkpoint_delivers_each_entry_once(spark, sluice_client, tmp_path) -> None:  # noqa: ANN001
    first = fill_streams(sluice_client, ["s1"], 300)
    first.update(fill_streams(sluice_client, ["s2"], 20))
    url = url_of(sluice_client)
    run_available_now(spark, url, tmp_path, streams="s1,s2,s3", minPartitions="4")  # s3 does not exist yet
    assert delivered(spark, tmp_path) == all_ids(first)
    more = fill_streams(sluice_client, ["s1", "s3"], 70, first=1000)
    run_available_now(spark, url, tmp_path, streams="s1,s2,s3", minPartitions="4")
    assert delivered(spark, tmp_path) == all_ids(first, more)


@pytest.fixture(params=["sluice", "redis-server"])
def either_client(request: pytest.FixtureRequest) -> redis.Redis:
    """A flushed client of Sluice or of redis-server (the consumer-group lag is compared)."""
    if request.param == "sluice":
        return request.getfixturevalue("sluice_client")
    client = redis.Redis(port=request.getfixturevalue("redis_server")[1])
    client.flushall()
    request.addfinalizer(client.close)
    return client


def test_max_entries_per_trigger_is_shared_fairly(spark, either_client, tmp_path) -> None:  # noqa: ANN001
    sluice_client = either_client
    busy = fill_streams(sluice_client, ["jobs:busy"], 300)
    quiet = fill_streams(sluice_client, ["jobs:quiet"], 15)
    url = url_of(sluice_client)
    query = run_available_now(spark, url, tmp_path, streamPattern="jobs:*", maxEntriesPerTrigger="40",
                              commitGroup="spark")
    batches = [progress for progress in query.recentProgress if progress.numInputRows > 0]
    assert [p.numInputRows for p in batches] == [40] * 7 + [315 - 280]
    first_end = json.loads(batches[0].sources[0].endOffset)
    # 20 each by share; the quiet stream's 5 spare go to the busy one
    assert first_end == {"jobs:busy": {"id": busy["jobs:busy"][24][0], "added": 25},
                         "jobs:quiet": {"id": quiet["jobs:quiet"][14][0], "added": 15}}
    assert delivered(spark, tmp_path) == all_ids(busy, quiet)
    groups = {stream: sluice_client.xinfo_groups(stream)[0] for stream in ("jobs:busy", "jobs:quiet")}
    assert {stream: (g["name"], g["last-delivered-id"].decode(), g["entries-read"], g["lag"])
            for stream, g in groups.items()} == {
        "jobs:busy": (b"spark", busy["jobs:busy"][-1][0], 300, 0),
        "jobs:quiet": (b"spark", quiet["jobs:quiet"][-1][0], 15, 0)}
    late = fill_streams(sluice_client, ["jobs:busy"], 90, first=300)
    assert sluice_client.xinfo_groups("jobs:busy")[0]["lag"] == 90
    query = run_available_now(spark, url, tmp_path, streamPattern="jobs:*", maxEntriesPerTrigger="40",
                              commitGroup="spark")
    assert [p.numInputRows for p in query.recentProgress if p.numInputRows > 0] == [40, 40, 10]
    assert delivered(spark, tmp_path) == all_ids(busy, quiet, late)
    assert sluice_client.xinfo_groups("jobs:busy")[0]["lag"] == 0


def test_fail_on_data_loss_both_ways(spark, sluice_client, tmp_path) -> None:  # noqa: ANN001
    url = url_of(sluice_client)
    read_first = fill_streams(sluice_client, ["d"], 100)
    run_available_now(spark, url, tmp_path, streams="d")
    checkpoint_id = read_first["d"][-1][0]
    unread = fill_streams(sluice_client, ["d"], 100, first=100)
    sluice_client.xtrim("d", maxlen=10, approximate=False)  # 90 entries after the checkpoint are gone
    with pytest.raises(StreamingQueryException) as failure:
        run_available_now(spark, url, tmp_path, streams="d")
    assert (f"entries of stream 'd' after the checkpoint offset {checkpoint_id} were trimmed or deleted "
            f"before they were read") in str(failure.value)
    assert delivered(spark, tmp_path) == all_ids(read_first)
    run_available_now(spark, url, tmp_path, streams="d", failOnDataLoss="false")
    kept = {"d": unread["d"][-10:]}
    assert delivered(spark, tmp_path) == all_ids(read_first, kept)
    # Trimming only entries already read loses nothing: no failure.
    sluice_client.xtrim("d", maxlen=0, approximate=False)
    after = fill_streams(sluice_client, ["d"], 5, first=500)
    run_available_now(spark, url, tmp_path, streams="d")
    assert delivered(spark, tmp_path) == all_ids(read_first, kept, after)

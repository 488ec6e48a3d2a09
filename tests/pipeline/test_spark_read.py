"""Batch reads with format `sluice` against Sluice, Debian's redis-server and a 3-master
Redis Cluster: every entry exactly once with its fields, partitions, offset ranges."""
from __future__ import annotations

import pytest
import redis
from redis.cluster import RedisCluster

from spark_targets import redis_cluster, source_options, target  # noqa: F401 - fixtures
from spark_streams import entry_ids, expected_rows, fill_streams, read_back, sluice_client, sluice_server  # noqa: F401 - fixtures

STREAMS = ["orders", "clicks", "views", "payments"]
PER_STREAM = 25_000  # 100,000 entries in all


def read(spark, options: dict, **more: str):  # noqa: ANN001, ANN201
    return spark.read.format("sluice").options(**source_options(options), **more).load()


def test_every_entry_is_read_once_with_its_fields(spark, target) -> None:  # noqa: ANN001
    options, client = target
    written = fill_streams(client, STREAMS, PER_STREAM)
    if isinstance(client, RedisCluster):
        nodes = {client.get_node_from_key(name).name for name in STREAMS}
        assert len(nodes) >= 2, f"the streams should spread over the cluster's nodes, all are on {nodes}"
    df = read(spark, options, streams=",".join(STREAMS), minPartitions="7")
    assert df.schema.simpleString() == "struct<stream:string,id:string,ms:bigint,seq:bigint,fields:map<string,binary>>"
    assert df.rdd.getNumPartitions() == 7
    got = read_back(df.toArrow())
    assert got == expected_rows(written)


def test_a_pattern_finds_the_streams_and_skips_other_keys(spark, target) -> None:  # noqa: ANN001
    options, client = target
    written = fill_streams(client, ["ev:a", "ev:b", "ev:c"], 300)
    fill_streams(client, ["other"], 10)
    client.set("ev:text", "not a stream")
    df = read(spark, options, streamPattern="ev:*", decode="true")
    assert df.schema["fields"].dataType.simpleString() == "map<string,string>"
    rows = df.select("stream", "id").collect()
    assert entry_ids((row.stream, row.id) for row in rows) == {
        name: [entry_id for entry_id, _ in entries] for name, entries in written.items()}
    decoded = df.where("stream = 'ev:b'").orderBy("ms", "seq").first().fields
    assert decoded["stream"] == "ev:b" and decoded["raw"] == "\x00\ufffd"


def test_offsets_select_ranges_exclusive_start_inclusive_end(spark, sluice_server, sluice_client) -> None:  # noqa: ANN001
    client = sluice_client
    written = fill_streams(client, ["a", "b", "c", "d"], 1000)
    ids = {name: [entry_id for entry_id, _ in entries] for name, entries in written.items()}
    starting = f'{{"a": "{ids["a"][99]}", "b": -2, "c": "latest", "d": "earliest"}}'
    ending = f'{{"a": "{ids["a"][199]}", "b": "{ids["b"][9]}", "d": -1}}'
    df = read(spark, {"url": f"redis://127.0.0.1:{sluice_server.port}"}, streams="a,b,c,d",
              startingOffsets=starting, endingOffsets=ending, minPartitions="5")
    got = entry_ids(sorted((row.stream, row.id) for row in df.select("stream", "id").collect()))
    want = {"a": ids["a"][100:200], "b": ids["b"][:10], "d": ids["d"]}
    assert {name: sorted(value) for name, value in got.items()} == {name: sorted(value) for name, value in want.items()}
    assert df.rdd.getNumPartitions() == 5


def test_latest_is_fixed_when_the_dataframe_is_planned(spark, sluice_server, sluice_client) -> None:  # noqa: ANN001
    """A batch read is a snapshot: "latest" means the last entry when the DataFrame's
    read was planned (its first action); later actions on it read the same entries."""
    client = sluice_client
    fill_streams(client, ["fixed"], 50)
    options = {"url": f"redis://127.0.0.1:{sluice_server.port}", "streams": "fixed"}
    snapshot = read(spark, options)
    assert snapshot.count() == 50
    fill_streams(client, ["fixed"], 20, first=50)
    assert snapshot.count() == 50
    assert snapshot.where("seq >= 0").count() == 50
    assert read(spark, options).count() == 70


def test_the_url_selects_the_database(spark, sluice_server, sluice_client) -> None:  # noqa: ANN001
    """redis://host:port/3 reads and writes database 3 (sluice_client's FLUSHALL empties all)."""
    in_db3 = redis.Redis(port=sluice_server.port, db=3)
    written = fill_streams(in_db3, ["indb"], 10)
    fill_streams(sluice_client, ["indb"], 4)
    options = {"url": f"redis://127.0.0.1:{sluice_server.port}/3"}
    df = read(spark, options, streams="indb")
    assert sorted(row.id for row in df.select("id").collect()) == sorted(i for i, _ in written["indb"])
    df.write.format("sluice").mode("append").options(**options).option("stream", "copy").save()
    assert in_db3.xlen("copy") == 10 and sluice_client.exists("copy") == 0
    in_db3.close()


def test_entries_trimmed_after_planning_are_data_loss(spark, sluice_server, sluice_client) -> None:  # noqa: ANN001
    """A DataFrame reads the ranges planned at its first action again at each action: entries
    of them trimmed in between fail the read (failOnDataLoss, default true) or are skipped."""
    written = fill_streams(sluice_client, ["gone"], 100)
    options = {"url": f"redis://127.0.0.1:{sluice_server.port}", "streams": "gone"}
    strict = read(spark, options)
    lenient = read(spark, options, failOnDataLoss="false")
    assert strict.count() == lenient.count() == 100
    sluice_client.xtrim("gone", maxlen=30, approximate=False)
    with pytest.raises(Exception) as failure:
        strict.count()
    assert (f"entries of stream 'gone' from {written['gone'][0][0]} on, which this read was planned to "
            f"return, were trimmed or deleted before its task read them (the stream's first entry is now "
            f"{written['gone'][70][0]}); set option failOnDataLoss to false to skip them") in str(failure.value)
    assert lenient.count() == 30

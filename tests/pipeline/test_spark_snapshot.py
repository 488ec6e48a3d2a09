"""Format `sluice-snapshot`: a snapshot a real Sluice server SAVEd, read offline by Spark
and compared with what the server itself answers to XRANGE and XPENDING."""
from __future__ import annotations

import os
import random
import re
import time
from collections.abc import Iterator

import pytest
import redis

pytest.importorskip("pyspark", reason="pyspark is not installed; `make test` installs the spark extra")

from servers import SluiceServer  # noqa: E402
from persist import snapshot  # noqa: E402
from persist.snapshot_blocks import snapshot_blocks  # noqa: E402
from sluice.spark.snapshot_source import block_runs  # noqa: E402

STREAMS = ("orders", "clicks", "empty")


def fill(client: redis.Redis) -> None:
    """Streams over more than one block, groups with pending entries (some acknowledged,
    some claimed again, some whose entry was deleted), another database, a string key."""
    rng = random.Random(5)
    pipe = client.pipeline(transaction=False)
    for i in range(400):
        fields = {"item": f"i{i}", "qty": str(i % 7)}
        if i % 3 == 0:
            fields["note"] = "gift" * (i % 5)
        if i % 5 == 0:
            fields["raw"] = bytes([i % 256, 0xFF, 0])      # not UTF-8: kept as bytes
        pipe.xadd("orders", fields)
    for i in range(5000):
        pipe.xadd("clicks", {"user": f"u{i % 97}",
                             "page": "".join(rng.choice("abcdefgh/") for _ in range(300))})
    pipe.execute()
    client.xadd("empty", {"x": "1"})
    client.xtrim("empty", maxlen=0)
    client.set("plain", "text")
    client.xgroup_create("orders", "billing", id="0")
    client.xgroup_create("orders", "audit", id="0")
    client.xgroup_create("clicks", "stats", id="0")
    client.xreadgroup("billing", "c1", {"orders": ">"}, count=120)
    client.xreadgroup("billing", "c2", {"orders": ">"}, count=80)
    client.xreadgroup("audit", "a1", {"orders": ">"}, count=10)
    client.xreadgroup("stats", "s1", {"clicks": ">"}, count=3000)
    ids = [entry_id for entry_id, _ in client.xrange("orders", count=200)]
    client.xack("orders", "billing", *ids[:30])
    client.xclaim("orders", "billing", "c2", 0, ids[30:50])
    client.xdel("orders", ids[60], ids[61])
    other = redis.Redis(port=client.connection_pool.connection_kwargs["port"], db=1)
    other.xadd("orders", {"db": "1"})
    other.close()


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> Iterator[tuple[SluiceServer, redis.Redis, str]]:
    """A running Sluice server with data, SAVEd: (server, client, snapshot file)."""
    directory = tmp_path_factory.mktemp("sluice-data")
    with SluiceServer(loglevel="warning", workdir=str(directory)) as server:
        client = redis.Redis(port=server.port)
        fill(client)
        client.save()
        found = [p for p in directory.iterdir() if snapshot.is_snapshot(p)]
        assert len(found) == 1
        yield server, client, str(found[0])
        client.close()


def read(spark, path: str, **options):
    reader = spark.read.format("sluice-snapshot")
    for name, value in options.items():
        reader = reader.option(name, str(value))
    return reader.load(path)


def server_entries(client: redis.Redis, stream: str) -> list:
    return [(entry_id.decode(), fields) for entry_id, fields in client.xrange(stream)]


@pytest.mark.parametrize("where", ["directory", "file"])
def test_entries_match_xrange(spark, saved, where):
    server, client, path = saved
    assert len(snapshot_blocks(path)) >= 2, "the data should span several blocks"
    blocks = len(snapshot_blocks(path))
    # One block per partition: every block boundary is a partition boundary.
    df = read(spark, server.dir if where == "directory" else path, streamPattern="*",
              minPartitions=blocks)
    assert df.rdd.getNumPartitions() == blocks
    rows = df.collect()
    for stream in STREAMS:
        got = sorted(((r.ms, r.seq), r.id, {k.encode(): bytes(v) for k, v in r.fields.items()})
                     for r in rows if r.stream == stream)
        assert [(entry_id, fields) for _, entry_id, fields in got] == \
            [(entry_id, fields) for entry_id, fields in server_entries(client, stream)]
    assert {r.stream for r in rows} == {"orders", "clicks"}
    assert len(rows) == sum(client.xlen(s) for s in STREAMS)


def test_partitions_are_runs_of_whole_blocks(spark, saved):
    """Blocks packed into minPartitions (default 2) or the file's size over
    maxPartitionBytes, in order, each block in exactly one partition."""
    _, _, path = saved
    blocks = snapshot_blocks(path)
    size = os.path.getsize(path)
    assert read(spark, path, streamPattern="*").rdd.getNumPartitions() == 2
    assert read(spark, path, streamPattern="*", maxPartitionBytes=size // 3 + 1).rdd \
        .getNumPartitions() == min(len(blocks), 3)
    for wanted in (1, 2, len(blocks) - 1, len(blocks), len(blocks) + 5):
        runs = block_runs(blocks, size, wanted, 1 << 40)
        assert len(runs) == min(wanted, len(blocks))
        assert [b for run in runs for b in run] == list(blocks)
        assert max(map(len, runs)) - min(map(len, runs)) <= 1
    assert block_runs([], size, 2, 1 << 40) == []


def test_pel_matches_xpending(spark, saved):
    server, client, path = saved
    rows = read(spark, path, streamPattern="*", table="pel").collect()
    now_ms = int(client.time()[0]) * 1000 + int(client.time()[1]) // 1000
    checked = 0
    for stream, group in (("orders", "billing"), ("orders", "audit"), ("clicks", "stats")):
        pending = client.xpending_range(stream, group, "-", "+", 100_000)
        got = sorted(((tuple(map(int, r.id.split("-"))), r.id, r.consumer, r.delivery_count,
                       r.delivery_time) for r in rows if (r.stream, r.group) == (stream, group)))
        assert [(i, c, n) for _, i, c, n, _ in got] == [
            (p["message_id"].decode(), p["consumer"].decode(), p["times_delivered"]) for p in pending]
        for (*_, delivered), p in zip(got, pending):
            assert abs(now_ms - p["time_since_delivered"] - delivered) < 60_000
        checked += len(pending)
    assert len(rows) == checked == 120 + 80 - 30 + 10 + 3000


def test_stream_filters_decode_and_db(spark, saved):
    server, client, path = saved
    listed = read(spark, path, streams="orders,missing", decode="true")
    assert listed.count() == client.xlen("orders")
    assert listed.where("fields['item'] = 'i7'").select("fields").first().fields == \
        {"item": "i7", "qty": "0"}
    assert read(spark, path, streamPattern="cl?cks").count() == client.xlen("clicks")
    assert read(spark, path, streamPattern="orders", table="pel").select("group").distinct() \
        .count() == 2
    other = read(spark, path, streams="orders", db=1, decode="true").collect()
    assert [r.fields for r in other] == [{"db": "1"}]


def test_base_of_an_aof_directory(spark, tmp_path):
    """Without a snapshot file, a data directory's AOF base (in snapshot form) is read,
    after the server has stopped: the format never needs one."""
    with SluiceServer(["--appendonly", "yes"], loglevel="warning", workdir=str(tmp_path)) as server:
        client = redis.Redis(port=server.port)
        for i in range(50):
            client.xadd("s", {"n": str(i)})
        client.bgrewriteaof()
        deadline = time.monotonic() + 30
        while client.info("persistence")["aof_rewrite_in_progress"] or \
                client.info("persistence")["aof_rewrite_scheduled"]:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert not [p for p in tmp_path.iterdir() if snapshot.is_snapshot(p)]
        client.close()
    with pytest.raises(redis.ConnectionError):
        redis.Redis(port=server.port).ping()
    rows = read(spark, str(tmp_path), streams="s", decode="true").collect()
    assert sorted(int(r.fields["n"]) for r in rows) == list(range(50))


def test_damaged_file_names_file_and_offset(spark, saved, tmp_path):
    _, _, path = saved
    damaged = tmp_path / "damaged.snap"
    data = bytearray(open(path, "rb").read())
    second = snapshot_blocks(path)[1].offset
    data[second + 40] ^= 0x55
    damaged.write_bytes(bytes(data))
    with pytest.raises(Exception, match=re.escape(f"{damaged}: block checksum mismatch at offset "
                                                  f"{second}")):
        read(spark, str(damaged), streamPattern="*").count()
    cut = tmp_path / "cut.snap"
    cut.write_bytes(bytes(data[:second]))
    with pytest.raises(Exception, match=re.escape(f"{cut}: file ends before its end record")):
        read(spark, str(cut), streamPattern="*").count()


def test_redis_rdb_files_are_named_as_such(spark, redis_data_dir):
    """redis-server's dump.rdb, given as a file or in its directory, and a directory whose
    AOF base is RDB (aof-use-rdb-preamble yes)."""
    rdb = redis_data_dir / "dump.rdb"
    for path, named in ((rdb, rdb), (redis_data_dir, rdb)):
        with pytest.raises(Exception, match=re.escape(f"{named} is a Redis RDB file (RDB version "
                                                      f"10), not a Sluice snapshot")):
            read(spark, str(path), streams="s").count()
    rdb.unlink()
    with pytest.raises(Exception, match=r"appendonlydir/\S+ is a Redis RDB file"):
        read(spark, str(redis_data_dir), streams="s").count()


@pytest.mark.parametrize("path, options, message", [
    (None, {}, "option streams .* or streamPattern .* is required"),
    (None, {"streams": "s", "table": "groups"}, "option table must be entries or pel, not 'groups'"),
    ("/nonexistent/dump", {"streams": "s"}, "option path: /nonexistent/dump does not exist"),
])
def test_bad_options(spark, saved, path, options, message):
    with pytest.raises(Exception, match=message):
        read(spark, path or saved[2], **options).count()


def test_directory_without_a_snapshot(spark, tmp_path):
    (tmp_path / "notes.txt").write_text("not a snapshot")
    with pytest.raises(Exception, match=f"the directory {tmp_path} holds no Sluice snapshot"):
        read(spark, str(tmp_path), streams="s").count()

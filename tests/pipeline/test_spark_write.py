"""Format `sluice`, writing side: DataFrames written with XADD to a real Sluice server
and to Debian's redis-server, batch and streaming, and schemas refused on the driver."""
from __future__ import annotations

import json
from collections import Counter
from contextlib import ExitStack

import pytest
import redis

pytest.importorskip("pyspark", reason="pyspark is not installed; `make test` installs the spark extra")

from pyspark.sql import functions as F  # noqa: E402
from pyspark.sql.types import (BinaryType, BooleanType, DoubleType, LongType, MapType,  # noqa: E402
                               StringType, StructField, StructType)

from servers import SluiceServer, free_port  # noqa: E402
from sluice.spark.options import OptionError  # noqa: E402
from spark_targets import redis_cluster, sluice_server, source_options, target  # noqa: E402,F401 - fixtures


TWO_SERVERS = pytest.mark.parametrize("target", ["sluice", "redis-server"], indirect=True)


def write(df, target_options: dict, **options) -> None:
    writer = df.write.format("sluice").mode("append").options(**target_options)
    writer.options(**{name: str(value) for name, value in options.items()}).save()


def entries(client: redis.Redis, stream: str) -> list:
    return client.xrange(stream)


# -- batch writes ----------------------------------------------------------------------------

@TWO_SERVERS
def test_fixed_stream_and_plain_columns(spark, target):
    """Every column but stream/id/fields is a field, in its text form; nulls are left out."""
    options, client = target
    schema = StructType([StructField("user", StringType()), StructField("amount", LongType()),
                         StructField("ratio", DoubleType()), StructField("ok", BooleanType()),
                         StructField("blob", BinaryType())])
    rows = [("ann", 1, 0.5, True, b"\x00\xff"), ("bob", None, 2.25, False, None),
            ("cid", 3, None, None, b"x")]
    write(spark.createDataFrame(rows, schema), options, stream="events")
    got = sorted((fields for _, fields in entries(client, "events")), key=lambda f: f[b"user"])
    assert got == [
        {b"user": b"ann", b"amount": b"1", b"ratio": b"0.5", b"ok": b"true", b"blob": b"\x00\xff"},
        {b"user": b"bob", b"ratio": b"2.25", b"ok": b"false"},
        {b"user": b"cid", b"amount": b"3", b"blob": b"x"},
    ]


@TWO_SERVERS
def test_stream_column_and_fields_map(spark, target):
    """A stream per row, the fields from a map column (string or binary values)."""
    options, client = target
    for value_type, value in ((StringType(), "v"), (BinaryType(), bytearray(b"\x01v"))):
        client.flushall()
        schema = StructType([StructField("stream", StringType()),
                             StructField("fields", MapType(StringType(), value_type))])
        rows = [("a", {"k": value, "n": None}), ("b", {"k": value}), ("a", {"j": value})]
        write(spark.createDataFrame(rows, schema).coalesce(1), options)
        expected = bytes(value) if isinstance(value, bytearray) else value.encode()
        assert [f for _, f in entries(client, "a")] == [{b"k": expected}, {b"j": expected}]
        assert [f for _, f in entries(client, "b")] == [{b"k": expected}]


@TWO_SERVERS
def test_option_stream_wins_over_a_stream_column(spark, target):
    """A DataFrame read from one stream (stream, id, ms, seq, fields) copies to another."""
    options, client = target
    client.xadd("src", {"a": "1"}, id="5-1")
    client.xadd("src", {"a": "2"}, id="5-2")
    copied = spark.read.format("sluice").options(**source_options(options)).option("streams", "src").load()
    write(copied, options, stream="copy")
    assert entries(client, "copy") == entries(client, "src")


@TWO_SERVERS
def test_explicit_ids(spark, target):
    """The id column sets IDs; null and "*" let the server choose (after the last one)."""
    options, client = target
    rows = [("1-1", "a"), ("1-5", "b"), (None, "c"), ("*", "d"), ("99999999999999-0", "e")]
    write(spark.createDataFrame(rows, "id string, v string").coalesce(1), options, stream="s")
    got = entries(client, "s")
    assert [f[b"v"] for _, f in got] == [b"a", b"b", b"c", b"d", b"e"]
    assert [i for i, _ in got][:2] == [b"1-1", b"1-5"]
    assert got[-1][0] == b"99999999999999-0"
    auto = [tuple(map(int, i.split(b"-"))) for i, _ in got[2:4]]
    assert (1, 5) < auto[0] < auto[1]


@TWO_SERVERS
def test_max_len_trims_exactly_or_approximately(spark, target):
    options, client = target
    df = spark.range(2000).select(F.col("id").cast("string").alias("n"))
    write(df.coalesce(1), options, stream="exact", maxLen=10, approximateTrim="false", batchSize=300)
    assert client.xlen("exact") == 10
    assert entries(client, "exact")[-1][1] == {b"n": b"1999"}
    write(df.coalesce(1), options, stream="about", maxLen=10)
    assert 10 < client.xlen("about") < 2000      # MAXLEN = would leave exactly 10
    assert entries(client, "about")[-1][1] == {b"n": b"1999"}


def test_server_error_aborts_with_its_message(spark, target):
    """WRONGTYPE and a too-small explicit ID stop the job with the server's words, the stream
    and the row's ID (on a cluster too, whose pipeline sends each XADD to its key's node);
    the chunks before the error stay written."""
    options, client = target
    client.set("plain", "x")
    rows = [("fine", "1"), ("plain", "2")]
    with pytest.raises(Exception, match=r"refused XADD to stream 'plain': WRONGTYPE Operation "
                                        r"against a key holding the wrong kind of value"):
        write(spark.createDataFrame(rows, "stream string, n string").coalesce(1), options)
    assert [f for _, f in entries(client, "fine")] == [{b"n": b"1"}]
    client.xadd("s", {"n": "top"}, id="10-0")
    rows = [("11-0", "ok"), ("3-0", "late")]
    with pytest.raises(Exception, match=r"refused XADD to stream 's' \(id 3-0\): The ID specified "
                                        r"in XADD is equal or smaller than the target stream top item"):
        write(spark.createDataFrame(rows, "id string, n string").coalesce(1), options, stream="s",
              batchSize=1)
    assert [i for i, _ in entries(client, "s")] == [b"10-0", b"11-0"]


@pytest.mark.parametrize("target", ["sluice", "redis-cluster"], indirect=True)
def test_bad_target_is_refused_on_the_driver(spark, target):
    """An unreachable server, a refused password and a fixed stream option naming a key of
    another type fail before any task runs, naming the option."""
    options, client = target
    client.set("plain", "x")
    df = spark.sql("select 'x' as v").where(F.expr("raise_error('a task ran') is null"))
    port = free_port()
    cases = [({**options, "stream": "plain"}, "key 'plain' (option stream) holds a string, not a stream"),
             ({"url": f"redis://127.0.0.1:{port}", "stream": "s"},
              f"cannot reach the server at redis://127.0.0.1:{port} (option url)")]
    with ExitStack() as stack:
        if "cluster" not in options:
            guarded = stack.enter_context(SluiceServer(["--save", "", "--requirepass", "pw"], loglevel="warning"))
            cases.append(({"url": f"redis://:wrong-pw@127.0.0.1:{guarded.port}", "stream": "s"},
                          f"the server at redis://:***@127.0.0.1:{guarded.port} (option url) refused "
                          f"the credentials"))
        for bad, message in cases:
            with pytest.raises(Exception) as failure:
                write(df, bad)
            assert message in str(failure.value)
            assert "a task ran" not in str(failure.value) and "wrong-pw" not in str(failure.value)


@TWO_SERVERS
def test_skip_existing_ids_makes_a_rewrite_idempotent(spark, target):
    options, client = target
    df = spark.createDataFrame([(f"1-{i}", str(i)) for i in range(1, 51)], "id string, n string")
    write(df.coalesce(1), options, stream="s", skipExistingIds="true")
    first = entries(client, "s")
    write(df.coalesce(1), options, stream="s", skipExistingIds="true")
    assert entries(client, "s") == first and len(first) == 50
    with pytest.raises(Exception, match=r"\(id 1-1\): The ID specified in XADD is equal or smaller"):
        write(df.coalesce(1), options, stream="s")


@pytest.mark.parametrize("df_sql, options, message", [
    ("select 1 as n", {}, "needs option stream .* or a string column named stream"),
    ("select 1 as stream, 'x' as v", {}, r"column stream \(stream\) must be a string, not int"),
    ("select 'a' as stream, 5 as id, 'x' as v", {}, r"column id \(id\) must be a string, not int"),
    ("select map('a', 1) as fields", {"stream": "s"},
     "column fields must be map<string,string> or map<string,binary>, not map<string,int>"),
    ("select map('a', 'b') as fields, 'x' as extra", {"stream": "s"},
     r"the other columns \(extra\) would be lost"),
    ("select array(1, 2) as tags", {"stream": "s"},
     "column tags has type array<int>, which has no field form"),
    ("select 'a' as stream", {}, "no column to write as a field"),
    ("select 'x' as v", {"stream": "s", "maxLen": "-1"}, "option maxLen must be at least 0"),
    ("select 'x' as v", {"stream": "s", "skipExistingIds": "true"},
     "option skipExistingIds needs an id column"),
])
def test_wrong_schema_is_refused_on_the_driver(spark, sluice_server, df_sql, options, message):
    """The check runs before any task: a task reading these rows would fail on them."""
    df = spark.sql(df_sql).where(F.expr("raise_error('a task ran') is null"))
    with pytest.raises(Exception, match="a task ran"):
        df.count()
    with pytest.raises(Exception, match=message) as failure:
        write(df, {"url": f"redis://127.0.0.1:{sluice_server.port}"}, **options)
    assert "a task ran" not in str(failure.value)


def test_overwrite_and_complete_mode_are_refused(spark, sluice_server, tmp_path):
    """A stream only grows: replacing what was written is refused, not turned into appends."""
    options = {"url": f"redis://127.0.0.1:{sluice_server.port}"}
    with pytest.raises(Exception, match="format sluice cannot overwrite: a stream only grows"):
        spark.sql("select 'x' as v").write.format("sluice").mode("overwrite").options(**options) \
            .option("stream", "s").save()
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.json").write_text('{"k": "a"}\n')
    counts = spark.readStream.schema("k string").json(str(tmp_path / "in")).groupBy("k").count()
    writer = (counts.selectExpr("k", "cast(count as string) as n").writeStream.format("sluice")
              .options(**options).option("stream", "totals").outputMode("complete")
              .option("checkpointLocation", str(tmp_path / "checkpoint")).trigger(availableNow=True))
    with pytest.raises(OptionError, match=r"cannot replace what earlier micro-batches wrote"):
        writer.start()
    assert spark.streams.active == []


# -- streaming writes ------------------------------------------------------------------------

def run_available(spark, source_dir, checkpoint, target_options: dict) -> None:
    """One streaming run over every JSON file present, then stop."""
    stream = (spark.readStream.schema("k string, n long").json(str(source_dir))
              .writeStream.format("sluice").options(**target_options).option("stream", "out")
              .option("checkpointLocation", str(checkpoint)).trigger(availableNow=True).start())
    stream.awaitTermination(120)
    assert stream.exception() is None


@TWO_SERVERS
def test_streaming_writes_each_row_once_across_a_restart(spark, target, tmp_path):
    options, client = target
    source = tmp_path / "in"
    source.mkdir()

    def produce(part: int, count: int) -> None:
        lines = [json.dumps({"k": f"p{part}", "n": part * 1000 + i}) for i in range(count)]
        (source / f"part-{part}.json").write_text("\n".join(lines) + "\n")

    produce(0, 300)
    produce(1, 200)
    run_available(spark, source, tmp_path / "checkpoint", options)
    assert client.xlen("out") == 500
    produce(2, 250)
    run_available(spark, source, tmp_path / "checkpoint", options)   # restarted from the checkpoint
    written = Counter(int(f[b"n"]) for _, f in entries(client, "out"))
    expected = [p * 1000 + i for p, c in ((0, 300), (1, 200), (2, 250)) for i in range(c)]
    assert written == Counter(expected)


# -- round trip ------------------------------------------------------------------------------

def test_round_trip_of_100000_entries(spark, target):
    """Written by the sink, read back by the source: every entry, in each stream's order."""
    options, client = target
    total, streams = 100_000, 4
    df = spark.range(total, numPartitions=4).select(
        F.concat(F.lit("rt:"), (F.col("id") % streams).cast("string")).alias("stream"),
        F.format_string("%d-1", F.col("id") + 1).alias("id"),
        F.col("id").cast("string").alias("n"),
        F.sha1(F.col("id").cast("string")).alias("digest"))
    # explicit IDs must reach each stream in order: one task per stream, rows sorted
    write(df.repartition(streams, "stream").sortWithinPartitions(F.expr("cast(n as long)")), options,
          batchSize=500)
    assert sum(client.xlen(f"rt:{s}") for s in range(streams)) == total
    back = (spark.read.format("sluice").options(**source_options(options)).option("streamPattern", "rt:*")
            .option("decode", "true").option("minPartitions", "6").load())
    n = F.col("fields")["n"].cast("long")
    checked = back.select(n.alias("n"), ((F.col("stream") == F.concat(F.lit("rt:"), (n % streams).cast("string")))
                                         & (F.col("id") == F.format_string("%d-1", n + 1))
                                         & (F.col("ms") == n + 1)).alias("ok"))
    summary = checked.agg(F.count("*"), F.countDistinct("n"), F.sum(F.col("ok").cast("int"))).first()
    assert tuple(summary) == (total, total, total)
    sample = client.xrange("rt:1", count=2)
    assert [f[b"n"] for _, f in sample] == [b"1", b"5"]

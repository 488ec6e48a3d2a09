"""Bad input to the `sluice` reader: each fails on the driver, before any Spark job runs,
with one sentence naming the option or key, and that sentence is in the exception text
PySpark raises to the user (a bad option: the OptionError itself, raised at load(), see
test_spark_options.py; a bad key or server: Spark's AnalysisException around it)."""
from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis

from servers import SluiceServer, free_port
from spark_streams import fill_streams

pytest.importorskip("pyspark", reason="pyspark is not installed; `make test` installs the spark extra")
from pyspark.errors import AnalysisException, StreamingQueryException  # noqa: E402

from sluice.spark.options import OptionError  # noqa: E402

PASSWORD = "s3cret-pw"


@pytest.fixture(scope="module")
def server() -> Iterator[SluiceServer]:
    with SluiceServer(["--save", "", "--requirepass", PASSWORD], loglevel="warning") as process:
        client = redis.Redis(port=process.port, password=PASSWORD)
        client.flushall()
        fill_streams(client, ["a", "b"], 20)
        client.set("text", "not a stream")
        client.close()
        yield process


@pytest.fixture(scope="module")
def url(server: SluiceServer) -> str:
    return f"redis://:{PASSWORD}@127.0.0.1:{server.port}/0"


def batch_failure(spark, **options: str) -> str:  # noqa: ANN001
    """The text of the exception a batch read raises, checking that no job ran."""
    group = f"bad-input-{free_port()}"
    spark.sparkContext.setJobGroup(group, "a read that must fail on the driver")
    try:
        with pytest.raises((AnalysisException, OptionError)) as failure:
            spark.read.format("sluice").options(**options).load().collect()
    finally:
        jobs = spark.sparkContext.statusTracker().getJobIdsForGroup(group)
        spark.sparkContext.setJobGroup("", "")
    assert jobs == [], "the bad input was found only after a Spark job started"
    return str(failure.value)


@pytest.mark.parametrize("options, message", [
    ({}, "option streams (a comma list of stream keys) or streamPattern (a glob such as events:*) is required"),
    ({"streams": "a", "streamPattern": "*"}, "options streams and streamPattern exclude each other: give only one"),
    ({"streams": "a,text"}, "key 'text' (option streams) holds a string, not a stream"),
    ({"streams": "a", "startingOffsets": '{"a": '},
     'option startingOffsets must be "earliest" or "latest" or a JSON object like {"stream": "0-0"}, not \'{"a":\''),
    ({"streams": "a", "startingOffsets": "[1]"}, "option startingOffsets must be"),
    ({"streams": "a", "startingOffsets": '{"zz": "0-0"}'},
     "option startingOffsets names stream 'zz', which is not in option streams"),
    ({"streamPattern": "a*", "endingOffsets": '{"b": "5-0"}'},
     "option endingOffsets names stream 'b', which does not match option streamPattern 'a*'"),
    ({"streams": "a", "startingOffsets": '{"a": "12-x"}'},
     "option startingOffsets for stream 'a' is not a valid stream entry ID (ms-seq, e.g. 1700000000000-0): '12-x'"),
    ({"streams": "a", "startingOffsets": '{"a": 7}'},
     'option startingOffsets for stream \'a\' must be "earliest" or "latest" or an ID string, not 7'),
    ({"streams": "a", "endingOffsets": "earliest"}, 'option endingOffsets must be "latest" or a JSON object'),
    ({"streams": "a", "endingOffsets": '{"a": -2}'},
     'option endingOffsets for stream \'a\' must be "latest" or an ID string, not -2'),
    ({"streams": "a", "minPartitions": "0"}, "option minPartitions must be at least 1, not 0"),
    ({"streams": "a", "pageSize": "many"}, "option pageSize must be an integer, not 'many'"),
    ({"streams": "a", "decode": "yes"}, "option decode must be true or false, not 'yes'"),
])
def test_bad_options_and_keys(spark, url, options, message) -> None:  # noqa: ANN001
    assert message in batch_failure(spark, url=url, **options)


def test_unreachable_server(spark) -> None:  # noqa: ANN001
    port = free_port()
    text = batch_failure(spark, url=f"redis://127.0.0.1:{port}", streams="a")
    assert f"cannot reach the server at redis://127.0.0.1:{port} (option url)" in text


def test_wrong_password_is_named_and_not_shown(spark, server) -> None:  # noqa: ANN001
    text = batch_failure(spark, url=f"redis://:not-{PASSWORD}@127.0.0.1:{server.port}", streams="a")
    assert f"the server at redis://:***@127.0.0.1:{server.port} (option url) refused the credentials" in text
    assert PASSWORD not in text


def test_a_missing_stream_reads_as_empty(spark, url) -> None:  # noqa: ANN001
    """Streams are created by their first XADD, so a job may start before its producer."""
    df = spark.read.format("sluice").options(url=url, streams="nothing-yet,a").load()
    assert df.where("stream = 'nothing-yet'").count() == 0
    assert df.count() == 20


def test_streaming_query_names_the_bad_key(spark, url, tmp_path) -> None:  # noqa: ANN001
    query = (spark.readStream.format("sluice").options(url=url, streams="a,text").load()
             .writeStream.format("parquet").option("checkpointLocation", str(tmp_path / "checkpoint"))
             .start(str(tmp_path / "out")))
    try:
        with pytest.raises(StreamingQueryException) as failure:
            query.awaitTermination(120)
    finally:
        query.stop()
    assert "key 'text' (option streams) holds a string, not a stream" in str(failure.value)

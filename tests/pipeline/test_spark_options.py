"""The Sluice formats' options are checked in the user's process when the query is
defined: at load() for the readers, save() and start() for the sink (Spark itself would
run the data source's code only later, in its workers, and none at start()). A bad
option is an OptionError whose text is one line: an unknown name with the closest known
one, a value out of range, an output mode the sink cannot take. No server is needed:
the options are refused before anything connects."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
import redis

from servers import checkout_env, free_port
from spark_streams import sluice_server  # noqa: F401 - a fixture

pytest.importorskip("pyspark", reason="pyspark is not installed; `make test` installs the spark extra")
from sluice.spark.options import OptionError  # noqa: E402

URL = f"redis://127.0.0.1:{free_port()}"       # nothing listens: nothing may connect


def refusal(call) -> str:  # noqa: ANN001
    """The OptionError's text, checked to be one line."""
    with pytest.raises(OptionError) as failure:
        call()
    text = str(failure.value)
    assert "\n" not in text
    return text


@pytest.mark.parametrize("streaming", [False, True], ids=["read", "readStream"])
def test_unknown_read_option_names_the_closest(spark, streaming: bool) -> None:
    reader = spark.readStream if streaming else spark.read
    assert refusal(lambda: reader.format("sluice").option("url", URL).option("streams", "s")
                   .option("streamz", "x").load()) == "unknown option 'streamz'; did you mean 'streams'?"


def test_an_unknown_name_with_nothing_close_lists_the_known_ones(spark) -> None:
    text = refusal(lambda: spark.read.format("sluice").options(url=URL, streams="s", password="x").load())
    assert text.startswith("unknown option 'password'; reading format sluice takes ")
    assert "maxEntriesPerTrigger" in text and "streamPattern" in text


def test_options_given_to_load_itself_are_checked(spark) -> None:
    assert refusal(lambda: spark.read.load(format="sluice", url=URL, streams="s", pagesize="0")) \
        == "option pageSize must be at least 1, not 0"


def test_out_of_range_values_are_refused_at_load(spark) -> None:
    assert refusal(lambda: spark.readStream.format("sluice").options(url=URL, streams="s")
                   .option("maxEntriesPerTrigger", -5).load()) \
        == "option maxEntriesPerTrigger must be at least 1, not -5"


def test_a_user_given_twice_must_agree(spark) -> None:
    url = URL.replace("redis://", "rediss://ann:pw@")
    assert refusal(lambda: spark.read.format("sluice").options(url=url, streams="s", user="bob")
                   .load()) == ("option user 'bob' differs from the user of option url 'ann': "
                                "give it once")


def test_snapshot_options(spark, tmp_path) -> None:
    assert refusal(lambda: spark.read.format("sluice-snapshot").option("tabel", "pel")
                   .load(str(tmp_path))) == "unknown option 'tabel'; did you mean 'table'?"


def test_sink_options_are_checked_at_save(spark) -> None:
    df = spark.sql("select 'x' as v")
    assert refusal(lambda: df.write.format("sluice").option("url", URL).option("streem", "s").save()) \
        == "unknown option 'streem'; did you mean 'stream'?"
    assert refusal(lambda: df.write.save(format="sluice", url=URL, stream="s", batchSize=0)) \
        == "option batchSize must be at least 1, not 0"


@pytest.mark.parametrize("how", ["outputMode", "start"])
def test_update_mode_is_refused_at_start(spark, tmp_path, how: str) -> None:
    """Spark would fail the query only at its first micro-batch, after start() returned."""
    writer = (spark.readStream.format("rate").load().selectExpr("cast(value as string) as v")
              .writeStream.format("sluice").options(url=URL, stream="s")
              .option("checkpointLocation", str(tmp_path / "checkpoint")))
    if how == "outputMode":
        start = writer.outputMode("update").start
    else:
        def start():
            return writer.start(outputMode="update")
    assert refusal(start) == ("format sluice takes output mode append, not update: Spark writes "
                              "update results to a Python sink only through foreachBatch")
    assert spark.streams.active == []


def test_the_querys_own_options_pass_to_the_sink(spark, tmp_path, sluice_server) -> None:
    """checkpointLocation and queryName are options of Spark's query that Spark hands
    the sink too: they are not refused as unknown."""
    client = redis.Redis(port=sluice_server.port)
    rows = tmp_path / "rows"
    rows.mkdir()
    (rows / "a.json").write_text('{"v": "x"}\n')
    query = (spark.readStream.schema("v string").json(str(rows)).writeStream.format("sluice")
             .options(url=f"redis://127.0.0.1:{sluice_server.port}", stream="named")
             .option("checkpointLocation", str(tmp_path / "checkpoint")).queryName("sluice_named")
             .trigger(availableNow=True).start())
    query.awaitTermination(120)
    assert query.exception() is None and client.xlen("named") == 1


def test_unknown_sink_option_is_refused_at_start(spark, tmp_path) -> None:
    writer = (spark.readStream.format("rate").load().selectExpr("cast(value as string) as v")
              .writeStream.format("sluice").options(url=URL, stream="s", maxlen="many")
              .option("checkpointLocation", str(tmp_path / "checkpoint")))
    assert refusal(writer.start) == "option maxLen must be an integer, not 'many'"
    assert spark.streams.active == []


def test_the_user_sees_the_sentence_last_with_no_java_trace(tmp_path) -> None:
    """A script that does not catch it: Python's report ends with the OptionError line,
    and no Java stack trace or Spark error wrapper comes with it."""
    script = textwrap.dedent(f"""
        from sluice.spark.local import local_spark
        spark = local_spark("bad-option")
        spark.readStream.format("sluice").option("url", "{URL}").option("streamz", "s").load()
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=checkout_env(),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1
    report = done.stderr[done.stderr.index("Traceback (most recent call last)"):]
    assert report.strip().splitlines()[-1] == \
        "sluice.spark.options.OptionError: unknown option 'streamz'; did you mean 'streams'?"
    assert "at org.apache" not in report and "Py4J" not in report and "PYTHON_DATA_SOURCE" not in report

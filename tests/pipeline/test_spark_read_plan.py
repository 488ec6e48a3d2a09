"""The `sluice` readers' planning, called directly on a real Sluice server without a
Spark session (fast): ID ranges, read limits Spark may pass, offsets."""
from __future__ import annotations

import logging
import time

import pytest
import pyarrow as pa
import redis
from redis.cluster import RedisCluster

from redis_cluster import redis_cluster  # noqa: F401 - a fixture
from spark_streams import fill_streams, sluice_client, sluice_server  # noqa: F401 - fixtures

pytest.importorskip("pyspark", reason="pyspark is not installed; `make test` installs the spark extra")
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxBytes, ReadMaxRows, ReadMinRows  # noqa: E402

from sluice.spark.id_ranges import IdRange, allocate_parts, split_range  # noqa: E402
from sluice.spark.offsets import MAX_PART, EntryId, parse_offsets  # noqa: E402
from sluice.spark.options import OptionError  # noqa: E402
from sluice.spark.read_options import read_options  # noqa: E402
from sluice.spark.batch_reader import SluiceBatchReader  # noqa: E402
from sluice.spark.data_loss import DataLossError  # noqa: E402
from sluice.spark.stream_reader import SluiceStreamReader  # noqa: E402


def reader(client: redis.Redis, **options: str) -> SluiceStreamReader:
    port = client.connection_pool.connection_kwargs["port"]
    return SluiceStreamReader(read_options({"url": f"redis://127.0.0.1:{port}", **options}))


def test_ranges_cover_the_span_end_to_end() -> None:
    pieces = split_range("s", EntryId(10, 5), EntryId(13, 2), 4)
    assert pieces[0].first == EntryId(10, 5) and pieces[-1].last == EntryId(13, 2)
    for left, right in zip(pieces, pieces[1:]):
        assert left.last.following() == right.first
    same_ms = split_range("s", EntryId(7, 0), EntryId(7, 99), 3)
    assert [(p.first.seq, p.last.seq) for p in same_ms] == [(0, 32), (33, 65), (66, 99)]
    assert split_range("s", EntryId(1, 1), EntryId(1, 2), 5) == [IdRange("s", EntryId(1, 1), EntryId(1, 1)),
                                                                  IdRange("s", EntryId(1, 2), EntryId(1, 2))]
    assert split_range("s", EntryId(MAX_PART, MAX_PART - 1), EntryId(MAX_PART, MAX_PART), 1)[0].last.following() is None


def test_parts_follow_stream_lengths() -> None:
    assert allocate_parts({"big": 900, "small": 100}, 10) == {"big": 9, "small": 1}
    assert allocate_parts({"a": 5, "b": 5, "c": 0}, 2) == {"a": 1, "b": 1, "c": 1}
    assert sum(allocate_parts({"a": 3, "b": 70, "c": 27}, 7).values()) == 7


def test_checkpoint_offsets_are_checked() -> None:
    assert parse_offsets({"s": "5-1", "t": {"id": "6", "added": 3}}, "x") == {
        "s": parse_offsets({"s": {"id": "5-1"}}, "x")["s"], "t": parse_offsets({"t": {"id": "6-0", "added": 3}}, "x")["t"]}
    with pytest.raises(OptionError, match="the checkpoint offset for stream 's' has an invalid entries-added count"):
        parse_offsets({"s": {"id": "5-1", "added": -1}}, "the checkpoint offset")


def wait_past_millisecond_of(client: redis.Redis, entry_id: str) -> None:
    """Until the server's clock has left the millisecond of entry_id: entries added next
    get later IDs than it (a fast server writes 150 entries within one millisecond, and
    equal IDs in two streams would tie where the test needs one stream to be older)."""
    ms = int(entry_id.split("-")[0])
    while True:
        seconds, micros = client.time()
        if seconds * 1000 + micros // 1000 > ms:
            return
        time.sleep(0.001)


def test_max_rows_is_shared_fairly_and_never_exceeded(sluice_client: redis.Redis) -> None:
    written = fill_streams(sluice_client, ["x"], 100)
    wait_past_millisecond_of(sluice_client, written["x"][-1][0])
    written.update(fill_streams(sluice_client, ["y"], 3))
    written.update(fill_streams(sluice_client, ["z"], 50))
    stream_reader = reader(sluice_client, streams="x,y,z")
    start = stream_reader.initialOffset()
    end = stream_reader.latestOffset(start, ReadMaxRows(31))
    # 10 each and the odd one to x (its next entry is the oldest); y has 3: its 7 spare
    # are shared by x and z, the odd one to x again: 15 + 3 + 13 = 31.
    assert {name: offset["id"] for name, offset in end.items()} == {
        "x": written["x"][14][0], "y": written["y"][2][0], "z": written["z"][12][0]}
    assert {name: offset.get("added") for name, offset in end.items()} == {"x": 15, "y": 3, "z": 13}
    assert stream_reader.latestOffset(start, ReadMaxRows(1)) == {
        **start, "x": {"id": written["x"][0][0], "added": 1}}
    split = reader(sluice_client, streams="x,y,z", minPartitions="6").partitions(start, end)
    assert [piece.stream for piece in split] == ["x", "x", "x", "y", "z", "z"]  # by entries to read
    x_pieces = [piece for piece in split if piece.stream == "x"]
    assert str(x_pieces[0].first) == written["x"][0][0] and str(x_pieces[-1].last) == written["x"][14][0]
    assert all(left.last.following() == right.first for left, right in zip(x_pieces, x_pieces[1:]))
    everything = stream_reader.latestOffset(start, ReadAllAvailable())
    assert stream_reader.latestOffset(start, ReadMaxBytes(10)) == everything
    assert {name: offset["id"] for name, offset in everything.items()} == {
        name: entries[-1][0] for name, entries in written.items()}


def test_min_rows_waits_for_enough_entries(sluice_client: redis.Redis) -> None:
    fill_streams(sluice_client, ["m"], 5)
    stream_reader = reader(sluice_client, streams="m")
    start = stream_reader.initialOffset()
    assert stream_reader.latestOffset(start, ReadMinRows(6)) == start
    fill_streams(sluice_client, ["m"], 1, first=5)
    assert stream_reader.latestOffset(start, ReadMinRows(6))["m"]["added"] == 6


def test_available_now_stops_at_the_entries_present_when_prepared(sluice_client: redis.Redis) -> None:
    before = fill_streams(sluice_client, ["n"], 10)
    stream_reader = reader(sluice_client, streamPattern="n*", startingOffsets="latest")
    start = stream_reader.initialOffset()
    assert start == {"n": {"id": before["n"][-1][0], "added": 10}}
    fill_streams(sluice_client, ["n"], 4, first=10)
    stream_reader.prepareForTriggerAvailableNow()
    fill_streams(sluice_client, ["n"], 4, first=14)
    fill_streams(sluice_client, ["n2"], 4)  # a new stream after the target: not part of this run
    end = stream_reader.latestOffset(start, ReadAllAvailable())
    assert end["n"]["id"] == sluice_client.xrange("n")[13][0].decode()
    assert "n2" not in end or end["n2"]["id"] == "0-0"
    assert stream_reader.partitions(end, end) == []


def test_xdel_after_the_checkpoint_is_data_loss_unless_allowed(sluice_client: redis.Redis) -> None:
    written = fill_streams(sluice_client, ["q"], 10)
    checkpoint = {"q": {"id": written["q"][3][0], "added": 4}}
    sluice_client.xdel("q", written["q"][6][0])
    with pytest.raises(DataLossError, match=(
            f"entries of stream 'q' after the checkpoint offset {written['q'][3][0]} were trimmed or deleted "
            f"before they were read \\(XDEL removed entries up to {written['q'][6][0]}")):
        reader(sluice_client, streams="q").latestOffset(checkpoint, ReadAllAvailable())
    end = reader(sluice_client, streams="q", failOnDataLoss="false").latestOffset(checkpoint, ReadAllAvailable())
    assert end == {"q": {"id": written["q"][9][0], "added": 10}}


def test_trimming_read_entries_or_unused_ids_is_not_data_loss(sluice_client: redis.Redis) -> None:
    written = fill_streams(sluice_client, ["t"], 10)
    checkpoint = {"t": {"id": written["t"][9][0], "added": 10}}
    sluice_client.xtrim("t", maxlen=0, approximate=False)
    assert reader(sluice_client, streams="t").latestOffset(checkpoint, ReadAllAvailable()) == checkpoint
    later = fill_streams(sluice_client, ["t"], 3, first=10)
    assert reader(sluice_client, streams="t").latestOffset(checkpoint, ReadAllAvailable()) == {
        "t": {"id": later["t"][-1][0], "added": 13}}
    fill_streams(sluice_client, ["t"], 3, first=13)
    sluice_client.xtrim("t", maxlen=2, approximate=False)
    with pytest.raises(DataLossError, match="^4 entries of stream 't' after the checkpoint offset"):
        reader(sluice_client, streams="t").latestOffset(checkpoint, ReadAllAvailable())


def test_streaming_over_a_cluster_reads_and_commits_per_stream(redis_cluster) -> None:  # noqa: ANN001
    """The driver's planning and an executor's read, through the cluster client."""
    client = RedisCluster(host=redis_cluster[0], port=redis_cluster[1])
    client.flushall(target_nodes=RedisCluster.PRIMARIES)
    names = ["c:one", "c:two", "c:three"]
    written = fill_streams(client, names, 40)
    assert len({client.get_node_from_key(name).name for name in names}) >= 2
    stream_reader = SluiceStreamReader(read_options({
        "url": f"redis://{redis_cluster[0]}:{redis_cluster[1]}", "cluster": "true",
        "streamPattern": "c:*", "commitGroup": "job"}))
    start = stream_reader.initialOffset()
    end = stream_reader.latestOffset(start, ReadMaxRows(60))
    assert sum(offset["added"] for offset in end.values()) == 60
    got = [row for piece in stream_reader.partitions(start, end)
           for batch in stream_reader.read(piece) for row in batch.to_pylist()]
    assert sorted((row["stream"], row["id"]) for row in got) == sorted(
        (name, entry_id) for name in names for entry_id, _ in written[name][:20])
    assert all(row["fields"] == written[row["stream"]][int(row["fields"][0][1])][1] for row in got)
    stream_reader.commit(end)
    assert {name: client.xinfo_groups(name)[0]["lag"] for name in names} == {name: 20 for name in names}
    stream_reader.stop()
    client.close()


def read_pieces(stream_reader, pieces) -> list:  # noqa: ANN001 - a Sluice batch or stream reader
    """(stream, id) of every entry the executors' reads of `pieces` return."""
    return [(row["stream"], row["id"]) for piece in pieces for batch in stream_reader.read(piece)
            for row in batch.select(["stream", "id"]).to_pylist()]


def test_a_json_start_reads_after_its_id_and_counts_the_entries(sluice_client: redis.Redis) -> None:
    written = fill_streams(sluice_client, ["j", "k"], 10)
    ids = [entry_id for entry_id, _ in written["j"]]
    stream_reader = reader(sluice_client, streams="j,k", startingOffsets=f'{{"j": "{ids[3]}"}}')
    start = stream_reader.initialOffset()
    assert start == {"j": {"id": ids[3]}, "k": {"id": "0-0", "added": 0}}
    end = stream_reader.latestOffset(start, ReadAllAvailable())
    assert end["j"] == {"id": ids[9], "added": 10}
    assert [entry_id for name, entry_id in read_pieces(stream_reader, stream_reader.partitions(start, end))
            if name == "j"] == ids[4:]


def test_pages_of_page_size_as_arrow_batches(sluice_client: redis.Redis) -> None:
    written = fill_streams(sluice_client, ["pg"], 30)
    stream_reader = reader(sluice_client, streams="pg", pageSize="7")
    start = stream_reader.initialOffset()
    [piece] = stream_reader.partitions(start, stream_reader.latestOffset(start, ReadAllAvailable()))
    batches = list(stream_reader.read(piece))
    assert all(isinstance(batch, pa.RecordBatch) for batch in batches)
    assert [batch.num_rows for batch in batches] == [7, 7, 7, 7, 2]
    assert [row["id"] for batch in batches for row in batch.to_pylist()] == [i for i, _ in written["pg"]]


def test_a_planned_batch_reads_the_same_entries_after_more_arrive(sluice_client: redis.Redis) -> None:
    """What a restart relies on: Spark replays a batch from its logged offsets."""
    written = fill_streams(sluice_client, ["r"], 20)
    stream_reader = reader(sluice_client, streams="r", minPartitions="3")
    start = stream_reader.initialOffset()
    end = stream_reader.latestOffset(start, ReadMaxRows(12))
    fill_streams(sluice_client, ["r"], 20, first=20)
    pieces = stream_reader.partitions(start, end)
    assert len(pieces) == 3 and pieces == stream_reader.partitions(start, end)
    assert read_pieces(stream_reader, pieces) == [("r", entry_id) for entry_id, _ in written["r"][:12]]


def test_entries_trimmed_between_planning_and_reading(sluice_client: redis.Redis, caplog) -> None:  # noqa: ANN001
    """A range whose planned first entry is gone when its task reads it lost entries: the
    task fails, or with failOnDataLoss=false warns and reads what is left. Trimming only
    entries the checkpoint had passed loses nothing."""
    written = fill_streams(sluice_client, ["tr"], 100, spaced=True)   # the cuts: ids[20], [47], [73]
    ids = [entry_id for entry_id, _ in written["tr"]]
    stream_reader = reader(sluice_client, streams="tr", minPartitions="3")
    start = {"tr": {"id": ids[19], "added": 20}}
    end = stream_reader.latestOffset(start, ReadAllAvailable())
    pieces = stream_reader.partitions(start, end)
    assert [str(piece.head) for piece in pieces][0] == ids[20] and len(pieces) == 3
    sluice_client.xtrim("tr", maxlen=80, approximate=False)   # entries up to the checkpoint
    assert read_pieces(stream_reader, pieces) == [("tr", entry_id) for entry_id in ids[20:]]
    sluice_client.xtrim("tr", maxlen=50, approximate=False)   # 30 unread entries
    with pytest.raises(DataLossError, match=(
            f"^entries of stream 'tr' from {ids[20]} on, which this read was planned to return, were "
            f"trimmed or deleted before its task read them \\(the stream's first entry is now {ids[50]}\\); "
            f"set option failOnDataLoss to false to skip them$")):
        read_pieces(stream_reader, pieces[:1])
    assert read_pieces(stream_reader, pieces[-1:])[-1] == ("tr", ids[-1])  # its head is still there
    lenient = reader(sluice_client, streams="tr", minPartitions="3", failOnDataLoss="false")
    with caplog.at_level(logging.WARNING, logger="sluice.spark.data_loss"):
        assert read_pieces(lenient, pieces) == [("tr", entry_id) for entry_id in ids[50:]]
    assert f"entries of stream 'tr' from {ids[20]} on" in caplog.text and "failOnDataLoss is false" in caplog.text
    # A batch Spark planned before a restart and replays: partitions() finds the loss too.
    with pytest.raises(DataLossError, match="^30 entries of stream 'tr' after the checkpoint offset"):
        stream_reader.partitions(start, end)
    sluice_client.delete("tr")
    with pytest.raises(DataLossError, match="the stream is now empty"):
        read_pieces(stream_reader, pieces[-1:])


def test_batch_ranges_trimmed_before_their_task(sluice_client: redis.Redis) -> None:
    written = fill_streams(sluice_client, ["bt"], 60, spaced=True)    # the cut: ids[30]
    ids = [entry_id for entry_id, _ in written["bt"]]
    port = sluice_client.connection_pool.connection_kwargs["port"]
    options = {"url": f"redis://127.0.0.1:{port}", "streams": "bt", "minPartitions": "2"}
    planned = SluiceBatchReader(read_options(options))
    pieces = planned.partitions()
    assert [str(piece.head) for piece in pieces] == [ids[0], ids[30]]
    sluice_client.xtrim("bt", maxlen=45, approximate=False)
    with pytest.raises(DataLossError, match=f"^entries of stream 'bt' from {ids[0]} on"):
        read_pieces(planned, pieces)
    assert read_pieces(planned, pieces[1:]) == [("bt", entry_id) for entry_id in ids[30:]]

"""Format `sluice-snapshot`: a Sluice snapshot file read offline, with no server.

    spark.read.format("sluice-snapshot").option("streamPattern", "*").load("/var/lib/sluice")

Options:
    path           a snapshot file, or a data directory (see `snapshot_file`)
    streams / streamPattern   which streams, as for format `sluice` (one is required;
                   streamPattern=* reads them all)
    table          `entries` (default: the `sluice` format's schema) or `pel`: the
                   pending entries of every consumer group (stream, group, consumer,
                   id, delivery_time in ms since the epoch, delivery_count)
    decode         entries' field values as strings instead of binary
    db             the database to read (default 0)
    minPartitions  at least this many partitions when the file has that many blocks
                   (default 2)
    maxPartitionBytes  at most about this many bytes of file per partition (default
                   32 MiB)

The driver reads the file's block index (persist.block_index, which checks every
block's checksum and the end record, so a damaged file fails before any task runs,
naming the file and offset); a partition is a run of consecutive blocks (block_runs)
that an executor decodes one block after another, so executors must see the file at the same path (local mode, or a shared filesystem,
as for Spark's own file sources).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterator, List, Mapping, Optional, Sequence, Tuple

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.types import StructType

from engine import glob_match
from persist import (Block, PendingEntries, StreamEntries, aof_base_file, block_contents, block_index,
                     is_snapshot, refuse_rdb)
from sluice.spark.arrow_entries import arrow_entry_schema, entry_schema
from sluice.spark.options import OptionError, bool_option, check_names, int_option, text_option
from sluice.spark.read_options import _stream_choice

PEL_SCHEMA_DDL = ("stream string, group string, consumer string, id string, "
                  "delivery_time long, delivery_count long")
PEL_ARROW_SCHEMA = pa.schema([("stream", pa.string()), ("group", pa.string()),
                              ("consumer", pa.string()), ("id", pa.string()),
                              ("delivery_time", pa.int64()), ("delivery_count", pa.int64())])
TABLES = ("entries", "pel")
DEFAULT_MIN_PARTITIONS = 2             # as local[2]; set minPartitions to the executors' cores
DEFAULT_MAX_PARTITION_BYTES = 32 << 20  # of snapshot file (lz4-compressed) per task
SNAPSHOT_OPTIONS = ("path", "table", "streams", "streamPattern", "decode", "db", "minPartitions",
                    "maxPartitionBytes")
TEMP_PREFIX = "temp-"        # a snapshot being written beside the real one
EXPECTED = "a Sluice snapshot"


def snapshot_file(path: str) -> str:
    """The snapshot `path` names. A data directory's snapshot is the one file in it that
    starts with the snapshot magic (whatever `dbfilename` calls it); without one, the
    base of its AOF when that base is a snapshot (the state at the last rewrite: the
    incremental files after it hold commands, which need an engine to replay)."""
    if not os.path.exists(path):
        raise OptionError(f"option path: {path} does not exist")
    if not os.path.isdir(path):
        return path             # persist names a Redis RDB file or damage as it reads
    files = sorted(os.path.join(path, name) for name in os.listdir(path)
                   if not name.startswith(TEMP_PREFIX) and os.path.isfile(os.path.join(path, name)))
    found = [name for name in files if is_snapshot(name)]
    if len(found) > 1:
        raise OptionError(f"option path: the directory {path} holds several snapshots "
                          f"({', '.join(found)}); give the file to read")
    if found:
        return found[0]
    base = aof_base_file(path)
    if base is not None and is_snapshot(base):
        return base
    for name in files + ([base] if base else []):
        refuse_rdb(name, EXPECTED)
    raise OptionError(f"option path: the directory {path} holds no Sluice snapshot "
                      f"(neither a snapshot file nor an AOF whose base is one)")


@dataclass(frozen=True)
class SnapshotOptions:
    """The checked options; picklable, so they travel to executors."""

    path: str
    table: str
    streams: Optional[Tuple[str, ...]]
    pattern: Optional[str]
    decode: bool
    db: int
    min_partitions: int
    max_partition_bytes: int

    def wants(self, db: int, stream: bytes) -> bool:
        if db != self.db:
            return False
        if self.streams is not None:
            return stream.decode("utf-8", "surrogateescape") in self.streams
        return glob_match(self.pattern.encode("utf-8", "surrogateescape"), stream)


def snapshot_options(options: Mapping[str, str]) -> SnapshotOptions:
    """Parses and checks every option; the path is resolved to a file."""
    check_names(options, SNAPSHOT_OPTIONS, "format sluice-snapshot")
    path = text_option(options, "path")
    if path is None:
        raise OptionError("option path (a snapshot file or a data directory) is required: "
                          "load(path) or option(\"path\", ...)")
    table = (text_option(options, "table", "entries")).lower()
    if table not in TABLES:
        raise OptionError(f"option table must be entries or pel, not {table!r}")
    streams, pattern = _stream_choice(options)
    return SnapshotOptions(snapshot_file(path), table, streams, pattern,
                           bool_option(options, "decode", False), int_option(options, "db", 0, 0),
                           int_option(options, "minPartitions", DEFAULT_MIN_PARTITIONS),
                           int_option(options, "maxPartitionBytes", DEFAULT_MAX_PARTITION_BYTES))


def block_runs(blocks: Sequence[Block], file_size: int, min_partitions: int,
               max_partition_bytes: int) -> List[Tuple[Block, ...]]:
    """Consecutive blocks grouped into partitions, as Spark's file sources pack splits:
    as many as the file's bytes over max_partition_bytes, at least min_partitions
    (when there are that many blocks), blocks shared out evenly. A task costs Spark
    tens of milliseconds whatever it reads, and a block holds well under a megabyte
    of file: one task per block spends more on tasks than on decoding."""
    if not blocks:
        return []
    wanted = max(min_partitions, -(-file_size // max_partition_bytes))
    count = min(len(blocks), wanted)
    return [tuple(blocks[i * len(blocks) // count:(i + 1) * len(blocks) // count])
            for i in range(count)]


@dataclass(frozen=True)
class BlockPartition(InputPartition):
    """Consecutive blocks of the snapshot, read by one task."""

    blocks: Tuple[Block, ...]


def _text(names: List[bytes]) -> pa.Array:
    return pa.array([name.decode("utf-8", "replace") for name in names], pa.string())


def _as_text(array: pa.Array) -> pa.Array:
    """Binary as UTF-8 text; bytes that are not UTF-8 get the replacement character, as
    format sluice shows them."""
    try:
        return array.cast(pa.string())
    except pa.ArrowInvalid:
        return _text(array.to_pylist())


def _ids(ms: pa.Array, seq: pa.Array) -> pa.Array:
    """IDs as "ms-seq" text, built column-wise."""
    return pc.binary_join_element_wise(pc.cast(ms, pa.string()), pc.cast(seq, pa.string()), "-")


def _buffer_array(kind: pa.DataType, length: int, *buffers: bytes) -> pa.Array:
    return pa.Array.from_buffers(kind, length, [None, *map(pa.py_buffer, buffers)])


def _entry_batch(schema: pa.Schema, decode: bool, run: StreamEntries) -> pa.RecordBatch:
    """A run of entries as a record batch of the `sluice` format's schema, straight from
    the decoded column buffers."""
    ms_data, seq_data, pair_ends, names, name_ends, values, value_ends = run.columns
    pairs = len(name_ends) // 4 - 1
    ms = _buffer_array(pa.int64(), run.count, ms_data)
    seq = _buffer_array(pa.int64(), run.count, seq_data)
    keys = _as_text(_buffer_array(pa.binary(), pairs, name_ends, names))
    items = _buffer_array(pa.binary(), pairs, value_ends, values)
    fields = pa.MapArray.from_arrays(_buffer_array(pa.int32(), run.count + 1, pair_ends), keys,
                                     _as_text(items) if decode else items,
                                     type=schema.field("fields").type)
    streams = pa.repeat(pa.scalar(run.stream.decode("utf-8", "replace"), pa.string()), run.count)
    return pa.RecordBatch.from_arrays([streams, _ids(ms, seq), ms, seq, fields], schema=schema)


def _pel_batch(run: PendingEntries) -> pa.RecordBatch:
    count = len(run.entries)
    ms, seq, times, counts, consumers = zip(*run.entries)
    return pa.RecordBatch.from_arrays([
        _text([run.stream] * count), _text([run.group] * count), _text(list(consumers)),
        _ids(pa.array(ms, pa.int64()), pa.array(seq, pa.int64())), pa.array(times, pa.int64()),
        pa.array(counts, pa.int64())], schema=PEL_ARROW_SCHEMA)


class SnapshotReader(DataSourceReader):
    """Reads the block index on the driver when created; each task decodes one block."""

    def __init__(self, options: SnapshotOptions) -> None:
        self.options = options
        self.blocks = block_index(options.path)

    def partitions(self) -> List[InputPartition]:
        options = self.options
        return [BlockPartition(run) for run in block_runs(
            self.blocks, os.path.getsize(options.path), options.min_partitions,
            options.max_partition_bytes)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        options = self.options
        schema = arrow_entry_schema(options.decode)
        if options.table == "pel":
            for block in partition.blocks:
                for run in block_contents(block, pending=True, wanted=options.wants):
                    yield _pel_batch(run)
            return
        for block in partition.blocks:
            for run in block_contents(block, wanted=options.wants):
                yield _entry_batch(schema, options.decode, run)


class SluiceSnapshotDataSource(DataSource):
    """Stream entries, or consumer groups' pending entries, of a snapshot file."""

    @classmethod
    def name(cls) -> str:
        return "sluice-snapshot"

    def schema(self) -> str:
        if text_option(self.options, "table", "entries").lower() == "pel":
            return PEL_SCHEMA_DDL
        return entry_schema(bool_option(self.options, "decode", False))

    def reader(self, schema: StructType) -> DataSourceReader:
        return SnapshotReader(snapshot_options(self.options))


__all__ = ["SluiceSnapshotDataSource", "SnapshotReader", "SnapshotOptions", "snapshot_file",
           "snapshot_options", "PEL_SCHEMA_DDL"]

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

The driver reads the file's block index (persist.snapshot_blocks, which checks every
block's checksum and the end record, so a damaged file fails before any task runs,
naming the file and offset); each block is one partition that an executor decodes.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterator, List, Mapping, Optional, Tuple

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.types import StructType

from engine.glob import match
from persist import snapshot
from persist.aof import AppendOnlyLog
from persist.snapshot_blocks import Block, PendingEntries, StreamEntries, block_contents, snapshot_blocks
from pipeline.spark.arrow_entries import EntryBatchBuilder, entry_schema
from pipeline.spark.options import OptionError, bool_option, int_option, text_option
from pipeline.spark.read_options import _stream_choice

PEL_SCHEMA_DDL = ("stream string, group string, consumer string, id string, "
                  "delivery_time long, delivery_count long")
PEL_ARROW_SCHEMA = pa.schema([("stream", pa.string()), ("group", pa.string()),
                              ("consumer", pa.string()), ("id", pa.string()),
                              ("delivery_time", pa.int64()), ("delivery_count", pa.int64())])
TABLES = ("entries", "pel")
RDB_MAGIC = b"REDIS"
TEMP_PREFIX = "temp-"        # a snapshot being written beside the real one


def _is_rdb(path: str) -> bool:
    with open(path, "rb") as f:
        return f.read(len(RDB_MAGIC)) == RDB_MAGIC


def _refuse_rdb(path: str) -> None:
    if _is_rdb(path):
        raise OptionError(f"option path: {path} is a Redis RDB file, not a Sluice snapshot; "
                          f"load it into redis-server and read that with format sluice")


def _aof_snapshot_base(directory: str) -> Optional[str]:
    """The base file of the directory's AOF when it is in snapshot form."""
    aof = AppendOnlyLog(directory)
    manifest = aof.read_manifest()
    if manifest is None or manifest.base is None:
        return None
    base = aof.path_of(manifest.base)
    return base if snapshot.is_snapshot(base) else None


def snapshot_file(path: str) -> str:
    """The snapshot `path` names. A data directory's snapshot is the one file in it that
    starts with the snapshot magic (whatever `dbfilename` calls it); without one, the
    base of its AOF when that base is a snapshot (the state at the last rewrite: the
    incremental files after it hold commands, which need an engine to replay)."""
    if not os.path.exists(path):
        raise OptionError(f"option path: {path} does not exist")
    if not os.path.isdir(path):
        _refuse_rdb(path)
        return path
    files = sorted(os.path.join(path, name) for name in os.listdir(path)
                   if not name.startswith(TEMP_PREFIX) and os.path.isfile(os.path.join(path, name)))
    found = [name for name in files if snapshot.is_snapshot(name)]
    if len(found) > 1:
        raise OptionError(f"option path: the directory {path} holds several snapshots "
                          f"({', '.join(found)}); give the file to read")
    if found:
        return found[0]
    base = _aof_snapshot_base(path)
    if base is not None:
        return base
    for name in files:
        _refuse_rdb(name)
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

    def wants(self, db: int, stream: bytes) -> bool:
        if db != self.db:
            return False
        if self.streams is not None:
            return stream.decode("utf-8", "surrogateescape") in self.streams
        return match(self.pattern.encode("utf-8", "surrogateescape"), stream)


def snapshot_options(options: Mapping[str, str]) -> SnapshotOptions:
    """Parses and checks every option; the path is resolved to a file."""
    path = text_option(options, "path")
    if path is None:
        raise OptionError("option path (a snapshot file or a data directory) is required: "
                          "load(path) or option(\"path\", ...)")
    table = (text_option(options, "table", "entries")).lower()
    if table not in TABLES:
        raise OptionError(f"option table must be entries or pel, not {table!r}")
    streams, pattern = _stream_choice(options)
    return SnapshotOptions(snapshot_file(path), table, streams, pattern,
                           bool_option(options, "decode", False), int_option(options, "db", 0, 0))


@dataclass(frozen=True)
class BlockPartition(InputPartition):
    """One block of the snapshot, read by one task."""

    block: Block


def _text(names: List[bytes]) -> pa.Array:
    return pa.array([name.decode("utf-8", "replace") for name in names], pa.string())


def _pel_batch(run: PendingEntries) -> pa.RecordBatch:
    count = len(run.entries)
    ms, seq, times, counts, consumers = zip(*run.entries)
    return pa.RecordBatch.from_arrays([
        _text([run.stream] * count), _text([run.group] * count), _text(list(consumers)),
        pa.array([f"{m}-{s}" for m, s in zip(ms, seq)], pa.string()),
        pa.array(times, pa.int64()), pa.array(counts, pa.int64())], schema=PEL_ARROW_SCHEMA)


class SnapshotReader(DataSourceReader):
    """Reads the block index on the driver when created; each task decodes one block."""

    def __init__(self, options: SnapshotOptions) -> None:
        self.options = options
        self.blocks = snapshot_blocks(options.path)

    def partitions(self) -> List[InputPartition]:
        return [BlockPartition(block) for block in self.blocks]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        options = self.options
        builder = EntryBatchBuilder(options.decode)
        for run in block_contents(partition.block):
            if not options.wants(run.db, run.stream):
                continue
            if isinstance(run, StreamEntries) and options.table == "entries":
                yield builder.build(run.stream, [(f"{ms}-{seq}", fields)
                                                 for ms, seq, fields in run.entries])
            elif isinstance(run, PendingEntries) and options.table == "pel":
                yield _pel_batch(run)


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

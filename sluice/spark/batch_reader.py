"""Batch reads of format `sluice`: a consistent snapshot of ID ranges.

The driver resolves the offsets when Spark plans the DataFrame's read (at its first action:
"latest" is the last entry at that moment, and later actions on that DataFrame read the
same entries) and cuts the streams into ID ranges; executors read the ranges."""
from __future__ import annotations

from typing import Iterator, List, Optional

import pyarrow as pa
from pyspark.sql.datasource import DataSourceReader, InputPartition

from sluice.spark.connection import Client
from sluice.spark.id_ranges import IdRange, allocate_parts, read_range, split_range, with_heads
from sluice.spark.offsets import EARLIEST, LATEST, ZERO_ID, EntryId
from sluice.spark.read_options import ReadOptions
from sluice.spark.stream_catalog import StreamState, stream_states


def _bounds(client: Client, options: ReadOptions, state: StreamState) -> Optional[IdRange]:
    """The range of `state`'s entries the offsets select, narrowed to the first and last
    entry inside it; None when it holds none."""
    start = options.starting.position(state.name)
    end = options.ending.position(state.name)
    if not state.exists or start == LATEST:
        return None
    first = ZERO_ID if start == EARLIEST else start.following()
    last = state.last if end == LATEST else end
    if first is None or last is None or first > last:
        return None
    head = client.xrange(state.name, str(first), str(last), count=1)
    tail = client.xrevrange(state.name, str(last), str(first), count=1)
    if not head or not tail:
        return None
    where = f"an entry ID of stream {state.name!r}"
    return IdRange(state.name, EntryId.parse(head[0][0], where), EntryId.parse(tail[0][0], where))


def plan_ranges(options: ReadOptions) -> List[IdRange]:
    """The ranges of a batch read, at least `minPartitions` of them in all (one per
    stream by default), shared out by stream length."""
    client = options.address.connect()
    try:
        states = stream_states(client, options)
        bounds = {state.name: (state, _bounds(client, options, state)) for state in states}
        chosen = {name: pair for name, pair in bounds.items() if pair[1] is not None}
        parts = allocate_parts({name: state.length for name, (state, _) in chosen.items()},
                               options.min_partitions or len(chosen))
        return with_heads(client, [piece for name, (_, whole) in chosen.items()
                                   for piece in split_range(name, whole.first, whole.last, parts[name])])
    finally:
        client.close()


class SluiceBatchReader(DataSourceReader):
    """Plans on the driver when created, so bad offsets, keys of the wrong type and
    unreachable servers fail before any task runs. Entries of the planned ranges trimmed
    before their task reads them are data loss (option failOnDataLoss, as Spark's Kafka
    source has it for batch queries too)."""

    def __init__(self, options: ReadOptions) -> None:
        self.options = options
        self.ranges = plan_ranges(options)

    def partitions(self) -> List[InputPartition]:
        return list(self.ranges)

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, IdRange):  # Spark's stand-in when there are no ranges
            return iter(())
        return read_range(self.options, partition)

"""Streaming reads of format `sluice` (Structured Streaming, micro-batches).

An offset is, per stream, the last ID read (and the stream's entries-added count there,
see offsets.StreamOffset). A micro-batch reads, per stream, the entries after the start
offset up to the end offset, both real entry IDs chosen on the driver, so a restart from
a checkpoint replays exactly the same entries. Limits (option `maxEntriesPerTrigger`, or
what Spark passes) are shared fairly between streams. A stream that appears later (with
streamPattern, or a listed stream created later) is read from its first entry."""
from __future__ import annotations

from typing import Dict, Iterator, List, Optional, Sequence, Set, Tuple

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (ReadAllAvailable, ReadLimit, ReadMaxRows, ReadMinRows,
                                              SupportsTriggerAvailableNow)

from sluice.spark.commit_group import move_group
from sluice.spark.connection import Client
from sluice.spark.data_loss import on_data_loss
from sluice.spark.id_ranges import IdRange, allocate_parts, keep_flat_replies, read_range, split_range, with_heads
from sluice.spark.offsets import (EARLIEST, LATEST, ZERO_ID, EntryId, StreamOffset, offsets_json,
                                    parse_offsets)
from sluice.spark.read_options import ReadOptions
from sluice.spark.stream_catalog import StreamState, stream_state, stream_states
from sluice.spark.stream_positions import (added_at_end, added_before_next, count_entries, fair_ends,
                                             lost_entries)

class SluiceStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """The driver side plans micro-batches; `read` runs on executors."""

    def __init__(self, options: ReadOptions) -> None:
        self.options = options
        self._client: Optional[Client] = None
        self._target: Optional[Dict[str, EntryId]] = None
        self._warned: Set[Tuple[str, Optional[EntryId], Optional[int]]] = set()
        self._group_at: Dict[str, StreamOffset] = {}
        self._states()  # fail now, before any task, on a bad server, password or key

    def __getstate__(self) -> dict:
        """Executors get the options, not the driver's connection or planning state."""
        return {"options": self.options}

    def __setstate__(self, state: dict) -> None:
        self.options = state["options"]
        self._client = None
        self._target = None
        self._warned = set()
        self._group_at = {}

    def _connection(self) -> Client:
        if self._client is None:
            self._client = self.options.address.connect()
            keep_flat_replies(self._client)
        return self._client

    def _states(self) -> List[StreamState]:
        return stream_states(self._connection(), self.options)

    def initialOffset(self) -> dict:
        offsets: Dict[str, StreamOffset] = {}
        for state in self._states():
            position = self.options.starting.position(state.name)
            if position == EARLIEST:
                offsets[state.name] = StreamOffset(ZERO_ID, 0)
            elif position == LATEST:
                offsets[state.name] = StreamOffset(max(state.last_generated, state.last or ZERO_ID),
                                                   state.entries_added)
            else:
                offsets[state.name] = StreamOffset(position)
        return offsets_json(offsets)

    def getDefaultReadLimit(self) -> ReadLimit:
        if self.options.max_entries_per_trigger is not None:
            return ReadMaxRows(self.options.max_entries_per_trigger)
        return ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        """Trigger.AvailableNow reads up to the last entry of each stream as of now."""
        self._target = {state.name: state.last for state in self._states() if state.last is not None}

    def _check_data_loss(self, state: StreamState, begin: StreamOffset) -> None:
        """Entries after `begin` gone unread: fail, or warn once per state of the stream."""
        reason = lost_entries(state, begin)
        seen = (state.name, state.max_deleted, state.entries_added)
        if reason is not None and (self.options.fail_on_data_loss or seen not in self._warned):
            self._warned.add(seen)
            on_data_loss(reason, self.options.fail_on_data_loss)

    def _cap(self, state: StreamState) -> Optional[EntryId]:
        """The last entry a batch may read now: the stream's last, or AvailableNow's target."""
        if self._target is None or state.last is None:
            return state.last
        target = self._target.get(state.name)
        return min(target, state.last) if target is not None else None

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        starts = parse_offsets(start, "the checkpoint offset")
        self._move_group(starts)
        client, page_size = self._connection(), self.options.page_size
        ends = dict(starts)
        states: Dict[str, StreamState] = {}
        caps: Dict[str, EntryId] = {}
        for state in self._states():
            begin = starts.setdefault(state.name, StreamOffset(ZERO_ID, 0))
            self._check_data_loss(state, begin)
            cap = self._cap(state)
            if cap is not None and cap > begin.last:
                states[state.name], caps[state.name] = state, cap
        if isinstance(limit, ReadMaxRows):
            reach = fair_ends(client, {name: starts[name].last for name in caps}, caps, limit.max_rows, page_size)
        elif isinstance(limit, ReadMinRows) and self._target is None and sum(
                count_entries(client, name, starts[name].last, cap, limit.min_rows, page_size)[0]
                for name, cap in caps.items()) < limit.min_rows:
            reach = {}  # too few entries yet: wait for more
        else:
            # ReadAllAvailable, or ReadMinRows with enough entries. ReadMaxFiles and
            # ReadMaxBytes do not apply to streams of entries: everything is read.
            reach = {name: (cap, None) for name, cap in caps.items()}
        for name, (end, read) in reach.items():
            if end > starts[name].last:
                before = added_before_next(client, states[name], starts[name], page_size)
                ends[name] = StreamOffset(end, added_at_end(states[name], end, before, read))
        return offsets_json(ends)

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        """Per stream, the IDs after its start offset up to its end offset; cut into more
        ranges when option minPartitions asks for it (shared by entries to read, where the
        offsets' counts tell them). Spark also calls this for a batch planned before a
        restart, so entries lost since latestOffset are looked for again here; each range
        keeps its first entry for its task to find (see id_ranges.with_heads)."""
        starts = parse_offsets(start, "the start offset")
        spans: Dict[str, Tuple[EntryId, EntryId]] = {}
        weights: Dict[str, int] = {}
        for name, offset in sorted(parse_offsets(end, "the end offset").items()):
            begin = starts.get(name, StreamOffset(ZERO_ID))
            first = begin.last.following()
            if first is not None and first <= offset.last:
                spans[name] = (first, offset.last)
                known = offset.added is not None and begin.added is not None
                weights[name] = offset.added - begin.added if known else 1
        for name in spans:
            state = stream_state(self._connection(), name, self.options.streams_option)
            self._check_data_loss(state, starts.get(name, StreamOffset(ZERO_ID)))
        parts = allocate_parts(weights, self.options.min_partitions or len(spans))
        pieces: List[IdRange] = []
        for name, (first, last) in spans.items():
            if parts[name] > 1:  # cut from the first entry, not from an ID before it (0-1)
                head = self._connection().xrange(name, str(first), str(last), count=1)
                first = EntryId.parse(head[0][0], f"an entry ID of stream {name!r}") if head else first
            pieces.extend(split_range(name, first, last, parts[name]))
        return with_heads(self._connection(), pieces)

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return read_range(self.options, partition)

    def commit(self, end: dict) -> None:
        self._move_group(parse_offsets(end, "the committed offset"))

    def _move_group(self, offsets: Dict[str, StreamOffset]) -> None:
        """Moves the commitGroup to offsets Spark has processed. Spark calls commit() for a
        batch only when it plans the next one, so the start of latestOffset (the end of
        the last finished batch) moves it too: else the last batch of an AvailableNow run
        would stay uncommitted in XINFO GROUPS."""
        if self.options.commit_group is None:
            return
        client = self._connection()
        for name, offset in offsets.items():
            if offset.last != ZERO_ID and self._group_at.get(name) != offset:
                move_group(client, name, self.options.commit_group, offset)
                self._group_at[name] = offset

    def stop(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

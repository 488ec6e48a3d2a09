"""Streaming reads of format `sluice` (Structured Streaming, micro-batches).

An offset is the last ID read per stream, `{"events": "1700000000000-3"}`. A micro-batch
reads, per stream, the entries after the start offset up to the end offset, both real
entry IDs chosen on the driver, so a restart from a checkpoint replays exactly the same
entries. Limits (option `maxEntriesPerTrigger`, or what Spark passes) are shared fairly
between streams."""
from __future__ import annotations

import logging
from typing import Dict, Iterator, List, Optional, Sequence, Set, Tuple

import pyarrow as pa
import redis
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (ReadAllAvailable, ReadLimit, ReadMaxRows, ReadMinRows,
                                              SupportsTriggerAvailableNow)

from pipeline.spark.connection import Client
from pipeline.spark.id_ranges import IdRange, keep_flat_replies, read_range, split_range
from pipeline.spark.offsets import EARLIEST, LATEST, ZERO_ID, EntryId, offsets_json, parse_offsets
from pipeline.spark.read_options import ReadOptions
from pipeline.spark.stream_catalog import StreamState, stream_states

log = logging.getLogger(__name__)


class DataLossError(RuntimeError):
    """Entries after the checkpoint were deleted before the query read them."""


def lost_entries(state: StreamState, after: EntryId) -> Optional[str]:
    """Why entries of `state` after ID `after` (the last one read) are gone, or None.

    XINFO STREAM's max-deleted-entry-id is the largest ID ever removed (by XTRIM or XDEL):
    if it is above `after`, an entry the query never read was removed. A stream that just
    had no entries after `after`, or was trimmed only up to it, loses nothing."""
    if after == ZERO_ID or state.max_deleted is None or state.max_deleted <= after:
        return None
    first = f"its first entry is now {state.first}" if state.first else "it is now empty"
    return (f"entries of stream {state.name!r} after the checkpoint offset {after} were trimmed or "
            f"deleted before they were read (the stream's max-deleted-entry-id is {state.max_deleted}, "
            f"{first}); set option failOnDataLoss to false to skip them")


def count_entries(client: Client, stream: str, after: EntryId, last: Optional[EntryId],
                  limit: Optional[int], page_size: int) -> Tuple[int, EntryId]:
    """How many entries follow `after` up to `last` (inclusive; None for the end of the
    stream), stopping at `limit`; and the ID of the last one counted (`after` if none)."""
    counted, position = 0, after
    while limit is None or counted < limit:
        start = position.following()
        if start is None or (last is not None and start > last):
            break
        want = page_size if limit is None else min(page_size, limit - counted)
        page = client.xrange(stream, str(start), str(last) if last else "+", count=want)
        if not page:
            break
        counted += len(page)
        position = EntryId.parse(page[-1][0], f"an entry ID of stream {stream!r}")
        if len(page) < want:
            break
    return counted, position


def fair_ends(client: Client, starts: Dict[str, EntryId], caps: Dict[str, EntryId], budget: int,
              page_size: int) -> Dict[str, EntryId]:
    """End offsets reading at most `budget` entries in all: each round splits what is left
    evenly between the streams that still have entries (the odd ones go to the streams
    whose next entry is oldest), so a quiet stream leaves its share to the busy ones."""
    ends = dict(starts)
    waiting = [name for name in starts if name in caps and caps[name] > starts[name]]
    while budget > 0 and waiting:
        waiting.sort(key=lambda name: (ends[name], name))
        share, odd = divmod(budget, len(waiting))
        still: List[str] = []
        for index, name in enumerate(waiting):
            want = share + (1 if index < odd else 0)
            if want == 0:
                still.append(name)
                continue
            got, ends[name] = count_entries(client, name, ends[name], caps[name], want, page_size)
            budget -= got
            if got == want and ends[name] < caps[name]:
                still.append(name)
        waiting = still
    return ends


class SluiceStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """The driver side plans micro-batches; `read` runs on executors."""

    def __init__(self, options: ReadOptions) -> None:
        self.options = options
        self._client: Optional[Client] = None
        self._target: Optional[Dict[str, EntryId]] = None
        self._warned: Set[Tuple[str, EntryId]] = set()
        self._states()  # fail now, before any task, on a bad server, password or key

    def __getstate__(self) -> dict:
        """Executors get the options, not the driver's connection."""
        return {"options": self.options}

    def __setstate__(self, state: dict) -> None:
        self.options = state["options"]
        self._client = None
        self._target = None
        self._warned = set()

    def _connection(self) -> Client:
        if self._client is None:
            self._client = self.options.address.connect()
            keep_flat_replies(self._client)
        return self._client

    def _states(self) -> List[StreamState]:
        return stream_states(self._connection(), self.options)

    def initialOffset(self) -> dict:
        offsets: Dict[str, EntryId] = {}
        for state in self._states():
            position = self.options.starting.position(state.name)
            if position == EARLIEST:
                offsets[state.name] = ZERO_ID
            elif position == LATEST:
                offsets[state.name] = max(state.last_generated, state.last or ZERO_ID)
            else:
                offsets[state.name] = position
        return offsets_json(offsets)

    def getDefaultReadLimit(self) -> ReadLimit:
        if self.options.max_entries_per_trigger is not None:
            return ReadMaxRows(self.options.max_entries_per_trigger)
        return ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        """Trigger.AvailableNow reads up to the last entry of each stream as of now."""
        self._target = {state.name: state.last for state in self._states() if state.last is not None}

    def _check_data_loss(self, state: StreamState, after: EntryId) -> None:
        reason = lost_entries(state, after)
        if reason is None:
            return
        if self.options.fail_on_data_loss:
            raise DataLossError(reason)
        if (state.name, state.max_deleted) not in self._warned:
            self._warned.add((state.name, state.max_deleted))
            log.warning("sluice: %s (failOnDataLoss is false: going on)", reason.split("; set option")[0])

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        starts = parse_offsets(start, "the checkpoint offset")
        caps: Dict[str, EntryId] = {}
        for state in self._states():
            after = starts.setdefault(state.name, ZERO_ID)  # a stream new to the query: from its start
            self._check_data_loss(state, after)
            cap = state.last
            if self._target is not None:
                cap = self._target.get(state.name)
                cap = min(cap, state.last) if cap is not None and state.last is not None else None
            if cap is not None and cap > after:
                caps[state.name] = cap
        client, page_size = self._connection(), self.options.page_size
        if isinstance(limit, ReadMaxRows):
            return offsets_json(fair_ends(client, starts, caps, limit.max_rows, page_size))
        if isinstance(limit, ReadMinRows) and self._target is None:
            available = sum(count_entries(client, name, starts[name], cap, limit.min_rows, page_size)[0]
                            for name, cap in caps.items())
            if available < limit.min_rows:
                return offsets_json(starts)
        # ReadAllAvailable, ReadMinRows with enough entries; ReadMaxFiles and ReadMaxBytes do
        # not apply to streams of entries and read everything.
        return offsets_json({**starts, **caps})

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        starts = parse_offsets(start, "the start offset")
        ends = parse_offsets(end, "the end offset")
        ranges: List[InputPartition] = []
        for name, last in sorted(ends.items()):
            first = starts.get(name, ZERO_ID).following()
            if first is not None and first <= last:
                ranges.extend(split_range(name, first, last, 1))
        return ranges

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return read_range(self.options, partition)

    def commit(self, end: dict) -> None:
        if self.options.commit_group is None:
            return
        client = self._connection()
        for name, entry_id in parse_offsets(end, "the committed offset").items():
            if entry_id != ZERO_ID:
                move_group(client, name, self.options.commit_group, entry_id, self.options.page_size)

    def stop(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None


def _group_info(client: Client, stream: str, group: str) -> Optional[dict]:
    for info in client.xinfo_groups(stream):
        name = info.get("name")
        if (name.decode("utf-8", "surrogateescape") if isinstance(name, bytes) else name) == group:
            return info
    return None


def entries_read_at(client: Client, stream: str, group: Optional[dict], entry_id: EntryId,
                    page_size: int) -> Optional[int]:
    """The ENTRIESREAD value for a group standing at `entry_id`: how many entries the
    stream had added up to that ID, so that Redis's lag (entries-added - entries-read) is
    the number of entries the query has not read yet.

    Counted the cheapest way that is exact when nothing was deleted: at the stream's end
    it is entries-added; after a previous commit, the group's entries-read plus the
    entries between its last ID and this one (one micro-batch); otherwise entries-added
    minus the entries after this ID."""
    info = client.xinfo_stream(stream)
    added = info.get("entries-added")
    if added is None:  # a server before Redis 7.0: no lag to show
        return None
    last = info.get("last-generated-id")
    if last is not None and EntryId.parse(last, "last-generated-id") <= entry_id:
        return int(added)
    if group is not None and group.get("entries-read") is not None:
        previous = EntryId.parse(group["last-delivered-id"], "last-delivered-id")
        if previous <= entry_id:
            batch, _ = count_entries(client, stream, previous, entry_id, None, page_size)
            return int(group["entries-read"]) + batch
    after, _ = count_entries(client, stream, entry_id, None, None, page_size)
    return int(added) - after


def move_group(client: Client, stream: str, group: str, entry_id: EntryId, page_size: int) -> None:
    """Places consumer group `group` of `stream` at `entry_id` (created there if missing),
    so that XINFO GROUPS shows how far behind the query is. A stream that does not exist
    (deleted meanwhile) is left alone."""
    try:
        info = _group_info(client, stream, group)
    except redis.ResponseError as exc:
        if "no such key" in str(exc).lower():
            return
        raise
    entries_read = entries_read_at(client, stream, info, entry_id, page_size)
    if info is None:
        client.xgroup_create(stream, group, str(entry_id), entries_read=entries_read)
    else:
        client.xgroup_setid(stream, group, str(entry_id), entries_read=entries_read)

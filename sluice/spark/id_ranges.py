"""ID ranges: the unit of work of the `sluice` readers. The driver cuts each stream into
inclusive [first, last] ranges that touch end to end (so no entry is read twice or
missed); an executor reads its range with XRANGE pages and yields Arrow batches.

A range also carries the ID of the first entry it held when the driver planned it. A
stream loses entries from its head (XTRIM, MAXLEN), so if its task does not find that
entry first, entries of the range were trimmed (or deleted) in between: option
failOnDataLoss decides whether the task fails or warns and reads what is left."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Dict, Iterator, List, Mapping, Optional

import pyarrow as pa
from pyspark.sql.datasource import InputPartition
from redis.cluster import RedisCluster

from sluice.spark.arrow_entries import EntryBatchBuilder
from sluice.spark.connection import Client
from sluice.spark.data_loss import on_data_loss
from sluice.spark.offsets import MAX_PART, EntryId
from sluice.spark.read_options import ReadOptions

ID_BITS = 64


@dataclass(frozen=True)
class IdRange(InputPartition):
    """Entries of `stream` with first <= ID <= last; `head` is the ID of the first of them
    when the range was planned (None: it held none, or it was not looked up)."""

    stream: str
    first: EntryId
    last: EntryId
    head: Optional[EntryId] = None


def _as_number(entry_id: EntryId) -> int:
    return (entry_id.ms << ID_BITS) | entry_id.seq


def _as_id(number: int) -> EntryId:
    return EntryId(number >> ID_BITS, number & MAX_PART)


def split_range(stream: str, first: EntryId, last: EntryId, parts: int) -> List[IdRange]:
    """`parts` ranges covering [first, last], cut at evenly spaced IDs (an ID read as the
    128-bit number ms * 2**64 + seq, so the cuts follow the milliseconds, and the sequence
    when every entry shares one millisecond). Fewer when the span holds fewer IDs."""
    low, high = _as_number(first), _as_number(last)
    parts = max(1, min(parts, high - low + 1))
    cuts = [low + (high - low + 1) * index // parts for index in range(parts)] + [high + 1]
    return [IdRange(stream, _as_id(start), _as_id(end - 1)) for start, end in zip(cuts, cuts[1:])]


def allocate_parts(weights: Mapping[str, int], minimum: int) -> Dict[str, int]:
    """How many ranges each stream gets: one at least, `minimum` in all, shared in
    proportion to the weights (entry counts)."""
    total = sum(weights.values())
    counts = {name: 1 for name in weights}
    if total == 0:
        return counts
    for _ in range(max(0, minimum - len(counts))):
        # The next range goes to the stream with the most entries per range.
        neediest = max(counts, key=lambda name: (weights[name] / counts[name], name))
        counts[neediest] += 1
    return counts


def keep_flat_replies(client: Client) -> None:
    """XRANGE replies as the server sends them ([id, [field, value, ...]]), skipping
    redis-py's conversion to dicts: faster, and it keeps a field that repeats in an
    entry. (A cluster node connected later keeps redis-py's dicts, which the batch
    builder also takes.)"""
    nodes = [node.redis_connection for node in client.get_nodes()] if isinstance(client, RedisCluster) else [client]
    for node in nodes:
        if node is not None:
            node.set_response_callback("XRANGE", lambda response, **options: response)


def with_heads(client: Client, pieces: List[IdRange]) -> List[IdRange]:
    """The ranges with their `head` looked up now (one pipelined XRANGE ... COUNT 1 for
    all of them)."""
    if not pieces:
        return []
    pipe = client.pipeline(transaction=False)
    for piece in pieces:
        pipe.xrange(piece.stream, str(piece.first), str(piece.last), count=1)
    return [replace(piece, head=EntryId.parse(found[0][0], f"an entry ID of stream {piece.stream!r}")
                    if found else None)
            for piece, found in zip(pieces, pipe.execute())]


def _check_head(client: Client, piece: IdRange, page: Optional[list], fail: bool) -> None:
    """Whether the range still starts with its planned first entry (see the module's
    docstring); a loss fails the task or is logged, as option failOnDataLoss says."""
    where = f"an entry ID of stream {piece.stream!r}"
    if piece.head is None or (page and EntryId.parse(page[0][0], where) == piece.head):
        return
    now = client.xrange(piece.stream, "-", "+", count=1)
    shown = (f"the stream's first entry is now {EntryId.parse(now[0][0], where)}" if now
             else "the stream is now empty")
    on_data_loss(f"entries of stream {piece.stream!r} from {piece.head} on, which this read was "
                 f"planned to return, were trimmed or deleted before its task read them ({shown})", fail)


def range_pages(client: Client, piece: IdRange, page_size: int) -> Iterator[list]:
    """XRANGE pages of `page_size` entries covering the range, in ID order."""
    start: EntryId = piece.first
    end = str(piece.last)
    while True:
        page = client.xrange(piece.stream, str(start), end, count=page_size)
        if page:
            yield page
        if len(page) < page_size:
            return
        following = EntryId.parse(page[-1][0], f"an entry ID of stream {piece.stream!r}").following()
        if following is None or following > piece.last:
            return
        start = following


def read_range(options: ReadOptions, piece: IdRange) -> Iterator[pa.RecordBatch]:
    """On an executor: Arrow batches (one per XRANGE page) of the range, in ID order,
    after checking that the range's planned first entry is still there."""
    client = options.address.connect()
    try:
        keep_flat_replies(client)
        builder = EntryBatchBuilder(options.decode)
        pages = range_pages(client, piece, options.page_size)
        first = next(pages, None)
        _check_head(client, piece, first, options.fail_on_data_loss)
        if first is not None:
            yield builder.build(piece.stream, first)
        for page in pages:
            yield builder.build(piece.stream, page)
    finally:
        client.close()

"""Planning a micro-batch on the driver: how far each stream may go under a read limit,
the entries-added count at each end offset, and whether entries after a checkpoint were
removed before the query read them."""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from sluice.spark.connection import Client
from sluice.spark.offsets import ZERO_ID, EntryId, StreamOffset
from sluice.spark.stream_catalog import StreamState


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
              page_size: int) -> Dict[str, Tuple[EntryId, int]]:
    """Per stream with entries after its start (up to its cap): the end ID and the number
    of entries up to it, reading at most `budget` entries in all. Each round splits what is
    left evenly between the streams that still have entries (the odd ones go to the
    streams whose next entry is oldest), so a quiet stream leaves its share to busy ones."""
    ends = {name: (starts[name], 0) for name in caps}
    waiting = [name for name in caps if caps[name] > starts[name]]
    while budget > 0 and waiting:
        waiting.sort(key=lambda name: (ends[name][0], name))
        share, odd = divmod(budget, len(waiting))
        still: List[str] = []
        for index, name in enumerate(waiting):
            want = share + (1 if index < odd else 0)
            if want == 0:
                still.append(name)
                continue
            got, end = count_entries(client, name, ends[name][0], caps[name], want, page_size)
            ends[name] = (end, ends[name][1] + got)
            budget -= got
            if got == want and end < caps[name]:
                still.append(name)
        waiting = still
    return ends


def _deleted_after(state: StreamState, position: EntryId) -> bool:
    """XDEL removed an entry after `position` (max-deleted-entry-id counts XDEL only)."""
    return state.max_deleted is not None and state.max_deleted > position


def added_before_next(client: Client, state: StreamState, begin: StreamOffset, page_size: int) -> Optional[int]:
    """The stream's entries-added count just before the first entry after `begin`, i.e.
    the count a batch starting at `begin` adds its entries to; None when it cannot be
    known exactly (a server without entries-added, or XDEL after `begin`)."""
    if state.entries_added is None or _deleted_after(state, begin.last):
        return None
    if state.first is None or begin.last < state.first:
        # Everything before the first entry is gone; every entry from it on is present.
        return state.entries_added - state.length
    if begin.added is not None:
        return begin.added
    after, _ = count_entries(client, state.name, begin.last, None, None, page_size)  # a start given as an ID
    return state.entries_added - after


def added_at_end(state: StreamState, end: EntryId, before: Optional[int], read: Optional[int]) -> Optional[int]:
    """The entries-added count at `end`: the stream's own count when `end` is its last
    entry, else the count before the batch plus the entries it reads."""
    if state.entries_added is not None and end == state.last == state.last_generated:
        return state.entries_added
    if before is not None and read is not None:
        return before + read
    return None


def lost_entries(state: StreamState, begin: StreamOffset) -> Optional[str]:
    """Why entries of `state` after the checkpoint `begin` are gone unread, or None.

    XDEL past the checkpoint shows in max-deleted-entry-id. Trimming (which moves the first
    entry) lost entries when the stream received more entries after the checkpoint than it
    now holds, all of them being after it. A stream that had no entries after the
    checkpoint, or was trimmed only up to it, lost nothing. A query that starts at
    "earliest" (0-0) takes the stream as it finds it."""
    if begin.last == ZERO_ID:
        return None
    now = f"its first entry is now {state.first}" if state.first else "it is now empty"
    if _deleted_after(state, begin.last):
        gone, how = "", f"XDEL removed entries up to {state.max_deleted}, {now}"
    elif (begin.added is None or state.entries_added is None
          or (state.first is not None and state.first <= begin.last)
          or state.entries_added - begin.added <= state.length):
        return None
    else:
        gone = f"{state.entries_added - begin.added - state.length} "
        how = f"the stream received {state.entries_added - begin.added} entries after it and holds {state.length}, {now}"
    return (f"{gone}entries of stream {state.name!r} after the checkpoint offset {begin.last} were trimmed or "
            f"deleted before they were read ({how})")

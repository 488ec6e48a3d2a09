"""Idempotent production on a stream (Redis 8.6's XADD IDMP / IDMPAUTO).

A stream that has seen IDMP holds one IdmpState; every other stream holds None, so
plain XADD pays nothing for the feature. Per producer ID the state keeps the
idempotent IDs (iids) it has recorded, oldest first, each with the ID of the entry
it produced.

An iid is forgotten in two ways, both deterministic so that an AOF replayed later,
or a snapshot loaded later, tracks the same iids as the live server would:
- by count: a producer keeps its last `maxsize` iids (older ones are evicted when
  a new one is recorded);
- by age: an iid expires `duration` seconds after the millisecond of its entry's ID
  (not after the wall-clock time it was recorded, which a replay cannot know).
Expired iids are dropped lazily: a lookup ignores them, and a sweep of the whole
state runs at most once a second while iids are recorded, and before the state is
reported or saved.
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence

from xxhash import xxh3_128_intdigest

DURATION_MIN, DURATION_MAX, DURATION_DEFAULT = 1, 86400, 100      # seconds
MAXSIZE_MIN, MAXSIZE_MAX, MAXSIZE_DEFAULT = 1, 10000, 100          # iids per producer
SWEEP_EVERY_MS = 1000

EntryID = tuple[int, int]           # (ms, seq)


def auto_iid(argv: Sequence[bytes], first: int, npairs: int) -> bytes:
    """The iid IDMPAUTO derives from an entry's fields, as Redis 8.6 computes it: the
    XXH3-128 digest of each field's bytes followed by its value's, all XORed together
    (so the order of the pairs does not matter), as the 16 bytes of the digest's low
    64 bits then its high 64 bits, little-endian."""
    acc = 0
    for i in range(first, first + 2 * npairs, 2):
        acc ^= xxh3_128_intdigest(argv[i] + argv[i + 1])
    return acc.to_bytes(16, "little")


class IdmpState:
    """The iids of one stream's producers, the stream's IDMP settings and its lifetime
    counters (XINFO STREAM's idmp-* / pids-tracked / iids-* fields)."""

    __slots__ = ("duration", "maxsize", "producers", "tracked", "iids_added",
                 "iids_duplicates", "next_sweep")

    def __init__(self, duration: int, maxsize: int) -> None:
        self.duration = duration            # seconds
        self.maxsize = maxsize
        self.producers: dict[bytes, dict[bytes, EntryID]] = {}
        self.tracked = 0                    # iids held, expired or not
        self.iids_added = 0
        self.iids_duplicates = 0
        self.next_sweep = 0

    def expired(self, entry: EntryID, now: int) -> bool:
        return entry[0] + self.duration * 1000 <= now

    def lookup(self, pid: bytes, iid: bytes, now: int) -> EntryID | None:
        """The entry `iid` of producer `pid` produced, unless forgotten."""
        iids = self.producers.get(pid)
        if iids is None:
            return None
        entry = iids.get(iid)
        if entry is None or self.expired(entry, now):
            return None
        return entry

    def record(self, pid: bytes, iid: bytes, entry: EntryID, now: int) -> None:
        """Remembers that `iid` of `pid` produced `entry` (the caller has checked that
        it is not tracked), evicting the producer's oldest iids beyond maxsize."""
        if now >= self.next_sweep:
            self.sweep(now)
            self.next_sweep = now + SWEEP_EVERY_MS
        iids = self.producers.get(pid)
        if iids is None:
            iids = self.producers[pid] = {}
        if iids.pop(iid, None) is not None:     # an expired leftover: now the newest
            self.tracked -= 1
        iids[iid] = entry
        self.tracked += 1
        self.iids_added += 1
        while len(iids) > self.maxsize:
            del iids[next(iter(iids))]
            self.tracked -= 1

    def configure(self, duration: int, maxsize: int) -> None:
        """XCFGSET: new settings forget every iid (same settings keep them)."""
        if duration != self.duration or maxsize != self.maxsize:
            self.producers.clear()
            self.tracked = 0
        self.duration = duration
        self.maxsize = maxsize

    def sweep(self, now: int) -> None:
        """Drops expired iids, and producers left without any. A producer's iids are
        in the order their entries were added, so expired ones are at its front."""
        gone = []
        for pid, iids in self.producers.items():
            while iids:
                oldest = next(iter(iids))
                if not self.expired(iids[oldest], now):
                    break
                del iids[oldest]
                self.tracked -= 1
            if not iids:
                gone.append(pid)
        for pid in gone:
            del self.producers[pid]

    def records(self, now: int) -> Iterator[tuple[bytes, bytes, EntryID]]:
        """(pid, iid, entry) of every live iid, each producer's oldest first (the
        order in which recording them again rebuilds this state)."""
        self.sweep(now)
        for pid, iids in self.producers.items():
            for iid, entry in iids.items():
                yield pid, iid, entry

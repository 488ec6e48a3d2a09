"""The sorted-set value: members with double scores, ordered by (score, member).

A dict gives a member's score in O(1); a SortedList of (score, member) pairs gives
ranks and score/lex ranges in O(log n). Scores are never NaN (the command layer
refuses them). `big` mirrors Redis's one-way conversion from listpack to skiplist
(a set that once exceeded the listpack limits stays a skiplist), which OBJECT
ENCODING reports and which decides whether a -0 score keeps its sign.
"""
from __future__ import annotations

import math
import sys
from typing import Iterator, Optional

from sortedcontainers import SortedList

# Redis 7's defaults: zset-max-listpack-entries 128, zset-max-listpack-value 64.
LISTPACK_MAX_ENTRIES = 128
LISTPACK_MAX_VALUE = 64
REWRITE_BATCH = 64

# Approximate CPython cost of one member: its bytes object, a dict slot holding it
# and its float, and a (score, member) tuple in the SortedList.
_MEMBER_OVERHEAD = 33 + 48 + 24 + 56 + 8


def format_score(score: float) -> bytes:
    """A score as the shortest text that parses back to the same double (what ZADD
    needs to recreate it exactly): `inf`/`-inf` for the infinities."""
    return repr(score).encode()


class SortedSetValue:
    """Members -> scores, with an ordered index (see the module docstring)."""

    TYPE_NAME = b"zset"
    __slots__ = ("scores", "order", "big", "_member_bytes")

    def __init__(self, size_hint: int = 0, longest_hint: int = 0) -> None:
        """An empty set; like Redis's zsetTypeCreate, one created for more than the
        listpack limits (elements about to come, their longest member) starts as a
        skiplist."""
        self.scores: dict[bytes, float] = {}
        self.order = SortedList()
        self.big = size_hint > LISTPACK_MAX_ENTRIES or longest_hint > LISTPACK_MAX_VALUE
        self._member_bytes = 0

    # -- changes ---------------------------------------------------------------------

    def add(self, member: bytes, score: float) -> None:
        """Sets member's score (adding it when new). A set about to outgrow the
        listpack limits becomes a skiplist first, as in Redis. A listpack keeps no
        -0 (it stores the score's text as the integer 0); a skiplist's double does."""
        old = self.scores.get(member)
        if old is None and (len(self.scores) >= LISTPACK_MAX_ENTRIES
                            or len(member) > LISTPACK_MAX_VALUE):
            self.big = True
        if score == 0 and not self.big:
            score = 0.0
        if old is not None:
            if old == score:        # (0 and -0 too: Redis keeps the old one)
                return
            self.order.remove((old, member))
        else:
            self._member_bytes += len(member)
        self.scores[member] = score
        self.order.add((score, member))

    def discard(self, member: bytes) -> bool:
        """Removes member; False when it was not there."""
        score = self.scores.pop(member, None)
        if score is None:
            return False
        self.order.remove((score, member))
        self._member_bytes -= len(member)
        return True

    def pop(self, from_max: bool) -> tuple[bytes, float]:
        """Removes and returns the lowest (or highest) (member, score)."""
        score, member = self.order.pop(-1 if from_max else 0)
        del self.scores[member]
        self._member_bytes -= len(member)
        return member, score

    # -- queries ---------------------------------------------------------------------

    def score(self, member: bytes) -> Optional[float]:
        return self.scores.get(member)

    def rank(self, member: bytes) -> Optional[int]:
        """member's 0-based rank by ascending score, None when absent."""
        score = self.scores.get(member)
        if score is None:
            return None
        return self.order.index((score, member))

    def at(self, rank: int) -> tuple[float, bytes]:
        return self.order[rank]

    def pairs(self, start: int, stop: int, reverse: bool = False) -> Iterator[tuple[float, bytes]]:
        """The (score, member) pairs of ranks start..stop-1, reversed on request."""
        return self.order.islice(start, stop, reverse=reverse)

    def score_bounds(self, low: float, low_ex: bool, high: float, high_ex: bool) -> tuple[int, int]:
        """The ranks [start, stop) whose scores lie in the range."""
        order = self.order
        # (x, b"") sorts before every member of score x; nothing sorts after (x, MAX).
        start = order.bisect_right((low, _AFTER_ALL)) if low_ex else order.bisect_left((low, b""))
        stop = order.bisect_left((high, b"")) if high_ex else order.bisect_right((high, _AFTER_ALL))
        return start, max(start, stop)

    def lex_bounds(self, above_min, below_max, reverse: bool) -> tuple[int, int]:
        """The ranks [start, stop) of the lex range from above_min(m) to below_max(m).

        The lex commands expect equal scores; with mixed scores Redis's answer depends
        on how it walks: a listpack is scanned from the head (from the tail when
        reversed) to the first member past the near end, then while members stay
        within the far end; a skiplist is searched. Both are followed: the scan for
        a listpack-sized set, bisection for a skiplist."""
        order = self.order
        n = len(order)
        if not n or not above_min(order[-1][1]) or not below_max(order[0][1]):
            return 0, 0
        if not self.big:
            if reverse:
                stop = n
                while stop and not below_max(order[stop - 1][1]):
                    stop -= 1
                start = stop
                while start and above_min(order[start - 1][1]):
                    start -= 1
                return start, stop
            start = 0
            while start < n and not above_min(order[start][1]):
                start += 1
            stop = start
            while stop < n and below_max(order[stop][1]):
                stop += 1
            return start, stop
        lo, hi = 0, n
        while lo < hi:
            mid = (lo + hi) // 2
            if above_min(order[mid][1]):
                hi = mid
            else:
                lo = mid + 1
        start, hi = lo, n
        while lo < hi:
            mid = (lo + hi) // 2
            if below_max(order[mid][1]):
                lo = mid + 1
            else:
                hi = mid
        return start, max(start, lo)

    def __len__(self) -> int:
        return len(self.scores)

    @property
    def nbytes(self) -> int:
        """The members' bytes (as SetValue's and HashValue's nbytes)."""
        return self._member_bytes

    def __iter__(self) -> Iterator[tuple[float, bytes]]:
        return iter(self.order)

    # -- the value interface ---------------------------------------------------------

    def encoding(self) -> bytes:
        return b"skiplist" if self.big else b"listpack"

    def footprint(self) -> int:
        return (sys.getsizeof(self) + sys.getsizeof(self.scores) + self._member_bytes
                + len(self.scores) * _MEMBER_OVERHEAD)

    def copy(self) -> "SortedSetValue":
        other = SortedSetValue()
        other.scores = dict(self.scores)
        other.order = SortedList(self.order)
        other.big = self.big
        other._member_bytes = self._member_bytes
        return other

    def to_record(self) -> list:
        """[member, score, member, score, ...] in ascending order."""
        out: list = []
        for score, member in self.order:
            out.append(member)
            out.append(score)
        return out

    @classmethod
    def from_record(cls, items: list, limits=None) -> "SortedSetValue":
        """(limits: the engine's EncodingLimits, unused: no zset directives yet)"""
        if len(items) % 2 or not items:
            raise ValueError("a sorted-set record holds member, score pairs")
        value = cls(len(items) // 2, max(len(m) if type(m) is bytes else 0 for m in items[::2]))
        for i in range(0, len(items), 2):
            member, score = items[i], items[i + 1]
            if type(member) is not bytes or type(score) is not float or math.isnan(score):
                raise ValueError("a sorted-set record pairs bytes members with float scores")
            if member in value.scores:
                raise ValueError(f"member {member!r} appears twice in a sorted-set record")
            value.add(member, score)
        return value

    @classmethod
    def from_pairs(cls, pairs: list[tuple[float, bytes]]) -> "SortedSetValue":
        value = cls(len(pairs))
        for score, member in pairs:
            value.add(member, score)
        return value

    def rewrite_commands(self, key: bytes) -> Iterator[list[bytes]]:
        batch: list[bytes] = []
        for score, member in self.order:
            batch.append(format_score(score))
            batch.append(member)
            if len(batch) == 2 * REWRITE_BATCH:
                yield [b"ZADD", key, *batch]
                batch = []
        if batch:
            yield [b"ZADD", key, *batch]


class _AfterAll(bytes):
    """A member that sorts after every bytes member (an upper bisection bound)."""

    def __eq__(self, other) -> bool:
        return other is self

    def __ne__(self, other) -> bool:
        return other is not self

    __hash__ = bytes.__hash__

    def __lt__(self, other) -> bool:
        return False

    def __gt__(self, other) -> bool:
        return other is not self

    def __le__(self, other) -> bool:
        return other is self

    def __ge__(self, other) -> bool:
        return True


_AFTER_ALL = _AfterAll(b"\xff")

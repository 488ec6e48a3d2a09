"""A set value: its members in a dict (member -> slot) and a list (the slots), so that
membership is O(1) and so is taking a random member (SPOP, SRANDMEMBER); a running
byte count for memory accounting and the intset/listpack/hashtable encoding Redis
would use."""
from __future__ import annotations

import sys
from random import randrange, sample
from typing import Iterable, Iterator

# Redis's set-max-intset-entries, set-max-listpack-entries/-value defaults.
INTSET_MAX_ENTRIES = 512
LISTPACK_MAX_ENTRIES = 128
LISTPACK_MAX_VALUE = 64
MEMBER_OVERHEAD = 33 + 8        # a bytes object's header and its list slot
REWRITE_BATCH = 64
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1

INTSET, LISTPACK, HASHTABLE = 0, 1, 2
ENCODING_NAMES = (b"intset", b"listpack", b"hashtable")


def is_int64_text(member: bytes) -> bool:
    """Whether Redis would store member in an intset: the canonical text of a
    64-bit integer (no sign on 0, no leading zeros or spaces)."""
    if not member or len(member) > 20:
        return False
    try:
        n = int(member)
    except ValueError:
        return False
    return INT64_MIN <= n <= INT64_MAX and str(n).encode() == member


class SetValue:
    """The members (`members`: member -> its index in `slots`; read it as a set).
    Commands change it only through its methods, which keep `slots`, `nbytes` and
    the encoding Redis would have reached current (Redis converts intset -> listpack
    -> hashtable as a set grows, never back)."""

    __slots__ = ("members", "slots", "nbytes", "kind")
    TYPE_NAME = b"set"

    def __init__(self, members: Iterable[bytes] = ()) -> None:
        self.members: dict = {}
        self.slots: list = []
        self.nbytes = 0
        self.kind = INTSET
        self.add_all(members)

    def __len__(self) -> int:
        return len(self.slots)

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.slots)

    def __contains__(self, member: bytes) -> bool:
        return member in self.members

    def encoding(self) -> bytes:
        return ENCODING_NAMES[self.kind]

    def footprint(self) -> int:
        return (sys.getsizeof(self.members) + sys.getsizeof(self.slots) + self.nbytes
                + MEMBER_OVERHEAD * len(self.slots))

    def copy(self) -> "SetValue":
        out = SetValue()
        out.members = dict(self.members)
        out.slots = list(self.slots)
        out.nbytes = self.nbytes
        out.kind = self.kind
        return out

    # changes

    def add(self, member: bytes) -> bool:
        """Adds one member; True when it is new."""
        if member in self.members:
            return False
        self.members[member] = len(self.slots)
        self.slots.append(member)
        self.nbytes += len(member)
        size = len(self.slots)
        if self.kind == INTSET and (size > INTSET_MAX_ENTRIES or not is_int64_text(member)):
            self.kind = LISTPACK
        if self.kind == LISTPACK and (size > LISTPACK_MAX_ENTRIES
                                      or len(member) > LISTPACK_MAX_VALUE):
            self.kind = HASHTABLE
        return True

    def add_all(self, members: Iterable[bytes]) -> int:
        return sum(self.add(m) for m in members)

    def remove(self, member: bytes) -> bool:
        """Removes one member (the last slot fills its place); True when it was there."""
        slot = self.members.pop(member, None)
        if slot is None:
            return False
        last = self.slots.pop()
        if slot < len(self.slots):
            self.slots[slot] = last
            self.members[last] = slot
        self.nbytes -= len(member)
        return True

    def random_member(self) -> bytes:
        return self.slots[randrange(len(self.slots))]

    def random_members(self, count: int) -> list:
        """`count` distinct members chosen at random (all of them when count >= size)."""
        if count >= len(self.slots):
            return list(self.slots)
        return sample(self.slots, count)

    # persistence

    def to_record(self) -> list:
        return list(self.slots)

    @classmethod
    def from_record(cls, items: list) -> "SetValue":
        if not items or any(type(item) is not bytes for item in items):
            raise ValueError("a set record holds no members, or one is not a byte string")
        out = cls(items)
        if len(out) != len(items):
            raise ValueError("a set record repeats a member")
        return out

    def rewrite_commands(self, key: bytes) -> Iterator[list]:
        items = self.slots
        for start in range(0, len(items), REWRITE_BATCH):
            yield [b"SADD", key, *items[start:start + REWRITE_BATCH]]

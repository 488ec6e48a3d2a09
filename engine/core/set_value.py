"""A set value: a Python set of byte strings, with a running byte count for memory
accounting and the intset/listpack/hashtable encoding Redis would use."""
from __future__ import annotations

import sys
from typing import Iterable, Iterator

# Redis's set-max-intset-entries, set-max-listpack-entries/-value defaults.
INTSET_MAX_ENTRIES = 512
LISTPACK_MAX_ENTRIES = 128
LISTPACK_MAX_VALUE = 64
MEMBER_OVERHEAD = 33 + 16       # a bytes object's header and its set slot
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
    """The members (`members`). Commands change it only through its methods, which
    keep `nbytes` current and the encoding Redis would have reached (Redis converts
    intset -> listpack -> hashtable as a set grows, never back)."""

    __slots__ = ("members", "nbytes", "kind")
    TYPE_NAME = b"set"

    def __init__(self, members: Iterable[bytes] = ()) -> None:
        self.members: set = set()
        self.nbytes = 0
        self.kind = INTSET
        self.add_all(members)

    def __len__(self) -> int:
        return len(self.members)

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.members)

    def __contains__(self, member: bytes) -> bool:
        return member in self.members

    def encoding(self) -> bytes:
        return ENCODING_NAMES[self.kind]

    def footprint(self) -> int:
        return sys.getsizeof(self.members) + self.nbytes + MEMBER_OVERHEAD * len(self.members)

    def copy(self) -> "SetValue":
        out = SetValue()
        out.members = set(self.members)
        out.nbytes = self.nbytes
        out.kind = self.kind
        return out

    # changes

    def add(self, member: bytes) -> bool:
        """Adds one member; True when it is new."""
        if member in self.members:
            return False
        self.members.add(member)
        self.nbytes += len(member)
        size = len(self.members)
        if self.kind == INTSET and (size > INTSET_MAX_ENTRIES or not is_int64_text(member)):
            self.kind = LISTPACK
        if self.kind == LISTPACK and (size > LISTPACK_MAX_ENTRIES
                                      or len(member) > LISTPACK_MAX_VALUE):
            self.kind = HASHTABLE
        return True

    def add_all(self, members: Iterable[bytes]) -> int:
        return sum(self.add(m) for m in members)

    def remove(self, member: bytes) -> bool:
        if member not in self.members:
            return False
        self.members.discard(member)
        self.nbytes -= len(member)
        return True

    # persistence

    def to_record(self) -> list:
        return list(self.members)

    @classmethod
    def from_record(cls, items: list) -> "SetValue":
        if not items or any(type(item) is not bytes for item in items):
            raise ValueError("a set record holds no members, or one is not a byte string")
        out = cls(items)
        if len(out) != len(items):
            raise ValueError("a set record repeats a member")
        return out

    def rewrite_commands(self, key: bytes) -> Iterator[list]:
        items = list(self.members)
        for start in range(0, len(items), REWRITE_BATCH):
            yield [b"SADD", key, *items[start:start + REWRITE_BATCH]]

"""A list value: a deque of byte strings (O(1) at both ends, as Redis's quicklist)
with a running byte count for memory accounting."""
from __future__ import annotations

import sys
from collections import deque
from typing import Iterable, Iterator

# Redis 7.2+'s list-max-listpack-size -2: a list stays one listpack up to 8 KB.
LISTPACK_MAX_BYTES = 8192
# listpack bytes per element besides the string (encoding header and back-length).
LISTPACK_ELEMENT_OVERHEAD = 2
ELEMENT_OVERHEAD = 33 + 8       # a bytes object's header and its deque slot
REWRITE_BATCH = 64


class ListValue:
    """The elements of a list, head first (`items`). Commands change it only through
    its methods, which keep `nbytes` (the elements' total length) current."""

    __slots__ = ("items", "nbytes")
    TYPE_NAME = b"list"

    def __init__(self, items: Iterable[bytes] = ()) -> None:
        self.items: deque = deque(items)
        self.nbytes = sum(len(item) for item in self.items)

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.items)

    def encoding(self) -> bytes:
        lp_bytes = self.nbytes + LISTPACK_ELEMENT_OVERHEAD * len(self.items)
        return b"listpack" if lp_bytes <= LISTPACK_MAX_BYTES else b"quicklist"

    def footprint(self) -> int:
        return sys.getsizeof(self.items) + self.nbytes + ELEMENT_OVERHEAD * len(self.items)

    def copy(self) -> "ListValue":
        return ListValue(self.items)

    # changes

    def push(self, elements: list, left: bool) -> None:
        if left:
            self.items.extendleft(elements)
        else:
            self.items.extend(elements)
        self.nbytes += sum(len(e) for e in elements)

    def pop(self, count: int, left: bool) -> list:
        """Up to `count` elements from one end, in the order they left."""
        take = self.items.popleft if left else self.items.pop
        out = [take() for _ in range(min(count, len(self.items)))]
        self.nbytes -= sum(len(e) for e in out)
        return out

    def replace(self, items: Iterable[bytes]) -> None:
        """The whole content replaced (LREM, LTRIM, LINSERT: O(n) anyway)."""
        self.items = deque(items)
        self.nbytes = sum(len(item) for item in self.items)

    def insert(self, index: int, element: bytes) -> None:
        self.items.insert(index, element)
        self.nbytes += len(element)

    def remove(self, element: bytes, count: int) -> int:
        """LREM: up to `count` occurrences from the head (from the tail when count is
        negative, all when 0); how many went."""
        limit = abs(count) or len(self.items)
        kept, removed = [], 0
        source = self.items if count >= 0 else reversed(self.items)
        for item in source:
            if removed < limit and item == element:
                removed += 1
            else:
                kept.append(item)
        if removed:
            if count < 0:
                kept.reverse()
            self.replace(kept)
        return removed

    def set(self, index: int, element: bytes) -> None:
        self.nbytes += len(element) - len(self.items[index])
        self.items[index] = element

    # persistence

    def to_record(self) -> list:
        return list(self.items)

    @classmethod
    def from_record(cls, items: list) -> "ListValue":
        if not items or any(type(item) is not bytes for item in items):
            raise ValueError("a list record holds no elements, or one is not a byte string")
        return cls(items)

    def rewrite_commands(self, key: bytes) -> Iterator[list]:
        items = list(self.items)
        for start in range(0, len(items), REWRITE_BATCH):
            yield [b"RPUSH", key, *items[start:start + REWRITE_BATCH]]

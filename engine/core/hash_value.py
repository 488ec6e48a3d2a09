"""A hash value: a dict of field -> value byte strings, a list of the fields (their
slots) so that HRANDFIELD takes a random field in O(1), a running byte count for
memory accounting and the listpack/hashtable encoding Redis would use."""
from __future__ import annotations

import sys
from random import randrange, sample
from typing import Iterator

# Redis's hash-max-listpack-entries / hash-max-listpack-value defaults.
LISTPACK_MAX_ENTRIES = 128
LISTPACK_MAX_VALUE = 64
FIELD_OVERHEAD = 2 * 33        # two bytes objects' headers (the dict slot: getsizeof)
REWRITE_BATCH = 64


class HashValue:
    """Fields in insertion order (`fields`), and in `slots` (`positions`: field -> its
    index there). Commands change it only through its methods, which keep `slots`
    and `nbytes` current and note when Redis would have converted it to a hashtable
    (a conversion Redis never undoes)."""

    __slots__ = ("fields", "slots", "positions", "nbytes", "hashtable")
    TYPE_NAME = b"hash"

    def __init__(self, fields: dict | None = None) -> None:
        self.fields: dict = {}
        self.slots: list = []
        self.positions: dict = {}
        self.nbytes = 0
        self.hashtable = False
        if fields:
            self.update(fields)

    def __len__(self) -> int:
        return len(self.fields)

    def encoding(self) -> bytes:
        return b"hashtable" if self.hashtable else b"listpack"

    def footprint(self) -> int:
        return (sys.getsizeof(self.fields) + sys.getsizeof(self.slots)
                + sys.getsizeof(self.positions) + self.nbytes
                + FIELD_OVERHEAD * len(self.fields))

    def copy(self) -> "HashValue":
        out = HashValue()
        out.fields = dict(self.fields)
        out.slots = list(self.slots)
        out.positions = dict(self.positions)
        out.nbytes = self.nbytes
        out.hashtable = self.hashtable
        return out

    # changes

    def set(self, field: bytes, value: bytes) -> bool:
        """Sets one field; True when it is new."""
        old = self.fields.get(field)
        self.fields[field] = value
        if old is None:
            self.positions[field] = len(self.slots)
            self.slots.append(field)
            self.nbytes += len(field) + len(value)
        else:
            self.nbytes += len(value) - len(old)
        if not self.hashtable and (len(self.fields) > LISTPACK_MAX_ENTRIES
                                   or len(field) > LISTPACK_MAX_VALUE
                                   or len(value) > LISTPACK_MAX_VALUE):
            self.hashtable = True
        return old is None

    def update(self, fields: dict) -> int:
        """Sets every field of `fields`; the number that were new."""
        return sum(self.set(f, v) for f, v in fields.items())

    def delete(self, field: bytes) -> bool:
        """Removes one field (the last slot fills its place); True when it was there."""
        value = self.fields.pop(field, None)
        if value is None:
            return False
        slot = self.positions.pop(field)
        last = self.slots.pop()
        if slot < len(self.slots):
            self.slots[slot] = last
            self.positions[last] = slot
        self.nbytes -= len(field) + len(value)
        return True

    # random fields

    def random_field(self) -> bytes:
        return self.slots[randrange(len(self.slots))]

    def random_fields(self, count: int) -> list:
        """`count` distinct fields chosen at random (all of them, in order, when count
        >= size)."""
        if count >= len(self.slots):
            return list(self.fields)
        return sample(self.slots, count)

    # persistence

    def to_record(self) -> list:
        out = []
        for field, value in self.fields.items():
            out.append(field)
            out.append(value)
        return out

    @classmethod
    def from_record(cls, items: list) -> "HashValue":
        if not items or len(items) % 2 or any(type(item) is not bytes for item in items):
            raise ValueError("a hash record is not a non-empty list of field-value pairs")
        out = cls(dict(zip(items[::2], items[1::2])))
        if len(out) * 2 != len(items):
            raise ValueError("a hash record repeats a field")
        return out

    def rewrite_commands(self, key: bytes) -> Iterator[list]:
        items = self.to_record()
        step = 2 * REWRITE_BATCH
        for start in range(0, len(items), step):
            yield [b"HSET", key, *items[start:start + step]]

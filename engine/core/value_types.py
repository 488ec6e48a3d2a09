"""The registry of collection value types: TYPE's name -> the class holding such a
value. Persistence, TYPE, OBJECT ENCODING, COPY, DUMP and memory accounting work on
any class registered here through its interface only:

    TYPE_NAME: bytes                     what TYPE replies
    encoding() -> bytes                  what OBJECT ENCODING says (Redis's defaults)
    __len__()                            elements (an empty collection is no key)
    footprint() -> int                   approximate bytes outside the counted C
                                         allocator (engine.core.memory), for memory
                                         accounting
    copy()                               an independent copy (COPY)
    to_record() -> list                  flat list of bytes (floats for scores)
    from_record(items, limits=None)      (classmethod) the value back, in the encoding the
                                         engine's EncodingLimits give it (Redis's
                                         defaults without); ValueError on bad input

Their serialized forms (DUMP payloads, the commands that recreate them) live in
engine/formats.

Strings (bytes) and streams (Stream) are not collections and are not here.
"""
from __future__ import annotations

from engine.core.hash_value import HashValue
from engine.core.list_value import ListValue
from engine.core.set_value import SetValue
from engine.core.sorted_set import SortedSetValue

VALUE_TYPES: dict[bytes, type] = {cls.TYPE_NAME: cls for cls in (
    ListValue,
    HashValue,
    SetValue,
    SortedSetValue,
)}
"""TYPE_NAME -> class, for every collection value type."""

COLLECTION_CLASSES: frozenset = frozenset(VALUE_TYPES.values())

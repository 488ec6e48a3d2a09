# cython: language_level=3
"""The commands that recreate a collection (a list, hash, set or sorted set) as Redis's
AOF rewrite emits them, so that redis-server 7.0 and Sluice replay them into the same
value: the AOF base without an RDB preamble (persist/resp_base.py), and the effects of
the commands that store a computed value whole (ZUNIONSTORE & co., SORT ... STORE). A
command carries up to REWRITE_BATCH elements, as Redis's rewrite does."""
from libc.math cimport signbit
from libc.stdint cimport int64_t

from engine.core.hash_value cimport HashValue
from engine.core.list_value cimport ListValue
from engine.core.set_value cimport SetValue
from engine.core.sorted_set cimport SortedSetValue
from engine.core.sorted_set import format_score

REWRITE_BATCH = 64


cpdef list recreate_commands(bytes key, object value):
    """The commands that make `value` again under `key` (which must not exist)."""
    if isinstance(value, ListValue):
        return _list(key, <ListValue>value)
    if isinstance(value, SortedSetValue):
        return _sorted_set(key, <SortedSetValue>value)
    if isinstance(value, HashValue):
        return _batches(b"HSET", key, value.to_record(), 2 * REWRITE_BATCH)
    if isinstance(value, SetValue):
        return _batches(b"SADD", key, value.members(), REWRITE_BATCH)
    raise TypeError(f"not a collection: {type(value).__name__}")


cdef list _batches(bytes verb, bytes key, list items, Py_ssize_t step):
    return [[verb, key, *items[start:start + step]] for start in range(0, len(items), step)]


cdef list _list(bytes key, ListValue value):
    cdef list out = []
    cdef int64_t start
    for start in range(0, value.length, REWRITE_BATCH):
        out.append([b"RPUSH", key,
                    *value.range(start, min(start + REWRITE_BATCH, value.length) - 1)])
    return out


cdef list _sorted_set(bytes key, SortedSetValue value):
    """ZADDs in ascending order; a skiplist's -0 scores come last, so that the replay
    (whose first ZADD makes a listpack, which keeps no -0) has become a skiplist again
    when they come, as a snapshot's load would make it."""
    cdef list pairs = value.range_pairs(0, value.size(), False)
    if value.encoding() == b"skiplist":
        pairs.sort(key=lambda pair: pair[0] == 0 and signbit(pair[0]))
    cdef list out = [], batch = []
    for score, member in pairs:
        batch.append(format_score(score))
        batch.append(member)
        if len(batch) == 2 * REWRITE_BATCH:
            out.append([b"ZADD", key, *batch])
            batch = []
    if batch:
        out.append([b"ZADD", key, *batch])
    return out

# cython: boundscheck=False, wraparound=False, cdivision=True
"""Values in Redis's RDB object encoding, for DUMP and RESTORE: a payload is the type
byte, the encoded value, the RDB version (2 bytes, little-endian) and the CRC-64 of
everything before it (engine/formats/dump_payload.py frames and checks it).

Strings are RDB_TYPE_STRING (0): an RDB string, plain or as an 8/16/32-bit integer
(LZF-compressed ones are read).

Streams are RDB_TYPE_STREAM_LISTPACKS (15, Redis 5.0-6.x), _2 (19, 7.0: first ID,
max deleted ID, entries added, each group's entries read) or _3 (21, 7.2+: each
consumer's active time). Their layout, in order:

    node count, then per node: its master ID (16 bytes big-endian, as an RDB
        string) and its listpack (an RDB string)
    length, last ID (ms, seq)
    [19+: first ID, max deleted ID, entries added]
    group count, then per group: name, last delivered ID,
        [19+: entries read (as a 64-bit length; -1 = unknown)],
        its PEL: count, then per entry: ID (16 raw bytes), delivery time (8 bytes
            little-endian ms), delivery count (length)
        consumer count, then per consumer: name, seen time (8 bytes LE),
            [21+: active time (8 bytes LE)], its PEL: count, then IDs (16 raw bytes)

All numbers without a stated width are RDB lengths. A node's listpack holds the
master entry (live count, deleted count, field count, the field names, 0) and then
each entry: flags, ms - master ms, seq - master seq, [field count, field, value ...
| with SAMEFIELDS: the values only], and the number of listpack elements of the entry.
Sluice's own nodes (stream.pyx) hold the same things varint-encoded, so writing a
listpack walks a node once, and reading one rebuilds that very node (tombstones
included): node boundaries survive a DUMP/RESTORE, as in Redis.

Lists, sets, hashes and sorted sets (any class of engine/core/value_types.py, through
its to_record/from_record) are written in the plain types every Redis reads: LIST (1),
SET (2), HASH (4), ZSET_2 (5, scores as little-endian doubles); small ones in the
compact type Redis writes for them, their listpack or intset copied whole (see
put_compact). Reading also takes the
compact encodings Redis writes: ziplists (10, 12, 13, 14: Redis < 7.0), intsets (11),
listpacks (16, 17, 20) and quicklists of listpacks (18), and ZSET (3, text scores).

Reading checks every length against the payload (a bad payload is a PayloadError,
never a crash or a huge allocation) and the stream's own invariants (IDs rising and
never 0-0, in entries and PELs, the counts agreeing, every pending entry owned by one
consumer): whatever it accepts, the snapshot and the AOF rewrite save and load back.
It always checks everything, whatever sanitize-dump-payload says (Redis's `yes`).
"""
from cpython.bytes cimport PyBytes_FromStringAndSize, PyBytes_AS_STRING, PyBytes_GET_SIZE
from libc.stdint cimport uint8_t, uint32_t, uint64_t, int16_t, int32_t, int64_t, INT64_MAX
from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memcmp, memcpy
from libc.stdio cimport snprintf
from libc.stdlib cimport strtod

import struct

from engine.formats.crc64 import crc64
from engine.core.lzf import lzf_decompress
from engine.formats.dump_payload import PayloadError
from engine.core.value_types import VALUE_TYPES
from engine.core.stream cimport (Stream, StreamNode, Entry, _data, _entry_head,
                                 _entry_skip, varint_get, _lp_as_int, _lp_backlen_size,
                                 FLAG_DELETED, FLAG_SAMEFIELDS)
from engine.core.groups cimport (ConsumerGroup, Consumer, PendingEntry, pe_time,
                                 pe_count, estimate_entries_read)
from engine.core.radix cimport RadixIter, RADIX_FIRST, radix_iter_init, radix_seek, radix_next
from engine.core.encoding_limits cimport EncodingLimits, DEFAULT_LIMITS
from engine.core.hash_value cimport HashValue, hash_of_listpack
from engine.core.intset cimport IntSet, is_add, is_free, is_new
from engine.core.list_value cimport ListValue, fit_one_listpack, list_of_listpack
from engine.core.listpack cimport (LP_HEADER as PACKED_HEADER, lp_bytes as packed_bytes,
                                   lp_count as packed_count, lp_new as packed_new,
                                   lp_free as packed_free, lp_append as packed_append,
                                   parse_int64)
from engine.core.hashtable cimport HTable, ht_free, ht_new, ht_set
from engine.core.memory cimport mem_alloc
from engine.core.set_value cimport (SetValue, SET_INTSET, SET_LISTPACK, set_of_intset,
                                    set_of_listpack)
from engine.core.sorted_set cimport SortedSetValue, zset_of_listpack
from engine.core.streamid cimport StreamID, id_cmp, id_decode

RDB_TYPE_STRING = 0
RDB_TYPE_LIST = 1
RDB_TYPE_SET = 2
RDB_TYPE_ZSET = 3
RDB_TYPE_HASH = 4
RDB_TYPE_ZSET_2 = 5
RDB_TYPE_LIST_ZIPLIST = 10
RDB_TYPE_SET_INTSET = 11
RDB_TYPE_ZSET_ZIPLIST = 12
RDB_TYPE_HASH_ZIPLIST = 13
RDB_TYPE_LIST_QUICKLIST = 14
RDB_TYPE_HASH_LISTPACK = 16
RDB_TYPE_ZSET_LISTPACK = 17
RDB_TYPE_LIST_QUICKLIST_2 = 18
RDB_TYPE_SET_LISTPACK = 20
RDB_TYPE_STREAM_LISTPACKS = 15
RDB_TYPE_STREAM_LISTPACKS_2 = 19
RDB_TYPE_STREAM_LISTPACKS_3 = 21
STREAM_TYPES = (RDB_TYPE_STREAM_LISTPACKS, RDB_TYPE_STREAM_LISTPACKS_2,
                RDB_TYPE_STREAM_LISTPACKS_3)
# The type each collection is written as, by TYPE name.
WRITE_TYPES = {b"list": RDB_TYPE_LIST, b"set": RDB_TYPE_SET, b"hash": RDB_TYPE_HASH,
               b"zset": RDB_TYPE_ZSET_2}
QUICKLIST_PLAIN = 1
QUICKLIST_PACKED = 2
DOUBLE = struct.Struct("<d")
# DUMP's RDB version: Redis 7.4 - 8.x's (12). Versions from 11 on carry streams as
# type 21; an older target (7.0 reads up to 10) gets type 19 (see dump_value).
DUMP_RDB_VERSION = 12
NEWEST_RDB_VERSION = 12      # the newest version RESTORE reads

cdef enum:
    LP_EOF = 0xFF
    LP_HEADER = 6
    LP_NUMELE_UNKNOWN = 65535


# --- writing ----------------------------------------------------------------------

cdef struct Buf:
    uint8_t* p
    size_t n
    size_t cap


cdef int buf_reserve(Buf* b, size_t extra) except -1:
    cdef size_t cap
    cdef uint8_t* p
    if b.n + extra <= b.cap:
        return 0
    cap = b.cap * 2 if b.cap else 256
    while cap < b.n + extra:
        cap *= 2
    p = <uint8_t*>realloc(b.p, cap)
    if p == NULL:
        raise MemoryError()
    b.p = p
    b.cap = cap
    return 0


cdef inline int put(Buf* b, const void* src, size_t n) except -1:
    buf_reserve(b, n)
    memcpy(b.p + b.n, src, n)
    b.n += n
    return 0


cdef inline int put_byte(Buf* b, uint8_t v) except -1:
    buf_reserve(b, 1)
    b.p[b.n] = v
    b.n += 1
    return 0


cdef int put_le(Buf* b, uint64_t v, int width) except -1:
    cdef int i
    buf_reserve(b, width)
    for i in range(width):
        b.p[b.n + i] = <uint8_t>(v >> (8 * i))
    b.n += width
    return 0


cdef int put_len(Buf* b, uint64_t n) except -1:
    """An RDB length (6-bit, 14-bit, 32-bit or 64-bit big-endian)."""
    cdef int i
    if n < 64:
        return put_byte(b, <uint8_t>n)
    if n < 16384:
        put_byte(b, <uint8_t>(0x40 | (n >> 8)))
        return put_byte(b, <uint8_t>(n & 0xff))
    if n <= 0xffffffff:
        put_byte(b, 0x80)
        for i in range(3, -1, -1):
            put_byte(b, <uint8_t>(n >> (8 * i)))
        return 0
    put_byte(b, 0x81)
    for i in range(7, -1, -1):
        put_byte(b, <uint8_t>(n >> (8 * i)))
    return 0


cdef int put_string(Buf* b, const uint8_t* s, size_t n) except -1:
    """An RDB string: as an integer when Redis would write one (a canonical decimal
    of at most 11 bytes that fits 32 bits), else plain."""
    cdef int64_t v
    if n <= 11 and _lp_as_int(s, n, &v) and -2147483648 <= v <= 2147483647:
        if -128 <= v <= 127:
            put_byte(b, 0xC0)
            return put_le(b, <uint64_t>v, 1)
        if -32768 <= v <= 32767:
            put_byte(b, 0xC1)
            return put_le(b, <uint64_t>v, 2)
        put_byte(b, 0xC2)
        return put_le(b, <uint64_t>v, 4)
    put_len(b, n)
    return put(b, s, n)


cdef int lp_backlen(Buf* b, uint64_t l) except -1:
    """A listpack element's length, readable backwards from its last byte."""
    if l <= 127:
        return put_byte(b, <uint8_t>l)
    if l < 16383:
        put_byte(b, <uint8_t>(l >> 7))
        return put_byte(b, <uint8_t>((l & 127) | 128))
    if l < 2097151:
        put_byte(b, <uint8_t>(l >> 14))
        put_byte(b, <uint8_t>(((l >> 7) & 127) | 128))
        return put_byte(b, <uint8_t>((l & 127) | 128))
    if l < 268435455:
        put_byte(b, <uint8_t>(l >> 21))
        put_byte(b, <uint8_t>(((l >> 14) & 127) | 128))
        put_byte(b, <uint8_t>(((l >> 7) & 127) | 128))
        return put_byte(b, <uint8_t>((l & 127) | 128))
    put_byte(b, <uint8_t>(l >> 28))
    put_byte(b, <uint8_t>(((l >> 21) & 127) | 128))
    put_byte(b, <uint8_t>(((l >> 14) & 127) | 128))
    put_byte(b, <uint8_t>(((l >> 7) & 127) | 128))
    return put_byte(b, <uint8_t>((l & 127) | 128))


cdef int lp_int(Buf* b, int64_t v) except -1:
    """A listpack integer element in its smallest encoding."""
    cdef uint64_t u
    if 0 <= v <= 127:
        put_byte(b, <uint8_t>v)
        return lp_backlen(b, 1)
    if -4096 <= v <= 4095:
        u = <uint64_t>(v + 8192 if v < 0 else v)
        put_byte(b, <uint8_t>(0xC0 | (u >> 8)))
        put_byte(b, <uint8_t>(u & 0xff))
        return lp_backlen(b, 2)
    if -32768 <= v <= 32767:
        put_byte(b, 0xF1)
        put_le(b, <uint64_t>v, 2)
        return lp_backlen(b, 3)
    if -8388608 <= v <= 8388607:
        put_byte(b, 0xF2)
        put_le(b, <uint64_t>v, 3)
        return lp_backlen(b, 4)
    if -2147483648 <= v <= 2147483647:
        put_byte(b, 0xF3)
        put_le(b, <uint64_t>v, 4)
        return lp_backlen(b, 5)
    put_byte(b, 0xF4)
    put_le(b, <uint64_t>v, 8)
    return lp_backlen(b, 9)


cdef int lp_str(Buf* b, const uint8_t* s, size_t n) except -1:
    """A listpack string element (an integer one when listpack would make it so)."""
    cdef int64_t v
    if _lp_as_int(s, n, &v):
        return lp_int(b, v)
    if n < 64:
        put_byte(b, <uint8_t>(0x80 | n))
        put(b, s, n)
        return lp_backlen(b, n + 1)
    if n < 4096:
        put_byte(b, <uint8_t>(0xE0 | (n >> 8)))
        put_byte(b, <uint8_t>(n & 0xff))
        put(b, s, n)
        return lp_backlen(b, n + 2)
    put_byte(b, 0xF0)
    put_le(b, n, 4)
    put(b, s, n)
    return lp_backlen(b, n + 5)


cdef inline const uint8_t* lp_stored(Buf* b, const uint8_t* p) except NULL:
    """Copies one of our stored strings (varint length, bytes) as a listpack string."""
    cdef uint64_t n
    p = varint_get(p, &n)
    lp_str(b, p, n)
    return p + n


cdef int node_listpack(Buf* lp, StreamNode* n) except -1:
    """Redis's listpack of one of our nodes, tombstones included, into lp (reset)."""
    cdef const uint8_t* base = _data(n)
    cdef const uint8_t* p = base
    cdef const uint8_t* q
    cdef uint64_t nfields, k, i, elements = 0
    cdef uint32_t off
    cdef Entry e
    lp.n = 0
    buf_reserve(lp, LP_HEADER)
    lp.n = LP_HEADER
    p = varint_get(p, &nfields)
    lp_int(lp, n.live)
    lp_int(lp, n.deleted)
    lp_int(lp, <int64_t>nfields)
    for i in range(nfields):
        p = lp_stored(lp, p)
    lp_int(lp, 0)
    elements = 4 + nfields
    off = n.entries_off
    while off < n.used:
        _entry_head(n, off, &e)
        _entry_skip(n, &e)
        lp_int(lp, e.flags)
        lp_int(lp, <int64_t>(e.id.ms - n.master.ms))
        lp_int(lp, <int64_t>(e.id.seq - n.master.seq))
        q = base + e.body
        if e.flags & FLAG_SAMEFIELDS:
            k = nfields
            for i in range(k):
                q = lp_stored(lp, q)
            lp_int(lp, <int64_t>(k + 3))
            elements += k + 4
        else:
            q = varint_get(q, &k)
            lp_int(lp, <int64_t>k)
            for i in range(2 * k):
                q = lp_stored(lp, q)
            lp_int(lp, <int64_t>(2 * k + 4))
            elements += 2 * k + 5
        off = e.end
    put_byte(lp, LP_EOF)
    for i in range(4):
        lp.p[i] = <uint8_t>(lp.n >> (8 * i))
    k = elements if elements < LP_NUMELE_UNKNOWN else LP_NUMELE_UNKNOWN
    lp.p[4] = <uint8_t>(k & 0xff)
    lp.p[5] = <uint8_t>(k >> 8)
    return 0


cdef int put_id_len(Buf* b, const StreamID* sid) except -1:
    put_len(b, sid.ms)
    return put_len(b, sid.seq)


cdef int put_stream(Buf* b, Stream s, bint active_times) except -1:
    cdef RadixIter it
    cdef Buf lp
    cdef ConsumerGroup g
    cdef Consumer c
    cdef int ok
    lp.p = NULL
    lp.n = lp.cap = 0
    try:
        put_len(b, s.node_count())
        radix_iter_init(&it, s.nodes)
        ok = radix_seek(&it, RADIX_FIRST, NULL)
        while ok:
            put_string(b, it.key, 16)       # 16 bytes: never integer-like
            node_listpack(&lp, (<StreamNode**>it.value)[0])
            put_len(b, lp.n)
            put(b, lp.p, lp.n)
            ok = radix_next(&it)
    finally:
        free(lp.p)
    put_len(b, s.length)
    put_id_len(b, &s.last_id)
    put_id_len(b, &s.first_id)
    put_id_len(b, &s.max_deleted_id)
    put_len(b, s.entries_added)
    put_len(b, len(s.groups))
    for g in s.groups.values():
        put_string(b, <const uint8_t*>PyBytes_AS_STRING(g.name), PyBytes_GET_SIZE(g.name))
        put_id_len(b, &g.last_id)
        put_len(b, <uint64_t>g.entries_read)
        put_group_pel(b, g)
        put_len(b, len(g.consumers))
        for c in g.consumers.values():
            put_string(b, <const uint8_t*>PyBytes_AS_STRING(c.name), PyBytes_GET_SIZE(c.name))
            put_le(b, <uint64_t>c.seen_time, 8)
            if active_times:
                put_le(b, <uint64_t>c.active_time, 8)
            put_consumer_pel(b, g, c)
    return 0


cdef int put_group_pel(Buf* b, ConsumerGroup g) except -1:
    cdef RadixIter it
    cdef PendingEntry* pe
    cdef int ok
    put_len(b, g.pending_count())
    radix_iter_init(&it, g.pel)
    ok = radix_seek(&it, RADIX_FIRST, NULL)
    while ok:
        pe = <PendingEntry*>it.value
        put(b, it.key, 16)
        put_le(b, pe_time(pe), 8)
        put_len(b, <uint64_t>pe_count(pe))
        ok = radix_next(&it)
    return 0


cdef int put_consumer_pel(Buf* b, ConsumerGroup g, Consumer c) except -1:
    # A consumer's PEL tree may hold stale keys of entries it no longer owns
    # (groups.pyx): only the owned ones count.
    cdef RadixIter it
    cdef int ok
    put_len(b, c.pending_count())
    radix_iter_init(&it, c.pel)
    ok = radix_seek(&it, RADIX_FIRST, NULL)
    while ok:
        if g.owned_entry(c, it.key) != NULL:
            put(b, it.key, 16)
        ok = radix_next(&it)
    return 0


cdef int put_bytes(Buf* b, bytes s) except -1:
    return put_string(b, <const uint8_t*>PyBytes_AS_STRING(s), PyBytes_GET_SIZE(s))


cdef int put_listpack(Buf* b, const unsigned char* lp) except -1:
    """One of our listpacks as Redis's, an RDB string: the same entries (their
    encodings are Redis's), Redis's 6-byte header (total bytes, a 16-bit count that
    reads 65535 when it does not fit) in place of our 8-byte one."""
    cdef uint32_t total = packed_bytes(lp) - 2
    cdef uint32_t count = packed_count(lp)
    put_len(b, total)
    put_le(b, total, 4)
    put_le(b, count if count < 65535 else 65535, 2)
    return put(b, lp + PACKED_HEADER, total - LP_HEADER)


cdef bint put_compact(Buf* b, object value, int rdb_version) except -1:
    """A small collection in the compact type Redis writes for its encoding, straight
    from its listpack or intset: HASH_LISTPACK (16), ZSET_LISTPACK (17), a list's one
    listpack node as QUICKLIST_2 (18), SET_INTSET (11), SET_LISTPACK (20, read by
    Redis 7.2+: from RDB version 11 on). False when it has none of them (the plain
    types then)."""
    cdef type cls = type(value)
    cdef const unsigned char* lp = NULL
    cdef const IntSet* ints
    cdef SetValue members
    cdef ListValue items
    cdef int rdbtype = 0
    if cls is HashValue:
        lp, rdbtype = (<HashValue>value).lp, RDB_TYPE_HASH_LISTPACK
    elif cls is SortedSetValue:
        lp, rdbtype = (<SortedSetValue>value).lp, RDB_TYPE_ZSET_LISTPACK
    elif cls is ListValue:
        items = <ListValue>value
        if not items.quick and items.head != NULL:
            lp, rdbtype = items.head.lp, RDB_TYPE_LIST_QUICKLIST_2
    elif cls is SetValue:
        members = <SetValue>value
        if members.kind == SET_INTSET:      # Redis's layout, little-endian as here
            ints = members.d.ints
            put_byte(b, RDB_TYPE_SET_INTSET)
            put_len(b, sizeof(IntSet) + <size_t>ints.length * ints.width)
            put(b, ints, sizeof(IntSet) + <size_t>ints.length * ints.width)
            return True
        if members.kind == SET_LISTPACK and rdb_version >= 11:
            lp, rdbtype = members.d.lp, RDB_TYPE_SET_LISTPACK
    if lp == NULL:
        return False
    put_byte(b, rdbtype)
    if rdbtype == RDB_TYPE_LIST_QUICKLIST_2:
        put_len(b, 1)
        put_len(b, QUICKLIST_PACKED)
    put_listpack(b, lp)
    return True


cdef int put_collection(Buf* b, object value, int rdb_version) except -1:
    cdef bytes name = type(value).TYPE_NAME
    cdef list items
    cdef Py_ssize_t i
    cdef bytes score
    if put_compact(b, value, rdb_version):
        return 0
    items = value.to_record()
    put_byte(b, WRITE_TYPES[name])
    if name == b"zset":
        put_len(b, len(items) // 2)
        for i in range(0, len(items), 2):
            put_bytes(b, items[i])
            score = DOUBLE.pack(items[i + 1])
            put(b, PyBytes_AS_STRING(score), 8)
        return 0
    put_len(b, len(items) // 2 if name == b"hash" else len(items))
    for item in items:
        put_bytes(b, item)
    return 0


def dump_value(object value, int rdb_version=DUMP_RDB_VERSION) -> bytes:
    """The DUMP payload of a string (bytes) or a Stream, stamped with rdb_version:
    from 11 on a stream is type 21; below, type 19 (consumers' active times left
    out), which Redis 7.0 reads."""
    cdef Buf b
    cdef bytes out
    b.p = NULL
    b.n = b.cap = 0
    try:
        if type(value) is bytes:
            put_byte(&b, RDB_TYPE_STRING)
            put_string(&b, <const uint8_t*>PyBytes_AS_STRING(value), PyBytes_GET_SIZE(value))
        elif type(value) is Stream:
            put_byte(&b, RDB_TYPE_STREAM_LISTPACKS_3 if rdb_version >= 11
                     else RDB_TYPE_STREAM_LISTPACKS_2)
            put_stream(&b, <Stream>value, rdb_version >= 11)
        elif getattr(type(value), "TYPE_NAME", None) in WRITE_TYPES:
            put_collection(&b, value, rdb_version)
        else:
            raise TypeError(f"no RDB encoding for {type(value).__name__}")
        put_le(&b, <uint64_t>rdb_version, 2)
        head = PyBytes_FromStringAndSize(<char*>b.p, b.n)
    finally:
        free(b.p)
    return head + crc64(head).to_bytes(8, "little")


# --- reading ----------------------------------------------------------------------

cdef class Reader:
    """A cursor over a checked payload. As in Redis, an item may run on into the
    trailer: only the payload's end bounds a read."""
    cdef bytes payload
    cdef const uint8_t* p
    cdef size_t pos
    cdef size_t end

    def __cinit__(self, bytes payload):
        self.payload = payload
        self.p = <const uint8_t*>PyBytes_AS_STRING(payload)
        self.pos = 0
        self.end = PyBytes_GET_SIZE(payload)

    cdef inline size_t left(self) noexcept:
        return self.end - self.pos

    cdef const uint8_t* take(self, uint64_t n) except NULL:
        cdef const uint8_t* at
        if n > self.end - self.pos:
            raise PayloadError("payload ends early")
        at = self.p + self.pos
        self.pos += n
        return at

    cdef uint64_t le(self, int width) except? 0xffffffffffffffff:
        cdef const uint8_t* q = self.take(width)
        cdef uint64_t v = 0
        cdef int i
        for i in range(width):
            v |= <uint64_t>q[i] << (8 * i)
        return v

    cdef uint64_t raw_len(self, bint* special) except? 0xffffffffffffffff:
        cdef uint8_t first = self.take(1)[0]
        cdef const uint8_t* q
        cdef uint64_t v = 0
        cdef int i
        special[0] = 0
        if first >> 6 == 0:
            return first & 0x3f
        if first >> 6 == 1:
            return (<uint64_t>(first & 0x3f) << 8) | self.take(1)[0]
        if first >> 6 == 3:
            special[0] = 1
            return first & 0x3f
        if first == 0x80:
            q = self.take(4)
            for i in range(4):
                v = v << 8 | q[i]
            return v
        if first == 0x81:
            q = self.take(8)
            for i in range(8):
                v = v << 8 | q[i]
            return v
        raise PayloadError("unknown length encoding")

    cdef uint64_t length(self) except? 0xffffffffffffffff:
        cdef bint special
        cdef uint64_t n = self.raw_len(&special)
        if special:
            raise PayloadError("a string encoding where a length belongs")
        return n

    cdef bytes string(self):
        cdef bint special
        cdef uint64_t n = self.raw_len(&special), clen, length
        cdef int64_t v
        if not special:
            return PyBytes_FromStringAndSize(<const char*>self.take(n), n)
        if n <= 2:
            v = <int64_t>self.le(1 << n)
            if n == 0:
                v = <signed char>v
            elif n == 1:
                v = <short>v
            else:
                v = <int>v
            return str(v).encode()
        if n == 3:
            clen = self.length()
            length = self.length()
            # LZF expands at most ~132-fold: a longer claim is a lie, not an allocation
            if clen > self.left() or length > clen * 140 + 64:
                raise PayloadError("bad LZF string")
            self.take(clen)
            try:
                return lzf_decompress(self.payload[self.pos - clen:self.pos], length)
            except ValueError as exc:
                raise PayloadError(str(exc)) from None
        raise PayloadError("unknown string encoding")

    cdef int stream_id(self, StreamID* out) except -1:
        out.ms = self.length()
        out.seq = self.length()
        return 0


# One listpack element: an integer, or a string at [s, s + n).
cdef struct LpElement:
    bint is_int
    int64_t v
    const uint8_t* s
    uint64_t n


cdef inline int64_t sign_extend(uint64_t v, int bits) noexcept nogil:
    if v & (<uint64_t>1 << (bits - 1)):
        return <int64_t>(v | ~((<uint64_t>1 << bits) - 1)) if bits < 64 else <int64_t>v
    return <int64_t>v


cdef struct LpCursor:
    const uint8_t* p
    const uint8_t* end       # the EOF byte


cdef int lp_next(LpCursor* c, LpElement* e) except -1:
    """Reads the element at c.p into e and moves past it; 0 at the end, else 1."""
    cdef const uint8_t* p = c.p
    cdef uint64_t avail = <uint64_t>(c.end - p), enc, u = 0
    cdef uint8_t b
    cdef int i, width = 0
    if avail == 0:
        return 0
    b = p[0]
    e.is_int = 1
    if b < 0x80:
        e.v = b
        enc = 1
    elif b & 0xC0 == 0x80:
        e.is_int = 0
        e.n = b & 0x3f
        e.s = p + 1
        enc = 1 + e.n
    elif b & 0xE0 == 0xC0:
        if avail < 2:
            raise PayloadError("listpack element cut short")
        e.v = sign_extend((<uint64_t>(b & 0x1f) << 8) | p[1], 13)
        enc = 2
    elif b & 0xF0 == 0xE0:
        if avail < 2:
            raise PayloadError("listpack element cut short")
        e.is_int = 0
        e.n = (<uint64_t>(b & 0x0f) << 8) | p[1]
        e.s = p + 2
        enc = 2 + e.n
    elif b == 0xF0:
        if avail < 5:
            raise PayloadError("listpack element cut short")
        e.is_int = 0
        e.n = p[1] | (<uint64_t>p[2] << 8) | (<uint64_t>p[3] << 16) | (<uint64_t>p[4] << 24)
        e.s = p + 5
        enc = 5 + e.n
    elif 0xF1 <= b <= 0xF4:
        width = (2, 3, 4, 8)[b - 0xF1]
        if avail < <uint64_t>(1 + width):
            raise PayloadError("listpack element cut short")
        for i in range(width):
            u |= <uint64_t>p[1 + i] << (8 * i)
        e.v = sign_extend(u, 8 * width)
        enc = 1 + width
    else:
        raise PayloadError("bad listpack element encoding")
    if enc > avail or _lp_backlen_size(enc) > avail - enc:
        raise PayloadError("listpack element past its end")
    c.p = p + enc + _lp_backlen_size(enc)
    return 1


cdef int64_t lp_int_of(LpCursor* c) except? -1:
    """The next element, which must be an integer."""
    cdef LpElement e
    cdef int64_t v
    if not lp_next(c, &e):
        raise PayloadError("listpack ends early")
    if e.is_int:
        return e.v
    if _lp_as_int(e.s, e.n, &v):
        return v
    raise PayloadError("a string where a listpack integer belongs")


cdef bytes lp_bytes_of(LpCursor* c):
    """The next element as bytes (integers in decimal)."""
    cdef LpElement e
    if not lp_next(c, &e):
        raise PayloadError("listpack ends early")
    if e.is_int:
        return str(e.v).encode()
    return PyBytes_FromStringAndSize(<const char*>e.s, e.n)


cdef class StreamBuilder:
    """Rebuilds a stream from RDB listpacks node for node: each listpack becomes one
    node holding the same entries, tombstones included, so node boundaries (XINFO's
    radix-tree-keys, `~` trimming, where the next XADD goes) stay those of the source."""
    cdef Stream s
    cdef list fields
    cdef StreamID last          # the last entry read (live or not)
    cdef StreamID first_live
    cdef bint have_live
    cdef bint any

    def __cinit__(self):
        self.s = Stream()
        self.fields = []
        self.any = 0
        self.have_live = 0

    cdef int add_node(self, bytes key, bytes lp) except -1:
        cdef StreamID master, sid
        cdef LpCursor c
        cdef uint64_t size = PyBytes_GET_SIZE(lp)
        cdef int64_t live, deleted, nfields, flags, msd, seqd, k, count, i
        cdef int64_t seen_live = 0, seen_deleted = 0
        cdef list names = [], fields = self.fields
        cdef StreamID* tombstones = NULL
        if len(key) != 16:
            raise PayloadError("stream node key is not a stream ID")
        id_decode(<const uint8_t*>PyBytes_AS_STRING(key), &master)
        lp_open(lp, &c)
        live = lp_int_of(&c)
        deleted = lp_int_of(&c)
        nfields = lp_int_of(&c)
        if (live < 0 or deleted < 0 or live + deleted == 0 or nfields <= 0
                or <uint64_t>nfields > size or <uint64_t>deleted > size):
            raise PayloadError("bad stream master entry")
        for i in range(nfields):
            names.append(lp_bytes_of(&c))
        if lp_int_of(&c) != 0:
            raise PayloadError("bad stream master entry terminator")
        tombstones = <StreamID*>malloc(sizeof(StreamID) * (deleted + 1))
        if tombstones == NULL:
            raise MemoryError()
        try:
            while c.p < c.end:
                flags = lp_int_of(&c)
                msd = lp_int_of(&c)
                seqd = lp_int_of(&c)
                if flags & ~(FLAG_DELETED | FLAG_SAMEFIELDS):
                    raise PayloadError("bad stream entry flags")
                if flags & FLAG_SAMEFIELDS:
                    k = nfields
                    count = k + 3
                else:
                    k = lp_int_of(&c)
                    if k <= 0 or <uint64_t>k > size:
                        raise PayloadError("bad stream entry field count")
                    count = 2 * k + 4
                if len(fields) < 2 * k:
                    fields.extend([None] * (2 * k - len(fields)))
                for i in range(k):
                    if flags & FLAG_SAMEFIELDS:
                        fields[2 * i] = names[i]
                    else:
                        fields[2 * i] = lp_bytes_of(&c)
                    fields[2 * i + 1] = lp_bytes_of(&c)
                if lp_int_of(&c) != count:
                    raise PayloadError("bad stream entry element count")
                sid.ms = master.ms + <uint64_t>msd
                sid.seq = master.seq + <uint64_t>seqd
                if self.any and id_cmp(&sid, &self.last) <= 0:
                    raise PayloadError("stream entry IDs do not increase")
                if sid.ms == 0 and sid.seq == 0:
                    raise PayloadError("stream entry 0-0")          # no XADD makes one
                if flags & FLAG_DELETED:
                    if seen_deleted == deleted:
                        raise PayloadError("more tombstones than the node counts")
                    tombstones[seen_deleted] = sid
                    seen_deleted += 1
                else:
                    if not self.have_live:
                        self.first_live = sid
                        self.have_live = 1
                    seen_live += 1
                # the node's first entry opens a node; the others follow it, whatever
                # their size (limits 0 = none; 1 entry = close the tail)
                try:
                    self.s.append(&sid, fields, 0, k, 0,
                                  1 if seen_live + seen_deleted == 1 else 0)
                except ValueError as exc:
                    raise PayloadError(str(exc)) from None
                self.last = sid
                self.any = 1
            if seen_live != live or seen_deleted != deleted:
                raise PayloadError("stream node counts do not match its entries")
            for i in range(seen_deleted):
                self.s.delete(&tombstones[i])
        finally:
            free(tombstones)
        return 0


cdef struct Pending:
    StreamID id
    uint64_t time
    int64_t count
    int64_t owner        # index into the group's consumers; -1 until one claims it


cdef int64_t find_pending(Pending* pel, int64_t n, const StreamID* sid) noexcept:
    cdef int64_t lo = 0, hi = n - 1, mid
    cdef int cmp
    while lo <= hi:
        mid = (lo + hi) // 2
        cmp = id_cmp(&pel[mid].id, sid)
        if cmp == 0:
            return mid
        if cmp < 0:
            lo = mid + 1
        else:
            hi = mid - 1
    return -1


cdef int read_group(Reader r, Stream s, int rdbtype) except -1:
    cdef StreamID last, sid
    cdef int64_t n, i, j, ncons, npel, found
    cdef Pending* pel = NULL
    cdef ConsumerGroup g
    cdef Consumer c
    cdef list consumers = []
    name = r.string()
    if name in s.groups:
        raise PayloadError("duplicate consumer group")
    r.stream_id(&last)
    g = ConsumerGroup(name, last.ms, last.seq, 0)
    if rdbtype >= RDB_TYPE_STREAM_LISTPACKS_2:
        # any value: the counter wraps past INT64_MAX, as Redis's does
        g.entries_read = <int64_t>r.length()
    else:
        g.entries_read = estimate_entries_read(s, &last)
    npel = <int64_t>r.length()
    if npel < 0 or <uint64_t>npel > r.left() // 25:
        raise PayloadError("bad PEL size")
    pel = <Pending*>malloc(sizeof(Pending) * (npel if npel else 1))
    if pel == NULL:
        raise MemoryError()
    try:
        for i in range(npel):
            id_decode(r.take(16), &pel[i].id)
            if i and id_cmp(&pel[i].id, &pel[i - 1].id) <= 0:
                raise PayloadError("PEL IDs do not increase")
            if pel[i].id.ms == 0 and pel[i].id.seq == 0:
                raise PayloadError("PEL entry 0-0")         # never an entry's ID
            pel[i].time = r.le(8)
            if pel[i].time > <uint64_t>INT64_MAX:
                raise PayloadError("negative delivery time")    # Redis's times are signed
            pel[i].count = <int64_t>r.length()
            pel[i].owner = -1
        ncons = <int64_t>r.length()
        if ncons < 0 or <uint64_t>ncons > r.left() // 10:
            raise PayloadError("bad consumer count")
        for j in range(ncons):
            cname = r.string()
            if g.lookup_consumer(cname) is not None:
                raise PayloadError("duplicate consumer")
            c = g.create_consumer(cname, <int64_t>r.le(8))
            c.active_time = (<int64_t>r.le(8) if rdbtype >= RDB_TYPE_STREAM_LISTPACKS_3
                             else c.seen_time)
            consumers.append(c)
            n = <int64_t>r.length()
            if n < 0 or <uint64_t>n > r.left() // 16:
                raise PayloadError("bad consumer PEL size")
            for i in range(n):
                id_decode(r.take(16), &sid)
                found = find_pending(pel, npel, &sid)
                if found < 0:
                    raise PayloadError("consumer PEL entry not in the group PEL")
                if pel[found].owner != -1:
                    raise PayloadError("PEL entry owned twice")
                pel[found].owner = j
        for i in range(npel):
            if pel[i].owner < 0:
                raise PayloadError("PEL entry without a consumer")
            g.add_pending(&pel[i].id, <Consumer>consumers[pel[i].owner], pel[i].time,
                          pel[i].count)
    finally:
        free(pel)
    s.groups[name] = g
    return 0


cdef Stream read_stream(Reader r, int rdbtype):
    cdef StreamBuilder builder = StreamBuilder()
    cdef Stream s = builder.s
    cdef uint64_t nodes = r.length(), i, length, ngroups
    cdef StreamID first, max_deleted
    if nodes > r.left() // 2:
        raise PayloadError("bad stream node count")
    for i in range(nodes):
        key = r.string()
        lp = r.string()
        builder.add_node(key, lp)
    if s.length:
        s.first_id = builder.first_live
    length = r.length()
    if length != s.length:
        raise PayloadError("stream length does not match its entries")
    r.stream_id(&s.last_id)
    if builder.any and id_cmp(&s.last_id, &builder.last) < 0:
        raise PayloadError("stream last ID below its last entry")
    if rdbtype >= RDB_TYPE_STREAM_LISTPACKS_2:
        r.stream_id(&first)          # derived from the entries instead
        r.stream_id(&max_deleted)
        s.max_deleted_id = max_deleted
        s.entries_added = r.length()
        if s.entries_added < s.length or id_cmp(&s.max_deleted_id, &s.last_id) > 0:
            raise PayloadError("bad stream counters")
    else:
        s.entries_added = s.length
    ngroups = r.length()
    if ngroups > r.left() // 4:
        raise PayloadError("bad group count")
    for i in range(ngroups):
        read_group(r, s, rdbtype)
    return s


cdef int lp_open(bytes lp, LpCursor* c) except -1:
    """Checks a listpack's header and terminator; c then covers its elements."""
    cdef const uint8_t* p = <const uint8_t*>PyBytes_AS_STRING(lp)
    cdef uint64_t size = PyBytes_GET_SIZE(lp), total
    if size < LP_HEADER + 1 or p[size - 1] != LP_EOF:
        raise PayloadError("bad listpack")
    total = p[0] | (<uint64_t>p[1] << 8) | (<uint64_t>p[2] << 16) | (<uint64_t>p[3] << 24)
    if total != size:
        raise PayloadError("listpack size mismatch")
    c.p = p + LP_HEADER
    c.end = p + size - 1
    return 0


def listpack_items(bytes lp) -> list:
    """Every element of a listpack, as bytes (integers in decimal)."""
    cdef LpCursor c
    cdef list out = []
    lp_open(lp, &c)
    while c.p < c.end:
        out.append(lp_bytes_of(&c))
    return out


ZIPLIST_INTS = {0xC0: 2, 0xD0: 4, 0xE0: 8, 0xF0: 3, 0xFE: 1}


def ziplist_items(bytes zl) -> list:
    """Every element of a ziplist (Redis < 7.0's compact list), as bytes."""
    cdef Py_ssize_t end = len(zl) - 1, pos = 10, n
    cdef list out = []
    if end < 10 or zl[end] != 0xFF or int.from_bytes(zl[:4], "little") != len(zl):
        raise PayloadError("bad ziplist")
    try:
        while pos < end:
            pos += 1 if zl[pos] < 0xFE else 5          # the previous entry's length
            b = zl[pos]
            if b >> 6 == 0:
                n, pos = b & 0x3f, pos + 1
            elif b >> 6 == 1:
                n, pos = (b & 0x3f) << 8 | zl[pos + 1], pos + 2
            elif b == 0x80:
                n, pos = int.from_bytes(zl[pos + 1:pos + 5], "big"), pos + 5
            elif b in ZIPLIST_INTS:
                n = ZIPLIST_INTS[b]
                if pos + 1 + n > end:
                    raise PayloadError("ziplist entry past its end")
                out.append(str(int.from_bytes(zl[pos + 1:pos + 1 + n], "little",
                                              signed=True)).encode())
                pos += 1 + n
                continue
            elif 0xF1 <= b <= 0xFD:
                out.append(str((b & 0x0f) - 1).encode())
                pos += 1
                continue
            else:
                raise PayloadError("bad ziplist entry encoding")
            if pos + n > end:
                raise PayloadError("ziplist entry past its end")
            out.append(zl[pos:pos + n])
            pos += n
    except IndexError:
        raise PayloadError("ziplist cut short") from None
    return out


def intset_items(bytes data) -> list:
    """The members of an intset: width (2, 4, 8), count, then little-endian integers."""
    if len(data) < 8:
        raise PayloadError("bad intset")
    width = int.from_bytes(data[:4], "little")
    count = int.from_bytes(data[4:8], "little")
    if width not in (2, 4, 8) or len(data) != 8 + width * count:
        raise PayloadError("bad intset")
    return [str(int.from_bytes(data[8 + i * width:8 + (i + 1) * width], "little",
                               signed=True)).encode() for i in range(count)]


cdef object score_of(bytes text):
    """A sorted-set score written as text (ziplists, listpacks, ZSET)."""
    try:
        score = float(text)
    except ValueError:
        raise PayloadError("bad sorted set score") from None
    if score != score:
        raise PayloadError("NaN sorted set score")
    return score


cdef list scored(list flat):
    """[member, score text, ...] -> [member, float score, ...]."""
    if len(flat) % 2:
        raise PayloadError("odd sorted set listpack")
    for i in range(1, len(flat), 2):
        flat[i] = score_of(flat[i])
    return flat


cdef object text_double(Reader r):
    """ZSET's score: a length byte (253 NaN, 254 +inf, 255 -inf) and that much text."""
    cdef uint8_t n = r.take(1)[0]
    if n == 253:
        raise PayloadError("NaN sorted set score")
    if n == 254:
        return float("inf")
    if n == 255:
        return float("-inf")
    return score_of(PyBytes_FromStringAndSize(<const char*>r.take(n), n))


cdef list read_strings(Reader r, uint64_t n):
    if n > r.left():
        raise PayloadError("bad element count")
    return [r.string() for _ in range(n)]


cdef tuple read_collection(Reader r, int rdbtype):
    """(TYPE name, record) of a collection payload."""
    cdef uint64_t n, i
    cdef list items
    if rdbtype in (RDB_TYPE_LIST, RDB_TYPE_SET):
        items = read_strings(r, r.length())
        return (b"list" if rdbtype == RDB_TYPE_LIST else b"set"), items
    if rdbtype == RDB_TYPE_HASH:
        n = r.length()
        if n > r.left():
            raise PayloadError("bad element count")
        return b"hash", read_strings(r, 2 * n)
    if rdbtype in (RDB_TYPE_ZSET, RDB_TYPE_ZSET_2):
        n = r.length()
        if n > r.left():
            raise PayloadError("bad element count")
        items = []
        for i in range(n):
            items.append(r.string())
            if rdbtype == RDB_TYPE_ZSET:
                items.append(text_double(r))
            else:
                score = DOUBLE.unpack(PyBytes_FromStringAndSize(<const char*>r.take(8), 8))[0]
                if score != score:
                    raise PayloadError("NaN sorted set score")
                items.append(score)
        return b"zset", items
    if rdbtype in (RDB_TYPE_LIST_QUICKLIST, RDB_TYPE_LIST_QUICKLIST_2):
        n = r.length()
        if n > r.left():
            raise PayloadError("bad node count")
        items = []
        for i in range(n):
            container = QUICKLIST_PACKED
            if rdbtype == RDB_TYPE_LIST_QUICKLIST_2:
                container = r.length()
            node = r.string()
            if rdbtype == RDB_TYPE_LIST_QUICKLIST:
                items += ziplist_items(node)
            elif container == QUICKLIST_PLAIN:
                items.append(node)
            elif container == QUICKLIST_PACKED:
                items += listpack_items(node)
            else:
                raise PayloadError("bad quicklist container")
        return b"list", items
    blob = r.string()
    if rdbtype == RDB_TYPE_LIST_ZIPLIST:
        return b"list", ziplist_items(blob)
    if rdbtype == RDB_TYPE_SET_INTSET:
        return b"set", intset_items(blob)
    if rdbtype == RDB_TYPE_SET_LISTPACK:
        return b"set", listpack_items(blob)
    if rdbtype == RDB_TYPE_HASH_ZIPLIST:
        return b"hash", ziplist_items(blob)
    if rdbtype == RDB_TYPE_HASH_LISTPACK:
        return b"hash", listpack_items(blob)
    if rdbtype == RDB_TYPE_ZSET_ZIPLIST:
        return b"zset", scored(ziplist_items(blob))
    return b"zset", scored(listpack_items(blob))      # RDB_TYPE_ZSET_LISTPACK


COLLECTION_TYPES = frozenset((
    RDB_TYPE_LIST, RDB_TYPE_SET, RDB_TYPE_ZSET, RDB_TYPE_HASH, RDB_TYPE_ZSET_2,
    RDB_TYPE_LIST_ZIPLIST, RDB_TYPE_SET_INTSET, RDB_TYPE_ZSET_ZIPLIST, RDB_TYPE_HASH_ZIPLIST,
    RDB_TYPE_LIST_QUICKLIST, RDB_TYPE_HASH_LISTPACK, RDB_TYPE_ZSET_LISTPACK,
    RDB_TYPE_LIST_QUICKLIST_2, RDB_TYPE_SET_LISTPACK))


# -- compact payloads straight into our listpacks and intsets ------------------------------
# A small listpack or intset payload (Redis 7.0's types) becomes the value's own buffer,
# checked and re-packed element by element in C: no Python object per element. When
# the engine's limits would give the value another encoding, or the payload is not in
# the shape Redis writes (a sorted set out of order, an intset not ascending, scores
# in another syntax), None: the caller rebuilds it from its record, which decides.

cdef enum:
    FAST_ELEMENTS = 1024       # more: the record's road (duplicates are found in O(n^2) here)

cdef struct Packing:
    unsigned char* lp          # ours
    uint64_t count             # elements
    uint64_t longest           # the longest element's text
    uint64_t text              # the elements' text bytes
    bint all_ints


cdef const uint8_t* element_text(LpElement* e, char* buf, uint64_t* n) noexcept:
    if e.is_int:
        n[0] = snprintf(buf, 24, "%lld", <long long>e.v)
        return <const uint8_t*>buf
    n[0] = e.n
    return e.s


cdef bint packed_again(bytes blob, Packing* out, uint32_t stride, bint unique) except -1:
    """Redis's listpack blob re-packed as ours in out.lp (the caller's when True; when
    False or raising, out.lp is NULL); elements 0, stride, 2 * stride... may not repeat
    when `unique`. False past FAST_ELEMENTS elements."""
    cdef LpCursor c
    cdef LpElement e
    cdef char buf[24]
    cdef const uint8_t* s
    cdef uint64_t n
    cdef int64_t v
    cdef HTable* seen = NULL
    out.lp = NULL
    out.count = out.longest = out.text = 0
    out.all_ints = True
    try:
        lp_open(blob, &c)
        out.lp = packed_new()
        seen = ht_new(False)
        while lp_next(&c, &e):
            if out.count == FAST_ELEMENTS:
                packed_free(out.lp)
                out.lp = NULL
                return False
            s = element_text(&e, buf, &n)
            if not e.is_int and not parse_int64(s, n, &v):
                out.all_ints = False
            if unique and out.count % stride == 0 and not ht_set(seen, s, n, NULL, 0):
                raise PayloadError("repeated member")
            packed_append(&out.lp, s, n)
            out.count += 1
            out.text += n
            if n > out.longest:
                out.longest = n
        if out.count == 0:
            raise PayloadError("empty collection")
    except BaseException:
        packed_free(out.lp)
        out.lp = NULL
        raise
    finally:
        if seen != NULL:
            ht_free(seen)
    return True


cdef bint score_text_of(LpElement* e, double* score) noexcept:
    """A listpack score: an integer, or decimal text as Redis writes it."""
    cdef char buf[48]
    cdef char* end
    cdef uint64_t i
    if e.is_int:
        score[0] = <double>e.v
        return True
    if e.n == 0 or e.n >= 48:
        return False
    for i in range(e.n):
        if e.s[i] not in b"0123456789.eE+-infINF":
            return False
    memcpy(buf, e.s, e.n)
    buf[e.n] = 0
    score[0] = strtod(buf, &end)
    return end == buf + e.n and score[0] == score[0]


cdef inline int text_cmp(const uint8_t* a, uint64_t an, const uint8_t* b,
                         uint64_t bn) noexcept:
    cdef int c = memcmp(a, b, an if an < bn else bn)
    return c if c else (an > bn) - (an < bn)


cdef object zset_packed(bytes blob, EncodingLimits limits):
    """A listpack sorted set re-packed as ours: in (score, member) order, scores
    written as our listpacks write them."""
    cdef LpCursor c
    cdef LpElement member, score_e
    cdef double score, last = 0
    cdef const uint8_t* last_member = NULL
    cdef uint64_t last_n = 0, n, count = 0
    cdef const uint8_t* s
    cdef char buf[24]
    cdef char last_buf[24]
    cdef char text[32]
    cdef unsigned char* lp = NULL
    cdef HTable* seen = NULL
    try:
        lp_open(blob, &c)
        lp = packed_new()
        seen = ht_new(False)
        while lp_next(&c, &member):
            if not lp_next(&c, &score_e):
                raise PayloadError("odd sorted set listpack")
            s = element_text(&member, buf, &n)
            count += 1
            if (count > <uint64_t>limits.zset_max_listpack_entries or count > FAST_ELEMENTS
                    or n > <uint64_t>limits.zset_max_listpack_value
                    or not score_text_of(&score_e, &score)):
                packed_free(lp)
                return None
            if not ht_set(seen, s, n, NULL, 0):
                raise PayloadError("repeated member")
            if last_member != NULL and (score < last or score == last
                                        and text_cmp(last_member, last_n, s, n) >= 0):
                packed_free(lp)
                return None                 # out of order: the record's road sorts it
            packed_append(&lp, s, n)
            packed_append(&lp, <const unsigned char*>text, snprintf(text, 32, "%.17g", score))
            last, last_n = score, n
            if member.is_int:               # its text is in buf, written again next time
                memcpy(last_buf, buf, n)
                last_member = <const uint8_t*>last_buf
            else:
                last_member = s
    except BaseException:
        packed_free(lp)
        raise
    finally:
        if seen != NULL:
            ht_free(seen)
    if count == 0:
        packed_free(lp)
        raise PayloadError("empty collection")
    return zset_of_listpack(lp)


cdef object intset_packed(bytes blob, EncodingLimits limits):
    """Redis's intset (our layout: width, count, little-endian integers) copied as
    ours; its integers must ascend."""
    cdef const uint8_t* p = <const uint8_t*>PyBytes_AS_STRING(blob)
    cdef uint64_t size = PyBytes_GET_SIZE(blob), width, count, i
    cdef const IntSet* header = <const IntSet*>p
    cdef int64_t v, last = 0
    cdef unsigned char* copy
    if size < sizeof(IntSet):
        raise PayloadError("bad intset")
    width, count = header.width, header.length
    if width not in (2, 4, 8) or size != sizeof(IntSet) + width * count:
        raise PayloadError("bad intset")
    if count == 0:
        raise PayloadError("empty collection")
    for i in range(count):
        if width == 2:
            v = (<const int16_t*>(p + sizeof(IntSet)))[i]
        elif width == 4:
            v = (<const int32_t*>(p + sizeof(IntSet)))[i]
        else:
            v = (<const int64_t*>(p + sizeof(IntSet)))[i]
        if i and v <= last:
            raise PayloadError("intset not ascending")     # as Redis's deep check
        last = v
    if count > <uint64_t>limits.set_max_intset_entries:
        return None
    copy = <unsigned char*>mem_alloc(size)
    memcpy(copy, p, size)
    return set_of_intset(<IntSet*>copy)


cdef object set_packed(bytes blob, EncodingLimits limits):
    """A listpack set: an intset when all its members are integers that fit one (as
    a set built from them), else our listpack of them in the payload's order."""
    cdef Packing out
    cdef IntSet* ints
    cdef uint64_t i
    cdef int64_t v
    cdef LpCursor c
    cdef LpElement e
    if not packed_again(blob, &out, 1, True):
        return None
    if out.all_ints and out.count <= <uint64_t>limits.set_max_intset_entries:
        packed_free(out.lp)
        ints = is_new()
        lp_open(blob, &c)
        try:
            while lp_next(&c, &e):
                if not e.is_int:
                    parse_int64(e.s, e.n, &v)
                is_add(&ints, e.v if e.is_int else v)
        except BaseException:
            is_free(ints)
            raise
        return set_of_intset(ints)
    if (out.count > <uint64_t>limits.set_max_listpack_entries
            or out.longest > <uint64_t>limits.set_max_listpack_value):
        packed_free(out.lp)
        return None
    return set_of_listpack(out.lp)


cdef object hash_packed(bytes blob, EncodingLimits limits):
    """A listpack hash re-packed as ours, its pairs in the payload's order."""
    cdef Packing out
    if not packed_again(blob, &out, 2, True):
        return None
    if (out.count % 2 or out.count // 2 > <uint64_t>limits.hash_max_listpack_entries
            or out.longest > <uint64_t>limits.hash_max_listpack_value):
        packed_free(out.lp)
        if out.count % 2:
            raise PayloadError("odd hash listpack")
        return None
    return hash_of_listpack(out.lp)


cdef object list_packed(Reader r, EncodingLimits limits):
    """A quicklist of one listpack node (what 7.0 writes for a small list) re-packed
    as ours, when pushing its elements would leave a listpack too."""
    cdef Packing out
    if (r.length() != 1 or r.length() != QUICKLIST_PACKED
            or not packed_again(r.string(), &out, 1, False)):
        return None
    if not fit_one_listpack(out.text, out.count, limits):
        packed_free(out.lp)
        return None
    return list_of_listpack(out.lp)


cdef object load_packed(Reader r, int rdbtype, EncodingLimits limits):
    """The value of a compact payload taken straight into our buffers, or None (the
    reader then back where it was)."""
    cdef size_t start = r.pos
    cdef object value
    if rdbtype == RDB_TYPE_LIST_QUICKLIST_2:
        value = list_packed(r, limits)
        if value is None:
            r.pos = start
        return value
    cdef bytes blob = r.string()
    if rdbtype == RDB_TYPE_HASH_LISTPACK:
        value = hash_packed(blob, limits)
    elif rdbtype == RDB_TYPE_ZSET_LISTPACK:
        value = zset_packed(blob, limits)
    elif rdbtype == RDB_TYPE_SET_LISTPACK:
        value = set_packed(blob, limits)
    else:
        value = intset_packed(blob, limits)
    if value is None:
        r.pos = start
    return value


cdef object load_collection(Reader r, int rdbtype, object limits):
    """A collection value: a compact one within the limits straight into our buffers,
    else through its class's from_record (which rejects empty ones and repeated
    members, as Redis's loader does)."""
    cdef object value
    if rdbtype in (RDB_TYPE_HASH_LISTPACK, RDB_TYPE_ZSET_LISTPACK, RDB_TYPE_SET_LISTPACK,
                   RDB_TYPE_SET_INTSET, RDB_TYPE_LIST_QUICKLIST_2):
        value = load_packed(r, rdbtype, DEFAULT_LIMITS if limits is None else limits)
        if value is not None:
            return value
    name, items = read_collection(r, rdbtype)
    cls = VALUE_TYPES.get(name)
    if cls is None:
        raise PayloadError(f"no {name.decode()} values here")
    members = items if name in (b"set", b"list") else items[::2]
    if name != b"list" and len(set(members)) != len(members):
        raise PayloadError("repeated member")
    try:
        return cls.from_record(items, limits)
    except ValueError as exc:
        raise PayloadError(str(exc)) from None


def load_value(bytes payload, object limits=None):
    """The value of a payload whose version and checksum were checked (bytes, a
    Stream or a collection, encoded by `limits`: the engine's EncodingLimits);
    PayloadError when the body does not parse."""
    cdef Reader r = Reader(payload)
    cdef int rdbtype = r.take(1)[0]
    if rdbtype == RDB_TYPE_STRING:
        return r.string()
    if rdbtype in STREAM_TYPES:
        return read_stream(r, rdbtype)
    if rdbtype in COLLECTION_TYPES:
        return load_collection(r, rdbtype, limits)
    raise PayloadError(f"unsupported RDB type {rdbtype}")

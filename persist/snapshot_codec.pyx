# cython: boundscheck=False, wraparound=False, cdivision=True
"""The engine's state as snapshot records and back, and as RESP commands.

Walks streams and groups at C level: stream entries are copied from the nodes
without Python objects, pending entries straight from the group's PEL tree.

Records (msgpack arrays; snapshot.py frames them into checksummed lz4 blocks):

    [DB, index]                           the database the keys that follow are in
    [STRING, key, value, expire]          expire: absolute ms, or None
    [VALUE, key, type, items, expire]     a collection (list, hash, set, zset...):
                                          type is its TYPE name, items its to_record()
                                          (engine/core/value_types.py)
    [STREAM, key, expire, length, last_ms, last_seq, first_ms, first_seq,
     max_deleted_ms, max_deleted_seq, entries_added, groups, node_sizes]
                                          node_sizes: each node's live entries, as
                                          varints, so that nodes load as they were
                                          (files without it fill nodes to the limits);
                                          a node with none (left so by a MINID trim)
                                          is 0, then its last entry's ms and seq
    [ENTRIES, count, chunk]               the stream's next `count` entries
    [IDMP, duration, maxsize, iids_added, iids_duplicates, producers]
                                          the stream's idempotent-production state
                                          (engine/core/idmp.py), after its entries and
                                          only when it has one; producers:
                                          [[pid, [iid, ms, seq, iid, ms, seq...]]...],
                                          each producer's iids oldest first
    [GROUP, name, last_ms, last_seq, entries_read, consumers, pending]
                                          consumers: [[name, seen_time, active_time]...]
    [PENDING, count, chunk]               the group's next `count` PEL entries
    [END, keys, streams, entries, groups, pending]     totals, last record of a file
    [FUNCTIONS, [code, ...]]              the engine's function libraries (the code the
                                          engine gave, handed back to it as it was);
                                          first in a file, only when there are any

A stream's ENTRIES records follow its STREAM record, then its IDMP record if any
(files without IDMP records are those of before Redis 8.6's IDMP; they load as they
are, and the format version did not change), then each group's GROUP record
is followed by its PENDING records, all in ID order. Chunks are sequences of LEB128
varints and strings (a varint length, then the bytes); each chunk stands alone:

    id       ms_delta, seq_field relative to the chunk's previous ID (0-0 before the
             first): ms = prev.ms + ms_delta; seq = prev.seq + 1 + seq_field when
             ms_delta is 0, else seq_field. IDs strictly increase by construction.
    entry    id, kind, strings: kind n >= 1 is n field names then n values; kind 0
             is values only, with the field names of the chunk's previous entry.
    pending  id, delivery time (zigzag delta from the chunk's previous one, 0 before
             the first), delivery count (zigzag), owner (index into the consumers).

Loading (StateLoader) builds fresh Database objects, checking every record, and
moves them into the engine only once the END record has been seen.
"""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE, PyBytes_FromStringAndSize
from libc.stdint cimport (uint8_t, uint32_t, int32_t, uint64_t, int64_t, INT64_MIN, INT64_MAX,
                          INT32_MAX)
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy, memset

from engine.resp.writer cimport WBuf, wb_reserve, ll_text, put_lit, put_hdr, put_bulk
from engine.core.streamid cimport StreamID, id_cmp, id_decode, id_write
from engine.core.stream cimport (Stream, StreamIter, stream_iter_start, stream_iter_next,
                            stream_iter_stop, stream_iter_raw, stored_string, StreamNode,
                            stream_node_last_id)
from engine.core.groups cimport (ConsumerGroup, Consumer, PendingEntry, pe_time, pe_count,
                            ENTRIES_READ_UNKNOWN)
from engine.core.keyspace cimport Database
from engine.core.value_types import VALUE_TYPES, COLLECTION_CLASSES
from engine.formats.dump_payload import RDB_VERSION as REDIS7_RDB_VERSION
from engine.formats.rdb_value import dump_value
from engine.core.radix cimport RadixIter, radix_iter_init, radix_seek, radix_next, RADIX_FIRST
from engine.core.idmp import (IdmpState, DURATION_MIN, DURATION_MAX, MAXSIZE_MIN,
                              MAXSIZE_MAX)

cdef enum:
    REC_DB = 1
    REC_STRING = 2
    REC_STREAM = 3
    REC_ENTRIES = 4
    REC_GROUP = 5
    REC_PENDING = 6
    REC_END = 7
    REC_FUNCTIONS = 8
    REC_IDMP = 9
    REC_VALUE = 10

DB, STRING, STREAM, ENTRIES, GROUP, PENDING, END, FUNCTIONS, IDMP, VALUE = (
    REC_DB, REC_STRING, REC_STREAM, REC_ENTRIES, REC_GROUP, REC_PENDING, REC_END, REC_FUNCTIONS,
    REC_IDMP, REC_VALUE)

# Raw bytes per ENTRIES / PENDING chunk (a chunk ends after the entry crossing it).
CHUNK_BYTES = 128 * 1024

cdef uint64_t U64_MAX = 0xffffffffffffffff
cdef int64_t COUNT_MAX = (<int64_t>1 << 47) - 1     # delivery counts are signed 48-bit


class RecordError(ValueError):
    """A record that passed its checksum but does not describe a valid state."""


# ---------------------------------------------------------------------------------
# Varints and chunks, in a WBuf (engine/resp/writer.pxd: the one growable byte buffer)

cdef inline int buf_varint(WBuf* b, uint64_t v) except -1:
    cdef uint8_t* p
    wb_reserve(b, 10)
    p = <uint8_t*>b.data + b.len
    while v >= 0x80:
        p[0] = <uint8_t>(v | 0x80)
        v >>= 7
        p += 1
    p[0] = <uint8_t>v
    b.len = <char*>(p + 1) - b.data
    return 0


cdef inline bytes buf_take(WBuf* b):
    cdef bytes out = PyBytes_FromStringAndSize(b.data, b.len)
    b.len = 0
    return out


cdef inline uint64_t zigzag(int64_t v) noexcept nogil:
    return (<uint64_t>v << 1) ^ <uint64_t>(v >> 63)


cdef inline int64_t unzigzag(uint64_t z) noexcept nogil:
    return <int64_t>((z >> 1) ^ (0 - (z & 1)))


cdef inline const uint8_t* get_varint(const uint8_t* p, const uint8_t* end,
                                      uint64_t* out) noexcept nogil:
    """Reads a varint; NULL when it runs past `end` or beyond 64 bits."""
    cdef uint64_t v = 0, b
    cdef unsigned int shift = 0
    while p < end:
        b = p[0]
        p += 1
        if shift == 63 and b > 1:
            return NULL
        v |= (b & 0x7f) << shift
        if not (b & 0x80):
            out[0] = v
            return p
        shift += 7
    return NULL


cdef inline const uint8_t* skip_string(const uint8_t* p) noexcept nogil:
    """Past one trusted string (engine memory)."""
    cdef uint64_t n = p[0] & 0x7f
    cdef unsigned int shift = 7
    while p[0] & 0x80:
        p += 1
        n |= <uint64_t>(p[0] & 0x7f) << shift
        shift += 7
    return p + 1 + n


cdef inline int put_id(WBuf* b, StreamID* prev, const StreamID* id) except -1:
    if id_cmp(id, prev) <= 0:
        raise ValueError("IDs out of order in a stream or PEL")
    if id.ms == prev.ms:
        buf_varint(b, 0)
        buf_varint(b, id.seq - prev.seq - 1)
    else:
        buf_varint(b, id.ms - prev.ms)
        buf_varint(b, id.seq)
    prev[0] = id[0]
    return 0


cdef inline const uint8_t* get_id(const uint8_t* p, const uint8_t* end,
                                  StreamID* prev) noexcept nogil:
    """The chunk's next ID into *prev; NULL when malformed or out of range."""
    cdef uint64_t msd, sf
    p = get_varint(p, end, &msd)
    if p == NULL:
        return NULL
    p = get_varint(p, end, &sf)
    if p == NULL:
        return NULL
    if msd == 0:
        if sf >= U64_MAX - prev.seq:
            return NULL
        prev.seq += sf + 1
    else:
        if msd > U64_MAX - prev.ms:
            return NULL
        prev.ms += msd
        prev.seq = sf
    return p


cdef inline const uint8_t* get_span(const uint8_t* p, const uint8_t* end,
                                    uint64_t* n) noexcept nogil:
    """Start of the string at p (*n bytes long); NULL when it runs past `end`."""
    p = get_varint(p, end, n)
    if p == NULL or n[0] > <uint64_t>(end - p):
        return NULL
    return p


cdef inline bytes span_bytes(const uint8_t* s, uint64_t n):
    return PyBytes_FromStringAndSize(<const char*>s, <Py_ssize_t>n)


cdef struct ChunkCursor:
    const uint8_t* p        # the next item
    const uint8_t* end
    StreamID id             # the item read last (IDs are deltas from it)
    int64_t time            # PENDING: the delivery time read last (likewise)
    uint64_t npairs         # ENTRIES: field pairs of the entry read last
    const uint8_t* names    # ENTRIES: where that entry's field names start


# ENTRIES decoded column-wise into native-endian buffers (Arrow's layout): the IDs'
# parts as int64, per entry the running count of field pairs, and the field names and
# values each as one run of bytes with int32 end offsets.
cdef struct EntryColumns:
    WBuf ms
    WBuf seq
    WBuf pair_ends
    WBuf names
    WBuf name_ends
    WBuf values
    WBuf value_ends


cdef struct PendingFields:
    int64_t count
    uint64_t owner          # index into the group's consumers


cdef bytes chunk_record(list rec, str kind, str count_name, uint64_t* count):
    """An ENTRIES or PENDING record: [type, count, chunk]."""
    expect(rec, 3, kind)
    count[0] = as_u64(rec[1], count_name)
    return as_bytes(rec[2], kind + " chunk")


cdef inline void chunk_start(ChunkCursor* c, bytes chunk) noexcept:
    c.p = <const uint8_t*>PyBytes_AS_STRING(chunk)
    c.end = c.p + PyBytes_GET_SIZE(chunk)
    c.id.ms = c.id.seq = 0
    c.time = 0
    c.npairs = 0
    c.names = NULL


cdef int chunk_end(ChunkCursor* c, str what) except -1:
    if c.p != c.end:
        raise RecordError(f"{what} chunk has trailing bytes")
    return 0


cdef inline int put_int(WBuf* b, const void* v, size_t size) except -1:
    wb_reserve(b, size)
    memcpy(b.data + b.len, v, size)
    b.len += size
    return 0


cdef int put_column_string(WBuf* data, WBuf* ends, const uint8_t* s, uint64_t n) except -1:
    """One string onto a column: its bytes, then its end offset."""
    cdef int32_t end
    if <uint64_t>data.len + n > INT32_MAX:
        raise RecordError("an entries chunk holds more than 2 GiB of names or values")
    put_lit(data, <const char*>s, <Py_ssize_t>n)
    end = <int32_t>data.len
    return put_int(ends, &end, sizeof(end))


cdef uint64_t next_entry(ChunkCursor* c, list fields, EntryColumns* cols) except? 0:
    """The next entry of an ENTRIES chunk (the one format reader, for loading, dumps
    and columnar readers): sets c.id and returns npairs. With cols NULL it fills
    fields[0:2*npairs] with the field/value bytes (names kept from the entry before
    when it reuses them; fields is resized when the count changes); otherwise it
    appends the names and values to cols."""
    cdef const uint8_t* p = get_id(c.p, c.end, &c.id)
    cdef const uint8_t* q
    cdef uint64_t kind, slen, j
    if p == NULL:
        raise RecordError("bad entry ID")
    p = get_varint(p, c.end, &kind)
    if p == NULL:
        raise RecordError("bad entry")
    if kind == 0:
        if c.npairs == 0:
            raise RecordError("an entry reuses field names before any")
        if cols != NULL:
            q = c.names
            for j in range(c.npairs):       # read once already: well formed
                q = get_span(q, c.end, &slen)
                put_column_string(&cols.names, &cols.name_ends, q, slen)
                q += slen
    else:
        if kind > <uint64_t>(c.end - p) // 2:
            raise RecordError("entry field count beyond the chunk")
        c.npairs = kind
        c.names = p
        if cols == NULL and <uint64_t>len(fields) != 2 * kind:
            fields[:] = [None] * <Py_ssize_t>(2 * kind)
        for j in range(kind):
            q = get_span(p, c.end, &slen)
            if q == NULL:
                raise RecordError("bad field name")
            if cols == NULL:
                fields[2 * j] = span_bytes(q, slen)
            else:
                put_column_string(&cols.names, &cols.name_ends, q, slen)
            p = q + slen
    for j in range(c.npairs):
        q = get_span(p, c.end, &slen)
        if q == NULL:
            raise RecordError("bad field value")
        if cols == NULL:
            fields[2 * j + 1] = span_bytes(q, slen)
        else:
            put_column_string(&cols.values, &cols.value_ends, q, slen)
        p = q + slen
    c.p = p
    return c.npairs


cdef int next_pending(ChunkCursor* c, PendingFields* out) except -1:
    """The next entry of a PENDING chunk: sets c.id and c.time (both delta-decoded)
    and *out, with the time and count ranges checked."""
    cdef uint64_t tz, cz
    cdef int64_t delta
    cdef const uint8_t* p = get_id(c.p, c.end, &c.id)
    if p == NULL:
        raise RecordError("bad pending entry ID")
    p = get_varint(p, c.end, &tz)
    if p != NULL:
        p = get_varint(p, c.end, &cz)
    if p != NULL:
        p = get_varint(p, c.end, &out.owner)
    if p == NULL:
        raise RecordError("bad pending entry")
    delta = unzigzag(tz)
    if delta > INT64_MAX - c.time or c.time + delta < 0:     # times are 0 .. INT64_MAX
        raise RecordError("delivery time out of range")
    c.time += delta
    out.count = unzigzag(cz)
    if out.count > COUNT_MAX or out.count < -COUNT_MAX - 1:
        raise RecordError("delivery count out of range")
    c.p = p
    return 0


# ---------------------------------------------------------------------------------
# Writing: the engine's state as records

cdef class EntryChunks:
    """Cuts a stream's live entries into ENTRIES chunks."""
    cdef Stream stream
    cdef StreamIter it
    cdef WBuf buf
    cdef readonly uint64_t count     # entries in the last chunk

    def __cinit__(self, Stream stream):
        cdef StreamID lo, hi
        lo.ms = lo.seq = 0
        hi.ms = hi.seq = U64_MAX
        self.stream = stream
        stream_iter_start(&self.it, stream, &lo, &hi, 0)

    def __dealloc__(self):
        free(self.buf.data)

    cdef object next_chunk(self, size_t target):
        """The next chunk as bytes (self.count entries), or None after the last."""
        cdef StreamID prev, id
        cdef const uint8_t* names
        cdef const uint8_t* prev_names = NULL
        cdef const uint8_t* values
        cdef const uint8_t* values_end
        cdef uint64_t npairs
        prev.ms = prev.seq = 0
        self.count = 0
        while <size_t>self.buf.len < target and stream_iter_next(&self.it, &id):
            npairs = stream_iter_raw(&self.it, &names, &values, &values_end)
            put_id(&self.buf, &prev, &id)
            if names == NULL:               # field, value, ...: names first here
                prev_names = NULL
                buf_varint(&self.buf, npairs)
                put_alternate(&self.buf, values, npairs, 0)
                put_alternate(&self.buf, values, npairs, 1)
            else:
                if names == prev_names:
                    buf_varint(&self.buf, 0)
                else:
                    buf_varint(&self.buf, npairs)
                    put_strings(&self.buf, names, npairs)
                    prev_names = names
                put_lit(&self.buf, <const char*>values, values_end - values)
            self.count += 1
        if self.count == 0:
            stream_iter_stop(&self.it)
            return None
        return buf_take(&self.buf)


cdef int put_strings(WBuf* b, const uint8_t* p, uint64_t n) except -1:
    cdef const uint8_t* start = p
    while n:
        p = skip_string(p)
        n -= 1
    return put_lit(b, <const char*>start, p - start)


cdef int put_alternate(WBuf* b, const uint8_t* p, uint64_t npairs, int odd) except -1:
    """Copies strings 0, 2, 4... (odd: 1, 3, 5...) of 2*npairs strings."""
    cdef const uint8_t* q
    cdef uint64_t i
    for i in range(npairs):
        if odd:
            p = skip_string(p)
        q = skip_string(p)
        put_lit(b, <const char*>p, q - p)
        p = q if odd else skip_string(q)
    return 0


cdef class PendingChunks:
    """Cuts a group's PEL into PENDING chunks; owners as indexes into `consumers`."""
    cdef ConsumerGroup group
    cdef RadixIter it
    cdef int more
    cdef uint32_t* index_of          # consumer id -> position in `consumers`
    cdef WBuf buf
    cdef readonly uint64_t count

    def __cinit__(self, ConsumerGroup group, list consumers):
        cdef Py_ssize_t i
        self.group = group
        self.index_of = <uint32_t*>malloc((len(group.consumer_by_id) + 1) * sizeof(uint32_t))
        if self.index_of == NULL:
            raise MemoryError()
        for i in range(len(consumers)):
            self.index_of[(<Consumer>consumers[i]).id] = <uint32_t>i
        radix_iter_init(&self.it, group.pel)
        self.more = radix_seek(&self.it, RADIX_FIRST, NULL)

    def __dealloc__(self):
        free(self.index_of)
        free(self.buf.data)

    cdef object next_chunk(self, size_t target):
        cdef StreamID prev, id
        cdef PendingEntry* pe
        cdef int64_t prev_time = 0, t
        prev.ms = prev.seq = 0
        self.count = 0
        while self.more and <size_t>self.buf.len < target:
            id_decode(self.it.key, &id)
            pe = <PendingEntry*>self.it.value
            put_id(&self.buf, &prev, &id)
            t = <int64_t>pe_time(pe)
            buf_varint(&self.buf, zigzag(t - prev_time))
            prev_time = t
            buf_varint(&self.buf, zigzag(pe_count(pe)))
            buf_varint(&self.buf, self.index_of[pe.consumer_id])
            self.count += 1
            self.more = radix_next(&self.it)
        if self.count == 0:
            return None
        return buf_take(&self.buf)


def state_records(engine, size_t chunk_bytes=CHUNK_BYTES):
    """Yields the engine's whole state as records (module docstring), END last.
    The engine must not change while this runs (SAVE, or a forked child)."""
    cdef Database db
    cdef uint64_t keys = 0, streams = 0, entries = 0, groups = 0, pending = 0
    codes = engine.function_codes()
    if codes:
        yield [REC_FUNCTIONS, codes]
    for db in engine.databases:
        if not len(db):
            continue
        yield [REC_DB, db.index]
        for key, value, when in db.items():
            keys += 1
            if type(value) is bytes:
                yield [REC_STRING, key, value, when]
                continue
            if type(value) in COLLECTION_CLASSES:
                yield [REC_VALUE, key, value.TYPE_NAME, value.to_record(), when]
                continue
            if type(value) is not Stream:
                raise TypeError(f"cannot save a {type(value).__name__} value")
            streams += 1
            yield stream_header(key, <Stream>value, when)
            chunks = EntryChunks(value)
            while True:
                chunk = chunks.next_chunk(chunk_bytes)
                if chunk is None:
                    break
                entries += chunks.count
                yield [REC_ENTRIES, chunks.count, chunk]
            if (<Stream>value).idmp is not None:
                yield idmp_record((<Stream>value).idmp)
            for group in (<Stream>value).groups.values():
                groups += 1
                consumers = list((<ConsumerGroup>group).consumers.values())
                yield group_header(group, consumers)
                pel = PendingChunks(group, consumers)
                while True:
                    chunk = pel.next_chunk(chunk_bytes)
                    if chunk is None:
                        break
                    pending += pel.count
                    yield [REC_PENDING, pel.count, chunk]
    yield [REC_END, keys, streams, entries, groups, pending]


cdef list stream_header(bytes key, Stream s, object expire):
    return [REC_STREAM, key, expire, s.length, s.last_id.ms, s.last_id.seq,
            s.first_id.ms, s.first_id.seq, s.max_deleted_id.ms, s.max_deleted_id.seq,
            s.entries_added, len(s.groups), node_sizes(s)]


cdef bytes node_sizes(Stream s):
    """The live entries of each node, in order, as varints: where the nodes begin. The
    snapshot keeps no tombstones: a node with none live (an exact MINID trim can leave
    one, as in Redis) comes back holding one, its last entry's ID."""
    cdef RadixIter it
    cdef WBuf b
    cdef StreamNode* node
    cdef StreamID last
    memset(&b, 0, sizeof(WBuf))
    radix_iter_init(&it, s.nodes)
    cdef int more = radix_seek(&it, RADIX_FIRST, NULL)
    while more:
        node = (<StreamNode**>it.value)[0]
        buf_varint(&b, node.live)
        if not node.live:
            stream_node_last_id(node, &last)
            buf_varint(&b, last.ms)
            buf_varint(&b, last.seq)
        more = radix_next(&it)
    cdef bytes sizes = buf_take(&b)
    free(b.data)
    return sizes


cdef list idmp_record(state):
    return [REC_IDMP, state.duration, state.maxsize, state.iids_added, state.iids_duplicates,
            [[pid, [x for iid, (ms, seq) in iids.items() for x in (iid, ms, seq)]]
             for pid, iids in state.producers.items()]]


cdef list group_header(ConsumerGroup g, list consumers):
    return [REC_GROUP, g.name, g.last_id.ms, g.last_id.seq, g.entries_read,
            [[(<Consumer>c).name, (<Consumer>c).seen_time, (<Consumer>c).active_time]
             for c in consumers],
            g.pending_count()]


# ---------------------------------------------------------------------------------
# Loading: records into fresh databases

cdef inline void expect(list record, Py_ssize_t n, str what) except *:
    if len(record) != n:
        raise RecordError(f"{what} record has {len(record)} fields, not {n}")


cdef inline uint64_t as_u64(object v, str what) except? 0xffffffffffffffff:
    if type(v) is not int or v < 0 or v > U64_MAX:
        raise RecordError(f"{what} is not an unsigned 64-bit integer")
    return v


cdef inline int64_t as_i64(object v, str what) except? -1:
    if type(v) is not int or v < INT64_MIN or v > 0x7fffffffffffffff:
        raise RecordError(f"{what} is not a 64-bit integer")
    return v


cdef inline bytes as_bytes(object v, str what):
    if type(v) is not bytes:
        raise RecordError(f"{what} is not a byte string")
    return v


cdef inline StreamID as_id(object ms, object seq, str what) except *:
    cdef StreamID sid
    sid.ms = as_u64(ms, what)
    sid.seq = as_u64(seq, what)
    return sid


cdef class StateLoader:
    """Rebuilds databases from records fed in file order (module docstring),
    checking each; `install` moves them into an engine after the END record.
    With keep=False (verification) each key is dropped once checked."""
    cdef dict dbs                   # index -> fresh Database
    cdef Py_ssize_t databases       # indexes allowed: [0, databases)
    cdef bint keep
    cdef set seen                   # keys of the current database (keep=False)
    cdef Database db
    cdef Py_ssize_t db_index
    cdef bytes key
    cdef Stream stream
    cdef uint64_t entries_left
    cdef uint64_t groups_left
    cdef StreamID last_entry
    cdef ConsumerGroup group
    cdef list consumers
    cdef uint64_t pending_left
    cdef StreamID last_pending
    cdef list fields                # reused field/value list for Stream.append
    cdef uint64_t node_max_bytes, node_max_entries
    cdef list node_sizes            # the current stream's, or None: fill to the limits
    cdef Py_ssize_t node_at         # the next node's index in node_sizes
    cdef uint64_t node_left         # entries still to go into the current node
    cdef readonly uint64_t keys, streams, entries, groups, pending
    cdef readonly bint ended
    cdef readonly list functions    # the FUNCTIONS record's codes
    cdef object limits              # the engine's EncodingLimits, or None: the defaults

    def __init__(self, Py_ssize_t databases, uint64_t node_max_bytes,
                 uint64_t node_max_entries, bint keep=True, object limits=None):
        self.dbs = {}
        self.limits = limits
        self.functions = []
        self.databases = databases
        self.keep = keep
        self.db_index = -1
        self.fields = []
        self.node_max_bytes = node_max_bytes
        self.node_max_entries = node_max_entries

    def feed(self, object record) -> None:
        """Applies one record; RecordError when it is malformed or out of place."""
        cdef list rec
        if type(record) is not list or not record:
            raise RecordError("a record is not a non-empty array")
        if self.ended:
            raise RecordError("records follow the end record")
        rec = record
        kind = rec[0]
        if type(kind) is not int:
            raise RecordError("record type is not an integer")
        if kind == REC_ENTRIES:
            self.load_entries(rec)
        elif kind == REC_PENDING:
            self.load_pending(rec)
        elif kind == REC_GROUP:
            self.load_group(rec)
        elif kind == REC_IDMP:
            self.load_idmp(rec)
        else:
            self.close_key()
            if kind == REC_STRING:
                self.load_string(rec)
            elif kind == REC_STREAM:
                self.load_stream(rec)
            elif kind == REC_VALUE:
                self.load_value(rec)
            elif kind == REC_DB:
                self.load_db(rec)
            elif kind == REC_END:
                self.load_end(rec)
            elif kind == REC_FUNCTIONS:
                self.load_functions(rec)
            else:
                raise RecordError(f"unknown record type {kind}")

    def install(self, engine) -> None:
        """Replaces the content of every database of `engine` with what was loaded
        (the Database objects stay: sessions hold them)."""
        cdef Database dst, src
        if not self.ended:
            raise RecordError("no end record")
        for dst in engine.databases:
            src = self.dbs.get(dst.index)
            if src is None:
                src = Database(dst.index)
            dst.take(src)
        engine.restore_function_codes(self.functions)

    # -- keys ----------------------------------------------------------------------

    cdef int load_db(self, list rec) except -1:
        expect(rec, 2, "database")
        index = as_i64(rec[1], "database index")
        if index <= self.db_index:
            raise RecordError(f"database {index} is out of order")
        if index >= self.databases:
            raise RecordError(f"database {index} is out of range (there are "
                              f"{self.databases})")
        self.db_index = index
        self.db = Database(index)
        self.dbs[index] = self.db
        self.seen = set()
        return 0

    cdef int new_key(self, object key, object expire) except -1:
        if self.db is None:
            raise RecordError("a key before any database record")
        self.key = as_bytes(key, "key")
        if self.key in self.db or self.key in self.seen:
            raise RecordError(f"key {self.key!r} appears twice")
        if expire is not None:
            as_i64(expire, "expiry")
        self.keys += 1
        return 0

    cdef int store(self, object value, object expire) except -1:
        self.db.store(self.key, value)
        if expire is not None:
            self.db.set_expire(self.key, expire)
        return 0

    cdef int close_key(self) except -1:
        """Checks that the current stream got everything it announced."""
        if self.stream is not None:
            if self.entries_left or self.groups_left or self.pending_left:
                raise RecordError(f"stream {self.key!r} ends early")
            self.stream = None
            self.group = None
            self.consumers = None
        if self.key is not None and not self.keep:
            self.seen.add(self.key)
            self.db.remove(self.key)
        self.key = None
        return 0

    cdef int load_string(self, list rec) except -1:
        expect(rec, 4, "string")
        self.new_key(rec[1], rec[3])
        self.store(as_bytes(rec[2], "string value"), rec[3])
        return 0

    cdef int load_value(self, list rec) except -1:
        expect(rec, 5, "value")
        self.new_key(rec[1], rec[4])
        cls = VALUE_TYPES.get(rec[2]) if type(rec[2]) is bytes else None
        if cls is None:
            raise RecordError(f"unknown value type {rec[2]!r}")
        if type(rec[3]) is not list:
            raise RecordError(f"{rec[2].decode()} value {self.key!r} holds no item list")
        try:
            value = cls.from_record(rec[3], self.limits)
        except ValueError as e:
            raise RecordError(f"{rec[2].decode()} value {self.key!r}: {e}") from None
        self.store(value, rec[4])
        return 0

    cdef int load_stream(self, list rec) except -1:
        cdef Stream s = Stream()
        if len(rec) != 13:
            expect(rec, 12, "stream")       # a file of before node sizes were kept
        self.new_key(rec[1], rec[2])
        self.entries_left = as_u64(rec[3], "stream length")
        s.last_id = as_id(rec[4], rec[5], "last ID")
        s.first_id = as_id(rec[6], rec[7], "first ID")
        s.max_deleted_id = as_id(rec[8], rec[9], "max deleted ID")
        s.entries_added = as_u64(rec[10], "entries added")
        self.groups_left = as_u64(rec[11], "group count")
        if s.entries_added < self.entries_left:
            raise RecordError("entries added is below the stream's length")
        if id_cmp(&s.max_deleted_id, &s.last_id) > 0:
            raise RecordError("max deleted ID is above the last ID")
        self.last_entry.ms = self.last_entry.seq = 0
        self.node_sizes = self.read_node_sizes(rec[12]) if len(rec) == 13 else None
        self.node_at = 0
        self.node_left = 0
        self.stream = s
        self.streams += 1
        self.store(s, rec[2])
        self.tombstone_nodes()
        return 0

    # -- entries -------------------------------------------------------------------

    cdef int load_entries(self, list rec) except -1:
        cdef uint64_t count
        cdef bytes chunk = chunk_record(rec, "entries", "entry count", &count)
        if self.stream is None or self.group is not None:
            raise RecordError("entries outside a stream, or after its groups")
        if count == 0 or count > self.entries_left:
            raise RecordError(f"stream {self.key!r} gets more entries than it announced")
        try:
            self.append_chunk(chunk, count)
        except ValueError as e:     # Stream.append: an entry too large
            raise RecordError(f"stream {self.key!r}: {e}") from None
        self.entries_left -= count
        self.entries += count
        if self.entries_left == 0:
            self.tombstone_nodes()
        if self.entries_left == 0 and id_cmp(&self.last_entry, &self.stream.last_id) > 0:
            raise RecordError(f"stream {self.key!r} has entries above its last ID")
        return 0

    cdef list read_node_sizes(self, object sizes):
        """The stream's node sizes (live entries each, summing to its length; a node
        with none is its last entry's ID, a tuple)."""
        cdef const uint8_t* p
        cdef const uint8_t* end
        cdef uint64_t v, ms, seq, total = 0
        cdef list out = []
        if type(sizes) is not bytes:
            raise RecordError("stream node sizes are not a byte string")
        p = <const uint8_t*>PyBytes_AS_STRING(sizes)
        end = p + PyBytes_GET_SIZE(sizes)
        while p < end:
            p = get_varint(p, end, &v)
            if p != NULL and v == 0:
                p = get_varint(p, end, &ms)
                if p != NULL:
                    p = get_varint(p, end, &seq)
                if p == NULL:
                    raise RecordError("bad stream node sizes")
                out.append((ms, seq))
                continue
            if p == NULL or v > self.entries_left - total:
                raise RecordError("bad stream node sizes")
            total += v
            out.append(v)
        if total != self.entries_left:
            raise RecordError("stream node sizes do not add up to its length")
        return out

    cdef bint opens_node(self) except -1:
        """Whether the next entry opens a node (when the file keeps node sizes)."""
        if self.node_left:
            self.node_left -= 1
            return 0
        self.tombstone_nodes()
        self.node_left = <uint64_t>self.node_sizes[self.node_at] - 1
        self.node_at += 1
        return 1

    cdef int tombstone_nodes(self) except -1:
        """The nodes without live entries due before the next node of live ones (or
        at the end), each rebuilt as one tombstone."""
        cdef StreamID id
        while self.node_sizes is not None and self.node_at < len(self.node_sizes) \
                and type(self.node_sizes[self.node_at]) is tuple:
            ms, seq = self.node_sizes[self.node_at]
            id.ms, id.seq = ms, seq
            if id_cmp(&id, &self.last_entry) <= 0 or id_cmp(&id, &self.stream.last_id) > 0:
                raise RecordError(f"stream {self.key!r}: an empty node's ID is out of order")
            self.stream.append_tombstone(&id)
            self.last_entry = id
            self.node_at += 1
        return 0

    cdef int append_chunk(self, bytes chunk, uint64_t count) except -1:
        cdef Stream s = self.stream
        cdef ChunkCursor c
        cdef uint64_t i, npairs
        chunk_start(&c, chunk)
        for i in range(count):
            npairs = next_entry(&c, self.fields, NULL)
            if id_cmp(&c.id, &self.last_entry) <= 0:
                raise RecordError("entry IDs do not increase")
            if s.length == 0 and id_cmp(&c.id, &s.first_id) != 0:
                raise RecordError("the first ID is not the first entry's")
            if self.node_sizes is None:         # nodes filled to the node limits
                s.append(&c.id, self.fields, 0, <Py_ssize_t>npairs, self.node_max_bytes,
                         self.node_max_entries)
            else:                               # limits 0 = none; 1 entry: a new node
                s.append(&c.id, self.fields, 0, <Py_ssize_t>npairs, 0,
                         1 if self.opens_node() else 0)
            self.last_entry = c.id
        chunk_end(&c, "entries")
        return 0

    # -- idempotent production ------------------------------------------------------

    cdef int load_idmp(self, list rec) except -1:
        cdef StreamID id
        expect(rec, 6, "idmp")
        if (self.stream is None or self.entries_left or self.group is not None
                or self.stream.idmp is not None):
            raise RecordError("an IDMP record outside a stream, before its entries or "
                              "after its groups")
        duration = as_i64(rec[1], "IDMP duration")
        maxsize = as_i64(rec[2], "IDMP maxsize")
        if not (DURATION_MIN <= duration <= DURATION_MAX and MAXSIZE_MIN <= maxsize <= MAXSIZE_MAX):
            raise RecordError("IDMP settings out of range")
        state = IdmpState(duration, maxsize)
        if type(rec[5]) is not list:
            raise RecordError("IDMP producers are not an array")
        for item in rec[5]:
            if type(item) is not list or len(item) != 2 or type(item[1]) is not list \
                    or len(item[1]) % 3:
                raise RecordError("an IDMP producer is not [pid, [iid, ms, seq...]]")
            pid = as_bytes(item[0], "producer ID")
            if pid in state.producers or not item[1]:
                raise RecordError(f"IDMP producer {pid!r} appears twice or is empty")
            iids = state.producers[pid] = {}
            flat = item[1]
            for j in range(0, len(flat), 3):
                id = as_id(flat[j + 1], flat[j + 2], "IDMP entry ID")
                iids[as_bytes(flat[j], "idempotent ID")] = (id.ms, id.seq)
            if len(iids) * 3 != len(flat):
                raise RecordError(f"IDMP producer {pid!r} has an idempotent ID twice")
            state.tracked += len(iids)
        state.iids_added = as_u64(rec[3], "IDMP iids added")
        state.iids_duplicates = as_u64(rec[4], "IDMP duplicates")
        self.stream.idmp = state
        return 0

    # -- groups --------------------------------------------------------------------

    cdef int load_group(self, list rec) except -1:
        cdef ConsumerGroup g
        cdef Consumer c
        cdef StreamID last
        cdef int64_t entries_read
        expect(rec, 7, "group")
        if self.stream is None or self.entries_left or self.pending_left:
            raise RecordError("a group outside a stream or before its entries")
        if self.groups_left == 0:
            raise RecordError(f"stream {self.key!r} gets more groups than it announced")
        name = as_bytes(rec[1], "group name")
        if name in self.stream.groups:
            raise RecordError(f"group {name!r} appears twice")
        last = as_id(rec[2], rec[3], "group last ID")
        # any value: the counter wraps past INT64_MAX, as Redis's does
        entries_read = as_i64(rec[4], "entries read")
        if type(rec[5]) is not list:
            raise RecordError("consumers are not an array")
        g = ConsumerGroup(name, last.ms, last.seq, entries_read)
        self.consumers = []
        for item in rec[5]:
            if type(item) is not list or len(item) != 3:
                raise RecordError("a consumer is not [name, seen, active]")
            cname = as_bytes(item[0], "consumer name")
            if g.lookup_consumer(cname) is not None:
                raise RecordError(f"consumer {cname!r} appears twice")
            c = g.create_consumer(cname, as_i64(item[1], "seen time"))
            c.active_time = as_i64(item[2], "active time")
            self.consumers.append(c)
        self.pending_left = as_u64(rec[6], "pending count")
        self.last_pending.ms = self.last_pending.seq = 0
        self.stream.groups[name] = g
        self.group = g
        self.groups_left -= 1
        self.groups += 1
        return 0

    cdef int load_pending(self, list rec) except -1:
        cdef uint64_t count
        cdef bytes chunk = chunk_record(rec, "pending", "pending count", &count)
        if self.group is None:
            raise RecordError("pending entries outside a group")
        if count == 0 or count > self.pending_left:
            raise RecordError(f"group {self.group.name!r} gets more pending entries "
                              "than it announced")
        self.add_chunk(chunk, count)
        self.pending_left -= count
        self.pending += count
        return 0

    cdef int add_chunk(self, bytes chunk, uint64_t count) except -1:
        cdef ConsumerGroup g = self.group
        cdef list consumers = self.consumers
        cdef uint64_t nconsumers = len(consumers), i
        cdef ChunkCursor c
        cdef PendingFields pe
        chunk_start(&c, chunk)
        for i in range(count):
            next_pending(&c, &pe)
            if id_cmp(&c.id, &self.last_pending) <= 0:
                raise RecordError("pending entry IDs do not increase")
            if pe.owner >= nconsumers:
                raise RecordError("pending entry owned by an unknown consumer")
            g.add_pending(&c.id, <Consumer>consumers[pe.owner], <uint64_t>c.time, pe.count)
            self.last_pending = c.id
        chunk_end(&c, "pending")
        return 0

    cdef int load_functions(self, list rec) except -1:
        expect(rec, 2, "functions")
        if self.db_index != -1 or self.functions:
            raise RecordError("the functions record is not the first")
        if type(rec[1]) is not list or not rec[1]:
            raise RecordError("the functions record holds no list of libraries")
        self.functions = [as_bytes(code, "a library's code") for code in rec[1]]
        return 0

    cdef int load_end(self, list rec) except -1:
        expect(rec, 6, "end")
        totals = (self.keys, self.streams, self.entries, self.groups, self.pending)
        if tuple(rec[1:]) != totals:
            raise RecordError(f"end record totals {rec[1:]} differ from the file's "
                              f"{list(totals)}")
        self.ended = True
        return 0


# ---------------------------------------------------------------------------------
# Decoding chunks for tools (dump)

def decode_entries(bytes chunk, uint64_t count) -> list:
    """[(ms, seq, [field, value, ...]), ...] of an ENTRIES chunk."""
    cdef ChunkCursor c
    cdef list fields = [], out = []
    cdef uint64_t i, npairs
    chunk_start(&c, chunk)
    for i in range(count):
        npairs = next_entry(&c, fields, NULL)
        out.append((c.id.ms, c.id.seq, fields[:2 * npairs]))
    chunk_end(&c, "entries")
    return out


def decode_entry_columns(bytes chunk, uint64_t count) -> tuple:
    """An ENTRIES chunk as column buffers (bytes, native-endian) for columnar readers:
    (ms, seq, pair_ends, names, name_ends, values, value_ends). ms and seq hold one
    int64 per entry; pair_ends one int32 per entry plus a leading 0: the field pairs
    up to and including it; names and values the bytes of every field name and value
    in order, name_ends and value_ends an int32 end offset for each plus a leading 0."""
    cdef ChunkCursor c
    cdef EntryColumns cols
    cdef uint64_t i
    cdef int64_t v
    cdef int32_t total = 0
    memset(&cols, 0, sizeof(cols))
    try:
        put_int(&cols.pair_ends, &total, sizeof(total))
        put_int(&cols.name_ends, &total, sizeof(total))
        put_int(&cols.value_ends, &total, sizeof(total))
        chunk_start(&c, chunk)
        for i in range(count):
            total += <int32_t>next_entry(&c, None, &cols)
            v = <int64_t>c.id.ms
            put_int(&cols.ms, &v, sizeof(v))
            v = <int64_t>c.id.seq
            put_int(&cols.seq, &v, sizeof(v))
            put_int(&cols.pair_ends, &total, sizeof(total))
        chunk_end(&c, "entries")
        return (buf_take(&cols.ms), buf_take(&cols.seq), buf_take(&cols.pair_ends),
                buf_take(&cols.names), buf_take(&cols.name_ends), buf_take(&cols.values),
                buf_take(&cols.value_ends))
    finally:
        free(cols.ms.data)
        free(cols.seq.data)
        free(cols.pair_ends.data)
        free(cols.names.data)
        free(cols.name_ends.data)
        free(cols.values.data)
        free(cols.value_ends.data)


def decode_pending(bytes chunk, uint64_t count) -> list:
    """[(ms, seq, delivery_time, delivery_count, owner_index), ...] of a PENDING chunk."""
    cdef ChunkCursor c
    cdef PendingFields pe
    cdef list out = []
    cdef uint64_t i
    chunk_start(&c, chunk)
    for i in range(count):
        next_pending(&c, &pe)
        out.append((c.id.ms, c.id.seq, c.time, pe.count, pe.owner))
    chunk_end(&c, "pending")
    return out


# ---------------------------------------------------------------------------------
# RESP: the state as commands that Sluice and redis-server 7.0 both replay
# (resp_base.py drives it; streams follow Redis's own AOF rewrite)

cdef enum:
    RESP_FLUSH_BYTES = 1 << 20

cdef inline int put_bulk_bytes(WBuf* b, bytes s) except -1:
    return put_bulk(b, PyBytes_AS_STRING(s), PyBytes_GET_SIZE(s))


cdef inline int put_bulk_i64(WBuf* b, int64_t v) except -1:
    cdef char text[24]
    cdef int at = ll_text(text, v)
    return put_bulk(b, text + at, 24 - at)


cdef inline int put_bulk_id(WBuf* b, const StreamID* id) except -1:
    cdef char text[41]
    return put_bulk(b, text, id_write(text, id))


cdef class RespWriter:
    """RESP commands (arrays of bulk strings) onto a binary file, through a buffer."""
    cdef WBuf buf
    cdef object sink
    cdef uint64_t flushed            # bytes handed to the file so far

    def __cinit__(self, fileobj):
        self.sink = fileobj.write

    def __dealloc__(self):
        free(self.buf.data)

    @property
    def written(self) -> int:
        """Bytes of RESP produced so far (flushed or still buffered)."""
        return self.flushed + <uint64_t>self.buf.len

    def command(self, *args) -> None:
        """One command; arguments are bytes, str (UTF-8) or int."""
        put_hdr(&self.buf, b'*', len(args))
        for arg in args:
            if type(arg) is int:
                arg = b"%d" % arg
            elif type(arg) is str:
                arg = (<str>arg).encode()
            put_bulk(&self.buf, PyBytes_AS_STRING(arg), PyBytes_GET_SIZE(arg))
        self.maybe_flush()

    def flush(self) -> None:
        if self.buf.len:
            self.flushed += <uint64_t>self.buf.len
            self.sink(buf_take(&self.buf))

    cdef int maybe_flush(self) except -1:
        if self.buf.len >= RESP_FLUSH_BYTES:
            self.flush()
        return 0

    def stream(self, bytes key, Stream s) -> None:
        """The commands that rebuild stream `s` at `key` (its TTL aside), as Redis's
        rewriteStreamObject emits them: XADDs with explicit IDs (an empty stream
        through XADD MAXLEN 0), XSETID with entries-added and max-deleted-ID, then
        per group XGROUP CREATE (ENTRIESREAD when known), one XCLAIM ... JUSTID FORCE
        per pending entry and XGROUP CREATECONSUMER for consumers without any.
        Unlike Redis, pending entries whose stream entry is gone are kept: XCLAIM
        ignores missing entries, so placeholders are added for them and removed
        afterwards (XTRIM for those below the first entry, which trimming removed,
        XDEL for the rest), then XSETID restores the counters.
        A stream whose counters XSETID or XGROUP CREATE would refuse or change
        (counters_expressible) goes as one RESTORE of its payload instead (the RDB
        version redis-server 7.0 reads), then its IDMP state."""
        cdef list dangling
        cdef ConsumerGroup g
        cdef WBuf* b = &self.buf
        if not counters_expressible(s):
            self.command(b"RESTORE", key, b"0", dump_value(s, REDIS7_RDB_VERSION))
            if s.idmp is not None:
                self.idmp(key, s.idmp, s)
            return
        dangling = dangling_ids(s)
        if s.length == 0 and not dangling:
            self.command(b"XADD", key, b"MAXLEN", b"0", b"0-1", b"x", b"y")
        else:
            self.xadds(key, s, dangling)
        self.xsetid(key, s, max(s.entries_added, s.length + len(dangling)))
        if s.idmp is not None:
            self.idmp(key, s.idmp, None)
        for g in s.groups.values():
            put_hdr(b, b'*', 7 if g.entries_read != ENTRIES_READ_UNKNOWN else 5)
            put_bulk(b, b"XGROUP", 6)
            put_bulk(b, b"CREATE", 6)
            put_bulk_bytes(b, key)
            put_bulk_bytes(b, g.name)
            put_bulk_id(b, &g.last_id)
            if g.entries_read != ENTRIES_READ_UNKNOWN:
                put_bulk(b, b"ENTRIESREAD", 11)
                put_bulk_i64(b, g.entries_read)
            self.xclaims(key, g)
            for c in g.consumers.values():
                if (<Consumer>c).pending_count() == 0:
                    self.command(b"XGROUP", b"CREATECONSUMER", key, g.name,
                                 (<Consumer>c).name)
        if dangling:
            self.drop_placeholders(key, s, dangling)
            self.xsetid(key, s, s.entries_added)

    cdef int idmp(self, bytes key, state, Stream live_only) except -1:
        """The stream's IDMP settings (XCFGSET) and tracked iids (XIDMPRECORD each,
        every producer's oldest first), as XADD IDMP logs them. The counters are not
        carried: iids-added restarts at the number of iids recorded, iids-duplicates
        at 0. redis-server 7.0 has neither command. With live_only, only iids whose
        entry is in that stream (XIDMPRECORD refuses the others)."""
        cdef StreamID id
        self.command(b"XCFGSET", key, b"IDMP-DURATION", state.duration,
                     b"IDMP-MAXSIZE", state.maxsize)
        for pid, iids in state.producers.items():
            for iid, (ms, seq) in iids.items():
                id.ms = ms
                id.seq = seq
                if live_only is None or live_only.contains(&id):
                    self.command(b"XIDMPRECORD", key, pid, iid, b"%d-%d" % (ms, seq))
        return 0

    cdef int xsetid(self, bytes key, Stream s, uint64_t entries_added) except -1:
        cdef WBuf* b = &self.buf
        put_hdr(b, b'*', 7)
        put_bulk(b, b"XSETID", 6)
        put_bulk_bytes(b, key)
        put_bulk_id(b, &s.last_id)
        put_bulk(b, b"ENTRIESADDED", 12)
        put_bulk_i64(b, <int64_t>entries_added)
        put_bulk(b, b"MAXDELETEDID", 12)
        put_bulk_id(b, &s.max_deleted_id)
        return 0

    cdef int xadds(self, bytes key, Stream s, list extra) except -1:
        """XADD key id field value... per live entry, and XADD key id x y for each
        ID of `extra` (sorted (ms, seq) tuples), merged in ID order."""
        cdef StreamIter it
        cdef StreamID lo, hi, id, other
        cdef const uint8_t* names
        cdef const uint8_t* values
        cdef const uint8_t* values_end
        cdef const char* str_
        cdef Py_ssize_t slen
        cdef uint64_t npairs, i
        cdef Py_ssize_t k = 0, nextra = len(extra)
        cdef bint more
        cdef WBuf* b = &self.buf
        lo.ms = lo.seq = 0
        hi.ms = hi.seq = U64_MAX
        stream_iter_start(&it, s, &lo, &hi, 0)
        more = stream_iter_next(&it, &id)
        while more or k < nextra:
            if k < nextra:
                other.ms, other.seq = extra[k]
                if not more or id_cmp(&other, &id) < 0:
                    put_hdr(b, b'*', 5)
                    put_bulk(b, b"XADD", 4)
                    put_bulk_bytes(b, key)
                    put_bulk_id(b, &other)
                    put_bulk(b, b"x", 1)
                    put_bulk(b, b"y", 1)
                    k += 1
                    continue
            npairs = stream_iter_raw(&it, &names, &values, &values_end)
            put_hdr(b, b'*', 3 + 2 * npairs)
            put_bulk(b, b"XADD", 4)
            put_bulk_bytes(b, key)
            put_bulk_id(b, &id)
            for i in range(npairs if names != NULL else 2 * npairs):
                if names != NULL:
                    names = stored_string(names, &str_, &slen)
                    put_bulk(b, str_, slen)
                values = stored_string(values, &str_, &slen)
                put_bulk(b, str_, slen)
            self.maybe_flush()
            more = stream_iter_next(&it, &id)
        stream_iter_stop(&it)
        return 0

    cdef int xclaims(self, bytes key, ConsumerGroup g) except -1:
        """XCLAIM key group owner 0 id TIME t RETRYCOUNT n JUSTID FORCE per PEL entry."""
        cdef RadixIter it
        cdef StreamID id
        cdef PendingEntry* pe
        cdef WBuf* b = &self.buf
        radix_iter_init(&it, g.pel)
        cdef int more = radix_seek(&it, RADIX_FIRST, NULL)
        while more:
            id_decode(it.key, &id)
            pe = <PendingEntry*>it.value
            put_hdr(b, b'*', 12)
            put_bulk(b, b"XCLAIM", 6)
            put_bulk_bytes(b, key)
            put_bulk_bytes(b, g.name)
            put_bulk_bytes(b, g.owner_of(pe).name)
            put_bulk(b, b"0", 1)
            put_bulk_id(b, &id)
            put_bulk(b, b"TIME", 4)
            put_bulk_i64(b, <int64_t>pe_time(pe))
            put_bulk(b, b"RETRYCOUNT", 10)
            put_bulk_i64(b, pe_count(pe))
            put_bulk(b, b"JUSTID", 6)
            put_bulk(b, b"FORCE", 5)
            self.maybe_flush()
            more = radix_next(&it)
        return 0

    cdef int drop_placeholders(self, bytes key, Stream s, list dangling) except -1:
        """Removes the placeholder entries: those below the first live entry by an
        exact trim (which leaves max-deleted-ID alone, as the trim that removed the
        originals did), the others by XDEL (XDEL removed those, so max-deleted-ID is
        not 0-0 and the final XSETID restores it)."""
        cdef StreamID id
        cdef list deleted = []
        if s.length == 0:
            self.command(b"XTRIM", key, b"MAXLEN", b"0")
            return 0
        for ms, seq in dangling:
            id.ms = ms
            id.seq = seq
            if id_cmp(&id, &s.first_id) > 0:
                deleted.append(b"%d-%d" % (ms, seq))
        if len(deleted) < len(dangling):
            self.command(b"XTRIM", key, b"MINID", b"%d-%d" % (s.first_id.ms, s.first_id.seq))
        for i in range(0, len(deleted), 1000):
            self.command(b"XDEL", key, *deleted[i:i + 1000])
        return 0


cdef bint counters_expressible(Stream s):
    """Whether XSETID and XGROUP CREATE take the stream's counters as they are: not
    wrapped past INT64_MAX, and no group's entries-read above entries-added (which
    XSETID can lower afterwards; XGROUP CREATE caps ENTRIESREAD there)."""
    cdef ConsumerGroup g
    if s.entries_added > <uint64_t>INT64_MAX:
        return False
    for g in s.groups.values():
        if (g.entries_read != ENTRIES_READ_UNKNOWN
                and <uint64_t>g.entries_read > s.entries_added):
            return False
    return True


cdef list dangling_ids(Stream s):
    """Sorted (ms, seq) of the IDs pending in some group, or recorded for an
    idempotent ID, whose entry is gone."""
    cdef RadixIter it
    cdef StreamID id
    cdef ConsumerGroup g
    cdef set gone = set()
    cdef int more
    for g in s.groups.values():
        radix_iter_init(&it, g.pel)
        more = radix_seek(&it, RADIX_FIRST, NULL)
        while more:
            id_decode(it.key, &id)
            if not s.contains(&id):
                gone.add((id.ms, id.seq))
            more = radix_next(&it)
    if s.idmp is not None:
        for iids in s.idmp.producers.values():
            for ms, seq in iids.values():
                id.ms = ms
                id.seq = seq
                if not s.contains(&id):
                    gone.add((ms, seq))
    return sorted(gone)

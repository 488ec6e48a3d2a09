# Stream storage: entries in compact C nodes indexed by a radix tree (node key = the
# node's first ("master") ID). Knows nothing of commands; consumer groups live in
# engine/core/groups.pyx and are attached through `groups`.

from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t, int64_t
from libc.string cimport memcpy
from engine.core.streamid cimport StreamID, id_decode
from engine.core.radix cimport RadixTree, RadixIter, RadixHint, radix_floor

# One node = one allocation: this header, then `used` bytes of packed entries, free
# room, and the node's checkpoint array at the allocation's end (format described
# at the top of stream.pyx). The capacity `cap` is the allocation's usable size
# minus the header.
cdef struct StreamNode:
    StreamID master         # first entry's ID: the radix key and the delta base
    uint64_t lp_rest        # size Redis's listpack for this node would have, minus
                            # its count/deleted elements (node boundaries use it)
    uint64_t cap            # data capacity: the allocation's usable size - header
    uint32_t live           # live entries
    uint32_t deleted        # tombstones
    uint32_t used           # data bytes in use
    uint32_t entries_off    # where the first entry starts (after the master fields)

# Where a live entry is stored (node NULL: no such entry).
cdef struct EntryPos:
    StreamNode* node
    uint32_t off

# Trimming strategies.
cdef enum TrimStrategy:
    TRIM_NONE
    TRIM_MAXLEN
    TRIM_MINID

# Entry iterator over [start, end] (inclusive) in either direction; skips deleted
# entries. Valid until the stream is modified (then start a new one).
cdef struct StreamIter:
    RadixIter ri            # on the node being scanned
    StreamNode* node        # that node; NULL: step `ri` to the next one first
    uint32_t pos            # forward: next entry's offset; reverse: end of the next one
    uint32_t cur            # offset of the entry the iterator is on
    StreamID start
    StreamID end
    bint rev
    bint done

cdef class Stream:
    cdef RadixTree* nodes           # 16-byte master ID -> StreamNode*
    cdef readonly uint64_t length   # live entries
    cdef StreamID last_id           # last generated ID (may exceed the last live entry)
    cdef StreamID first_id          # first live entry's ID (0-0 when empty)
    cdef StreamID max_deleted_id    # largest ID removed by XDEL (or set by XSETID)
    cdef uint64_t entries_added     # entries ever appended
    cdef public dict groups         # group name (bytes) -> ConsumerGroup
    cdef StreamNode* tail           # last node, or NULL when unknown (looked up again)
    cdef uint64_t node_bytes        # bytes allocated for nodes (usable sizes)
    cdef public object idmp         # engine.core.idmp.IdmpState once IDMP is used, else None
    cdef public int64_t access_time # ms of the key's last lookup (OBJECT IDLETIME; kept
                                    # here, not in Database.access, off XADD's path)

    # Appends one entry: `fields` is a Python list holding field, value, field,
    # value... (bytes) at positions [first, first + 2*npairs). The caller has checked
    # that id > last_id. Node boundaries follow Redis's rule: a new node starts when
    # the tail node has node_max_entries entries (live + deleted) or when its size
    # would reach node_max_bytes (0 = no limit of that kind). Updates `length` only:
    # last_id, entries_added and first_id are the caller's.
    cdef int append(self, const StreamID* id, list fields, Py_ssize_t first,
                    Py_ssize_t npairs, uint64_t node_max_bytes,
                    uint64_t node_max_entries) except -1
    # 1 if a live entry with this ID exists.
    cdef bint contains(self, const StreamID* id) except -1
    # The same, setting *out to where it is (out.node NULL when it is not).
    cdef bint locate(self, const StreamID* id, EntryPos* out) except -1
    # [field, value, ...] of a live entry, or None.
    cdef object fields_of(self, const StreamID* id)
    # out[j] = where the live entry ids[j] is, for j < n: lookups batched and
    # prefetched, for fewer cache misses than one lookup after the other. The
    # positions hold until the stream is modified.
    cdef int locate_many(self, const StreamID* ids, Py_ssize_t n, EntryPos* out) except -1
    # Removes a live entry (tombstone; whole node dropped when it empties).
    # Returns 1 if it existed. Does not touch max_deleted_id or first_id (XDEL does).
    cdef bint delete(self, const StreamID* id) except -1
    # A node of its own holding one tombstone, `id` (above every entry so far): what
    # the snapshot keeps of a node a MINID trim left with no live entry.
    cdef int append_tombstone(self, const StreamID* id) except -1
    # Redis's trimming algorithm (whole nodes from the head; with `approx` stop at the
    # first node that cannot go whole; `limit` caps entries removed, 0 = none).
    # Returns the number of entries removed; keeps first_id right.
    cdef int64_t trim(self, TrimStrategy strategy, uint64_t maxlen,
                      const StreamID* minid, bint approx, int64_t limit) except -1
    # The entries a trim would remove when some must stay (Redis's streamTrim with the
    # ACKED policy): trim()'s walk over the nodes, each entry of a node it would take
    # checked with keep(ms, seq) (true: it stays, and does not count). Entries after
    # `kept_after` stay without asking. Returns their IDs as (ms, seq), oldest first;
    # changes nothing.
    cdef list trim_candidates(self, TrimStrategy strategy, uint64_t maxlen,
                              const StreamID* minid, bint approx, int64_t limit,
                              object keep, const StreamID* kept_after)
    # Number of nodes (XINFO's radix-tree-keys) and bytes held by this stream's
    # entries and node index.
    cdef uint64_t node_count(self) noexcept
    cdef uint64_t memory_bytes(self) noexcept
    # A deep copy of the entries and the stream's counters (not its groups: see
    # groups.pyx copy_stream): the node index cloned, each node copied whole.
    cdef Stream copy_entries(self)

# ID of a node's last entry, tombstone or not.
cdef void stream_node_last_id(StreamNode* n, StreamID* out) noexcept

# Iteration for callers that need IDs as C values (XREADGROUP, XAUTOCLAIM...).
cdef void stream_iter_start(StreamIter* it, Stream s, const StreamID* start,
                            const StreamID* end, bint rev) noexcept
# Moves to the next live entry in range; 1 and *id set, or 0 at the end.
cdef bint stream_iter_next(StreamIter* it, StreamID* id) except -1
# [field, value, ...] of the entry the iterator is on.
cdef list stream_iter_fields(StreamIter* it)
cdef void stream_iter_stop(StreamIter* it) noexcept

# The strings of the entry the iterator is on, as stored, for serializers that copy
# them without building Python objects. Each string is its length (LEB128 varint)
# followed by its bytes. Returns the number of field/value pairs and sets
# [*values, *values_end) to the entry's own strings. When the entry uses its node's
# master field names, *names points at those names (as many strings as pairs) and
# the entry's strings are its values only; otherwise *names is NULL and the entry's
# strings are field, value, field, value...
cdef uint64_t stream_entry_raw(StreamNode* n, uint32_t off, const uint8_t** names,
                              const uint8_t** values, const uint8_t** values_end) noexcept

cdef inline uint64_t stream_iter_raw(StreamIter* it, const uint8_t** names,
                                     const uint8_t** values,
                                     const uint8_t** values_end) noexcept:
    return stream_entry_raw(it.node, it.cur, names, values, values_end)

# A LEB128 varint at p: sets *out, returns the position after it.
cdef inline const uint8_t* varint_get(const uint8_t* p, uint64_t* out) noexcept nogil:
    cdef uint64_t v = p[0] & 0x7f
    cdef uint32_t shift = 7
    while p[0] & 0x80:
        p += 1
        v |= <uint64_t>(p[0] & 0x7f) << shift
        shift += 7
    out[0] = v
    return p + 1

# One stored string at p: sets *s and *n, returns the position after it.
cdef inline const uint8_t* stored_string(const uint8_t* p, const char** s,
                                         Py_ssize_t* n) noexcept nogil:
    cdef uint64_t v
    p = varint_get(p, &v)
    s[0] = <const char*>p
    n[0] = <Py_ssize_t>v
    return p + v

# [field, value, ...] lists of entries for replies, sharing the field-name bytes of
# a node between its entries.
cdef class EntryFields:
    cdef StreamNode* node
    cdef list names
    cdef int uses
    cdef list at(self, StreamNode* n, uint32_t off)

# ---------------------------------------------------------------------------------
# Reading a node's bytes (format: the header of stream.pyx). Inline, for stream.pyx and
# the storage tests' probe (tests/native/stream_probe.pyx); the engine's other modules
# use the API above.

# Entry flags (see the node format in stream.pyx).
cdef enum:
    FLAG_DELETED = 1
    FLAG_SAMEFIELDS = 2

# Every CP_EVERY-th entry of a node has a checkpoint (see the header).
cdef enum:
    CP_EVERY = 8
    CP_NARROW_MAX = 0xFFFF   # nodes with `used` up to this keep 2-byte checkpoints

cdef inline uint32_t _varint_len(uint64_t v) noexcept nogil:
    cdef uint32_t n = 1
    while v >= 0x80:
        v >>= 7
        n += 1
    return n

cdef inline uint64_t _unzigzag(uint64_t z) noexcept nogil:
    return (z >> 1) ^ (0 - (z & 1))

# The bytes of a listpack element's back-length for an element encoding of n bytes.
cdef inline uint64_t _lp_backlen_size(uint64_t n) noexcept nogil:
    if n <= 127:
        return 1
    if n < 16383:
        return 2
    if n < 2097151:
        return 3
    if n < 268435455:
        return 4
    return 5

cdef inline uint64_t _lp_int_size(int64_t v) noexcept nogil:
    if 0 <= v <= 127:
        return 2
    if -4096 <= v <= 4095:
        return 3
    if -32768 <= v <= 32767:
        return 4
    if -8388608 <= v <= 8388607:
        return 5
    if -2147483648 <= v <= 2147483647:
        return 6
    return 10

cdef inline uint64_t _lp_bytes(const StreamNode* n) noexcept nogil:
    """lpBytes() of this node's Redis listpack."""
    return n.lp_rest + _lp_int_size(n.live) + _lp_int_size(n.deleted)

# One decoded entry header.
cdef struct Entry:
    uint32_t off        # flags byte
    uint32_t body       # first byte after the ID deltas
    uint32_t end        # first byte of the next entry (set by _entry_skip)
    uint8_t flags
    StreamID id

cdef inline uint8_t* _data(StreamNode* n) noexcept nogil:
    return <uint8_t*>n + sizeof(StreamNode)

cdef inline StreamNode* _node_at(RadixIter* ri) noexcept nogil:
    return (<StreamNode**>ri.value)[0]

cdef inline void _entry_head(StreamNode* n, uint32_t off, Entry* e) noexcept nogil:
    """Decodes flags and ID of the entry at `off`."""
    cdef const uint8_t* base = _data(n)
    cdef const uint8_t* p = base + off
    cdef uint64_t msd, seqz
    e.off = off
    e.flags = p[0]
    p = varint_get(p + 1, &msd)
    p = varint_get(p, &seqz)
    e.id.ms = n.master.ms + msd
    e.id.seq = n.master.seq + _unzigzag(seqz)
    e.body = <uint32_t>(p - base)

cdef inline void _entry_skip(StreamNode* n, Entry* e) noexcept nogil:
    """Sets e.end by walking the entry's strings."""
    cdef const uint8_t* base = _data(n)
    cdef const uint8_t* p = base + e.body
    cdef uint64_t k, slen
    if e.flags & FLAG_SAMEFIELDS:
        varint_get(base, &k)
    else:
        p = varint_get(p, &k)
        k *= 2
    while k:
        p = varint_get(p, &slen)
        p += slen
        k -= 1
    e.end = <uint32_t>(p - base) + _varint_len(<uint64_t>(p - base - e.off))

cdef inline size_t _cap(StreamNode* n) noexcept nogil:
    """Data bytes the allocation has room for (data + free + checkpoints)."""
    return n.cap

cdef inline uint8_t* _cp_end(StreamNode* n) noexcept nogil:
    return _data(n) + n.cap

cdef inline uint32_t _cp_count(uint64_t entries) noexcept nogil:
    """Checkpoints of a node holding `entries` entries (live + deleted)."""
    return <uint32_t>((entries - 1) // CP_EVERY) if entries else 0

cdef inline uint32_t _cp_width(uint64_t used) noexcept nogil:
    return 2 if used <= CP_NARROW_MAX else 4

cdef inline uint32_t _cp_get(const uint8_t* end, uint32_t width, uint32_t i) noexcept nogil:
    cdef uint16_t v16
    cdef uint32_t v32
    if width == 2:
        memcpy(&v16, end - 2 * (i + 1), 2)
        return v16
    memcpy(&v32, end - 4 * (i + 1), 4)
    return v32

cdef inline StreamNode* _node_for(Stream s, const uint64_t* key, StreamID* lo, StreamID* hi,
                                  bint* bounded, RadixHint* cursor) noexcept:
    """The node that would hold the ID whose radix key is `key` (the last node whose
    first ID is <= it), or NULL. Sets [lo, hi) to the IDs that node holds when the next
    node's first ID is at hand (*bounded), else only lo. cursor: see radix_floor."""
    cdef const uint8_t* next
    cdef const uint8_t* e = radix_floor(s.nodes, <const uint8_t*>key, &next, cursor)
    if e == NULL:
        return NULL
    id_decode(e, lo)
    bounded[0] = next != NULL
    if next != NULL:
        id_decode(next, hi)
    return (<StreamNode**>(e + 16))[0]

# Whether listpack would store these bytes as an integer (a canonical int64 in
# decimal), and which; the DUMP payload writer encodes stream listpacks with it.
cdef bint _lp_as_int(const uint8_t* s, size_t n, int64_t* out) noexcept nogil

# 1 and *e set if node n holds an entry (live or not) with this ID, else 0; the search
# starts from entry number `guess` (NO_GUESS: none), however wrong.
cdef bint _find_in(StreamNode* n, const StreamID* id, Entry* e, uint32_t guess) noexcept

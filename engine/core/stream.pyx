# cython: boundscheck=False, wraparound=False, cdivision=True
"""Stream storage: entries packed into C nodes, indexed by the radix tree.

Node format. A node is one allocation: the StreamNode header (stream.pxd), then
`used` bytes of data:

    master section   nfields | field-1 ... field-N          (the first entry's fields)
    entry            flags | ms-delta | seq-delta | body | backlen
      body           nfields | field-1 | value-1 ... field-N | value-N
                     or, with SAMEFIELDS, just value-1 ... value-N (names = master's)

Integers are LEB128 varints; a string is its length (varint) then its bytes.
ms-delta = ms - master.ms; seq-delta = seq - master.seq (mod 2^64, zigzag-encoded:
it is negative when the ms moved on and the seq restarted). flags: DELETED marks a
tombstone, set in place by delete/trim; SAMEFIELDS as above. backlen is the entry's
length up to the backlen, written so it reads from its last byte backwards (7 bits
per byte, low bits last, a set high bit means another byte precedes): reverse
iteration steps from an entry's end to its start.

Checkpoints. Finding an entry by ID must not decode the node from its start, so
every CP_EVERY-th entry of a node (entry numbers CP_EVERY, 2*CP_EVERY, ... counting
tombstones; entry 0 is at entries_off anyway) has its offset in a small array kept
at the very end of the allocation, past the free space, growing backward:

    header | data (used bytes) | free | cp[k-1] ... cp[1] | cp[0] |   (allocation end)

k = (live + deleted - 1) // CP_EVERY, the entry count only grows while a node lives
(tombstones stay in place), so k is never stored. Offsets are 2-byte words while
`used` <= 0xFFFF, 4-byte ones beyond (widened in place when a node grows past it).
StreamNode.cap (= malloc_usable_size(node) - sizeof(StreamNode), set whenever the
block changes) places the array; a realloc (growth, shrink-to-fit when a node
closes) moves it along. A lookup binary-searches the checkpoints, decoding only
their IDs, then scans at most CP_EVERY - 1 entries past the one it lands on; range
iteration starts at the checkpoint nearest to its near end the same way. Cost: 2
bytes per CP_EVERY entries, and the header's `cap`.

Redis decides where a node ends from the size its listpack has, so node boundaries
(hence `~` trimming and XINFO's radix-tree-keys) match only if we know that size:
StreamNode.lp_rest keeps it, computed with listpack's element encoding rules.
"""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE, PyBytes_FromStringAndSize
from cpython.list cimport PyList_New, PyList_SET_ITEM, PyList_GET_ITEM
from cpython.ref cimport Py_INCREF
from engine.core.reply_lists cimport leaf_list
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t, int64_t, uintptr_t
from libc.string cimport memcmp, memcpy, memmove
from libc.stdlib cimport malloc, free

from engine.core.memory cimport mem_alloc, mem_realloc, mem_free
from engine.core.radix cimport (RadixIter, RADIX_FIRST, RADIX_LAST, RADIX_LE, radix_new,
                           radix_free, radix_count, radix_bytes, radix_insert, radix_find,
                           radix_remove, radix_iter_init, radix_seek, radix_next,
                           radix_prev, radix_floor, radix_floor_prefetch, RadixHint,
                           radix_clone)
from engine.core.streamid cimport StreamID, id_cmp, id_encode, id_decode, id_format

cdef extern from "<malloc.h>":
    size_t malloc_usable_size(void* ptr) nogil

# The flags, CP_EVERY and the inline readers of a node's bytes (Entry, _entry_head,
# _entry_skip, the checkpoints' _cp_*, _lp_bytes, _node_for) are in stream.pxd, shared
# with the storage tests' probe (tests/native/stream_probe.pyx).

# Redis's STREAM_LISTPACK_MAX_SIZE: the cap on a node and on one entry's data.
cdef uint64_t LP_MAX_SIZE = 1 << 30
cdef uint64_t U32_MAX = 0xffffffff

# Stream.locate_many asks for the node index's lines of an ID 3 * LOOKAHEAD IDs before
# looking it up, finds its node 2 * LOOKAHEAD IDs before and prefetches the lines of
# the node the lookup will read LOOKAHEAD IDs before; it keeps the nodes' bounds for
# that in a ring of BOUNDS_RING (a power of 2 > 2 * LOOKAHEAD).
cdef enum:
    LOOKAHEAD = 8
    BOUNDS_RING = 32

# _cp_seek without a guessed entry number.
cdef enum:
    NO_GUESS = 0xFFFFFFFF

# Nodes of at most NEAR_BYTES (header included) are prefetched whole for a lookup.
cdef enum:
    NEAR_BYTES = 512


# ---------------------------------------------------------------------------------
# Varints

cdef inline uint8_t* _varint_put(uint8_t* p, uint64_t v) noexcept nogil:
    while v >= 0x80:
        p[0] = <uint8_t>(v | 0x80)
        v >>= 7
        p += 1
    p[0] = <uint8_t>v
    return p + 1


cdef inline uint64_t _zigzag(uint64_t delta) noexcept nogil:
    """Small positive and negative deltas (as int64) -> small unsigned values."""
    return (delta << 1) ^ <uint64_t>(<int64_t>delta >> 63)


cdef inline uint8_t* _backlen_put(uint8_t* p, uint64_t v) noexcept nogil:
    cdef uint32_t n = _varint_len(v)
    cdef uint32_t i = n
    while i > 0:
        i -= 1
        p[i] = <uint8_t>((v & 0x7f) | (0x80 if i else 0))
        v >>= 7
    return p + n


cdef inline const uint8_t* _backlen_get(const uint8_t* end, uint64_t* out) noexcept nogil:
    """Reads the backlen that ends just before `end`; returns its first byte."""
    cdef const uint8_t* p = end - 1
    cdef uint64_t v = p[0] & 0x7f
    cdef uint32_t shift = 7
    while p[0] & 0x80:
        p -= 1
        v |= <uint64_t>(p[0] & 0x7f) << shift
        shift += 7
    out[0] = v
    return p


# ---------------------------------------------------------------------------------
# Sizes of Redis listpack elements (element encoding + backlen bytes)

cdef bint _lp_as_int(const uint8_t* s, size_t n, int64_t* out) noexcept nogil:
    """listpack stores a string as an integer when it is a canonical int64 in
    decimal (optional '-', no leading zeros, no '+', no "-0")."""
    cdef size_t i = 0
    cdef uint64_t v, d
    cdef bint neg = 0
    if n == 0 or n > 20:    # 20 = len("-9223372036854775808")
        return 0
    if n == 1 and s[0] == 48:   # "0"
        out[0] = 0
        return 1
    if s[0] == 45:              # '-'
        if n == 1:
            return 0
        neg = 1
        i = 1
    if s[i] < 49 or s[i] > 57:  # first digit 1-9
        return 0
    v = s[i] - 48
    i += 1
    while i < n:
        if s[i] < 48 or s[i] > 57:
            return 0
        d = s[i] - 48
        if v > (<uint64_t>0xffffffffffffffff) // 10:
            return 0
        v *= 10
        if v > <uint64_t>0xffffffffffffffff - d:
            return 0
        v += d
        i += 1
    if neg:
        if v > (<uint64_t>1 << 63):
            return 0
        out[0] = <int64_t>(0 - v)
    else:
        if v > (<uint64_t>1 << 63) - 1:
            return 0
        out[0] = <int64_t>v
    return 1


cdef inline uint64_t _lp_str_size(const uint8_t* s, size_t n) noexcept nogil:
    cdef int64_t v
    cdef uint64_t enc
    if _lp_as_int(s, n, &v):
        return _lp_int_size(v)
    enc = n + (1 if n < 64 else (2 if n < 4096 else 5))
    return enc + _lp_backlen_size(enc)


# ---------------------------------------------------------------------------------
# Entries inside a node

cdef inline void _entry_before(StreamNode* n, uint32_t end, Entry* e) noexcept nogil:
    """Decodes the entry that ends at `end` (e.end included)."""
    cdef const uint8_t* base = _data(n)
    cdef uint64_t length
    cdef const uint8_t* b = _backlen_get(base + end, &length)
    _entry_head(n, <uint32_t>(b - base - length), e)
    e.end = end


cdef inline void _node_last_id(StreamNode* n, StreamID* out) noexcept nogil:
    """ID of the node's last entry, tombstone or not (like lpGetEdgeStreamID)."""
    cdef Entry e
    _entry_before(n, n.used, &e)
    out[0] = e.id


# ---------------------------------------------------------------------------------
# Checkpoints (see the header): `end` is the allocation's end, _cp_end(n)

cdef inline size_t _cp_bytes(StreamNode* n) noexcept nogil:
    return <size_t>_cp_width(n.used) * _cp_count(<uint64_t>n.live + n.deleted)


cdef inline void _cp_put(uint8_t* end, uint32_t width, uint32_t i, uint32_t off) noexcept nogil:
    cdef uint16_t v16
    if width == 2:
        v16 = <uint16_t>off
        memcpy(end - 2 * (i + 1), &v16, 2)
    else:
        memcpy(end - 4 * (i + 1), &off, 4)


cdef inline void _cp_widen(uint8_t* end, uint32_t count) noexcept nogil:
    """Rewrites `count` 2-byte checkpoints as 4-byte ones (the room below them is
    free). Last to first: checkpoint i's new place covers the old places of
    checkpoints 2i and 2i+1, which are i itself (read first) or already moved."""
    cdef uint32_t i = count
    cdef uint32_t v
    while i > 0:
        i -= 1
        v = _cp_get(end, 2, i)
        _cp_put(end, 4, i, v)


cdef inline uint32_t _id_le_at(StreamNode* n, uint32_t off, uint64_t ms,
                               uint64_t seq) noexcept nogil:
    """1 if the ID of the entry at `off` is <= (ms, seq), else 0."""
    cdef const uint8_t* p = _data(n) + off + 1
    cdef uint64_t msd, seqz
    p = varint_get(p, &msd)
    varint_get(p, &seqz)
    msd += n.master.ms
    seqz = n.master.seq + _unzigzag(seqz)
    return <uint32_t>(msd < ms) | (<uint32_t>(msd == ms) & <uint32_t>(seqz <= seq))


cdef uint32_t _cp_seek(StreamNode* n, const StreamID* id, uint32_t* after,
                       uint32_t guess) noexcept nogil:
    """Searches the checkpoints for `id`: returns the offset of the last checkpointed
    entry whose ID is <= id (entry 0 when there is none: the node's first entry is
    taken as <= id), and sets *after to the next checkpointed entry's offset (ID >
    id), or to `used` when there is none. So entries with IDs in [checkpointed ID,
    id] are in [returned, *after). guess: the entry number id probably has (see
    _guess_entry), where the search starts with steps of 1, 2, 4, ... before it
    halves (a binary search when NO_GUESS): near a good guess it reads only the
    checkpointed entries next to it."""
    cdef uint32_t count = _cp_count(<uint64_t>n.live + n.deleted)
    cdef uint32_t width, base = 0, size, half, g, step = 1
    cdef const uint8_t* end
    cdef uint64_t ms = id.ms, seq = id.seq
    if count == 0:
        after[0] = n.used
        return n.entries_off
    end = _cp_end(n)
    width = _cp_width(n.used)
    # Over positions 0..count: 0 is entry 0, i >= 1 is checkpoint i-1. The answer is
    # the last position whose ID is <= id, in [base, base + size).
    size = count + 1
    if guess != NO_GUESS:
        g = guess // CP_EVERY if guess // CP_EVERY < count else count
        if g == 0 or _id_le_at(n, _cp_get(end, width, g - 1), ms, seq):
            base = g                # ... in [g, g + step): gallop up
            while g + step <= count and _id_le_at(n, _cp_get(end, width, g + step - 1),
                                                  ms, seq):
                base = g + step
                step <<= 1
            size = (g + step if g + step <= count + 1 else count + 1) - base
        else:                       # ... in [g - step, g): gallop down
            while step < g and not _id_le_at(n, _cp_get(end, width, g - step - 1), ms, seq):
                step <<= 1
            base = g - step if step < g else 0
            size = g - base
    while size > 1:
        half = size >> 1
        if _id_le_at(n, _cp_get(end, width, base + half - 1), ms, seq):
            base += half
        size -= half
    after[0] = _cp_get(end, width, base) if base < count else n.used
    return _cp_get(end, width, base - 1) if base else n.entries_off


cdef list _master_names(StreamNode* n):
    cdef const uint8_t* p = _data(n)
    cdef uint64_t k, slen, i
    cdef list out = []
    p = varint_get(p, &k)
    for i in range(k):
        p = varint_get(p, &slen)
        out.append(PyBytes_FromStringAndSize(<const char*>p, <Py_ssize_t>slen))
        p += slen
    return out


cdef list _entry_fields(StreamNode* n, uint32_t off, list master):
    """[field, value, ...] of the entry at `off`. `master`: the node's master field
    names as bytes (shared by SAMEFIELDS entries), or None to decode them here."""
    cdef Entry e
    cdef const uint8_t* base = _data(n)
    cdef const uint8_t* p
    cdef const uint8_t* mp
    cdef uint64_t k, slen, i
    cdef list out
    cdef object s
    _entry_head(n, off, &e)
    p = base + e.body
    if e.flags & FLAG_SAMEFIELDS:
        mp = varint_get(base, &k)
        out = PyList_New(<Py_ssize_t>(2 * k))
        for i in range(k):
            if master is not None:
                s = <object>PyList_GET_ITEM(master, <Py_ssize_t>i)
            else:
                mp = varint_get(mp, &slen)
                s = PyBytes_FromStringAndSize(<const char*>mp, <Py_ssize_t>slen)
                mp += slen
            Py_INCREF(s)
            PyList_SET_ITEM(out, <Py_ssize_t>(2 * i), s)
            p = varint_get(p, &slen)
            s = PyBytes_FromStringAndSize(<const char*>p, <Py_ssize_t>slen)
            p += slen
            Py_INCREF(s)
            PyList_SET_ITEM(out, <Py_ssize_t>(2 * i + 1), s)
    else:
        p = varint_get(p, &k)
        k *= 2
        out = PyList_New(<Py_ssize_t>k)
        for i in range(k):
            p = varint_get(p, &slen)
            s = PyBytes_FromStringAndSize(<const char*>p, <Py_ssize_t>slen)
            p += slen
            Py_INCREF(s)
            PyList_SET_ITEM(out, <Py_ssize_t>i, s)
    return leaf_list(out)


cdef class EntryFields:
    """Builds the [field, value, ...] lists of entries for replies. Consecutive
    entries of one node that use its master field names share those bytes objects
    (decoded once per node, when a second such entry comes)."""

    cdef list at(self, StreamNode* n, uint32_t off):
        if n != self.node:
            self.node = n
            self.names = None
            self.uses = 0
        if self.names is None and _data(n)[off] & FLAG_SAMEFIELDS:
            self.uses += 1
            if self.uses > 1:
                self.names = _master_names(n)
        return _entry_fields(n, off, self.names)


# ---------------------------------------------------------------------------------
# Node management (module-level so the .pxd keeps only the public API)

cdef StreamNode* _last_node(Stream s) except? NULL:
    cdef RadixIter ri
    radix_iter_init(&ri, s.nodes)
    if radix_seek(&ri, RADIX_LAST, NULL):
        return _node_at(&ri)
    return NULL


cdef StreamNode* _resize(Stream s, StreamNode* n, size_t data_bytes) except NULL:
    """Reallocates n to hold data_bytes of data, checkpoints included (data_bytes >=
    used + _cp_bytes(n)); moves the checkpoints to the new end; keeps the index and
    tail right. Like the entries written into the old block's rounding slack, the
    checkpoints at its end rely on realloc keeping all of its usable bytes."""
    cdef uint8_t key[16]
    cdef size_t before = malloc_usable_size(n)
    cdef size_t cp = _cp_bytes(n)
    cdef size_t at = before - cp        # where the checkpoints are (from n)
    cdef StreamNode* m
    if cp and sizeof(StreamNode) + data_bytes < before:
        # Shrinking: first right after the data, which the new block keeps
        at = sizeof(StreamNode) + n.used
        memmove(<uint8_t*>n + at, <uint8_t*>n + before - cp, cp)
    try:
        m = <StreamNode*>mem_realloc(n, sizeof(StreamNode) + data_bytes)
    except MemoryError:
        if at != before - cp:   # n is unchanged: put its checkpoints back
            memmove(<uint8_t*>n + before - cp, <uint8_t*>n + at, cp)
        raise
    s.node_bytes += malloc_usable_size(m) - before
    m.cap = malloc_usable_size(m) - sizeof(StreamNode)
    if cp:
        memmove(_cp_end(m) - cp, <uint8_t*>m + at, cp)
    if m != n:
        id_encode(&m.master, key)
        (<StreamNode**>radix_find(s.nodes, key))[0] = m   # in place: cannot fail
        if s.tail == n:
            s.tail = m
    return m


cdef size_t _grow_to(StreamNode* n, size_t need, size_t cap,
                     uint64_t max_entries) noexcept nogil:
    """Capacity to grow the tail node n to when the next entry needs `need` bytes
    (data and checkpoints): 1.5x, or, when the node will be closed by max_entries
    within that, the size it will have then (estimated from its average entry), so
    that a node of even entries gets no last realloc just to be shrunk again."""
    cdef size_t grow = cap + cap // 2
    cdef uint64_t entries = <uint64_t>n.live + n.deleted     # >= 1, without the new one
    cdef size_t data, est
    if max_entries == 0 or entries + 1 >= max_entries:
        return need if need > grow else grow
    data = n.used + (n.used - n.entries_off) // entries * (max_entries - entries)
    est = data + <size_t>_cp_width(data) * _cp_count(max_entries)
    if est <= 2 * cap:          # at most one more step: go straight there
        grow = est
    if grow < need + need // 8:  # still geometric: O(1) copying per byte
        grow = need + need // 8
    return grow


cdef int _shrink_to_fit(Stream s, StreamNode* n) except -1:
    """Gives a closed node's free room back. realloc may keep a block that a fresh,
    smaller one would replace (glibc leaves a remainder under its minimum chunk size
    in place): then the node moves to a fresh block if that one really is smaller."""
    cdef uint8_t key[16]
    cdef size_t cp = _cp_bytes(n)
    cdef size_t need = n.used + cp
    cdef StreamNode* m
    if _cap(n) <= need:
        return 0
    n = _resize(s, n, need)
    if _cap(n) - need < 16:     # under malloc's 16-byte step: no block is smaller
        return 0
    try:
        m = <StreamNode*>mem_alloc(sizeof(StreamNode) + need)
    except MemoryError:
        return 0                # optional: the node stays as it is
    if malloc_usable_size(m) >= malloc_usable_size(n):
        mem_free(m)
        return 0
    memcpy(m, n, sizeof(StreamNode) + n.used)
    m.cap = malloc_usable_size(m) - sizeof(StreamNode)
    if cp:
        memcpy(_cp_end(m) - cp, _cp_end(n) - cp, cp)
    s.node_bytes -= malloc_usable_size(n) - malloc_usable_size(m)
    id_encode(&m.master, key)
    (<StreamNode**>radix_find(s.nodes, key))[0] = m   # in place: cannot fail
    if s.tail == n:
        s.tail = m
    mem_free(n)
    return 0


cdef int _drop_node(Stream s, StreamNode* n) except -1:
    """Removes n from the index and frees it (its entries are already accounted)."""
    cdef uint8_t key[16]
    id_encode(&n.master, key)
    radix_remove(s.nodes, key, NULL)
    if s.tail == n:
        s.tail = NULL
    s.node_bytes -= malloc_usable_size(n)
    mem_free(n)
    return 0


cdef StreamNode* _new_node(Stream s, const StreamID* id, list fields, Py_ssize_t first,
                           Py_ssize_t npairs, uint64_t lp_fields, uint64_t enc_fields,
                           size_t entry_room) except NULL:
    """A node whose master entry is this entry's ID and field names; it becomes the
    tail. Allocated with room for the first entry (entry_room bytes) as well.
    lp_fields / enc_fields: the field names' listpack / our encoded sizes."""
    cdef uint8_t key[16]
    cdef size_t master_len = _varint_len(<uint64_t>npairs) + enc_fields
    cdef Py_ssize_t i, slen
    cdef bytes f
    cdef uint8_t* p
    cdef StreamNode* n
    n = <StreamNode*>mem_alloc(sizeof(StreamNode) + master_len + entry_room)
    s.node_bytes += malloc_usable_size(n)
    n.cap = malloc_usable_size(n) - sizeof(StreamNode)
    n.master = id[0]
    n.live = 0      # no entries yet, so no checkpoints: append writes entry 0
    n.deleted = 0
    n.used = <uint32_t>master_len
    n.entries_off = <uint32_t>master_len
    # listpack header (6) + EOF (1) + master entry: nfields, fields, the 0 terminator
    n.lp_rest = 7 + _lp_int_size(npairs) + lp_fields + 2
    p = _varint_put(_data(n), <uint64_t>npairs)
    for i in range(npairs):
        f = fields[first + 2 * i]
        slen = PyBytes_GET_SIZE(f)
        p = _varint_put(p, <uint64_t>slen)
        memcpy(p, PyBytes_AS_STRING(f), slen)
        p += slen
    id_encode(id, key)
    try:
        radix_insert(s.nodes, key, &n)
    except BaseException:
        s.node_bytes -= malloc_usable_size(n)
        mem_free(n)
        raise
    s.tail = n
    return n


cdef inline bint _bytes_eq(const uint8_t* a, const char* b, uint64_t n) noexcept nogil:
    """memcmp(a, b, n) == 0, without a library call for the usual short field names."""
    cdef uint64_t i
    if n > 16:
        return memcmp(a, b, n) == 0
    for i in range(n):
        if a[i] != <uint8_t>b[i]:
            return 0
    return 1


cdef bint _same_fields(StreamNode* n, list fields, Py_ssize_t first, Py_ssize_t npairs) noexcept:
    """True if the entry's field names are the node's master fields, in order."""
    cdef const uint8_t* p = _data(n)
    cdef uint64_t k, slen
    cdef Py_ssize_t i
    cdef object f
    p = varint_get(p, &k)
    if k != <uint64_t>npairs:
        return 0
    for i in range(npairs):
        p = varint_get(p, &slen)
        f = fields[first + 2 * i]
        if <uint64_t>PyBytes_GET_SIZE(f) != slen or not _bytes_eq(p, PyBytes_AS_STRING(f), slen):
            return 0
        p += slen
    return 1


cdef extern from *:
    """
    /* The radix key of an ID (16 big-endian bytes) as two 8-byte words, so that
       the compiler keeps it in two stores: the byte-wise encoding gets copied with
       a 16-byte load right after, which cannot be store-forwarded (a stall). */
    static inline void sluice_id_key(uint64_t ms, uint64_t seq, uint64_t key[2]) {
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        key[0] = __builtin_bswap64(ms);
        key[1] = __builtin_bswap64(seq);
    #else
        uint8_t *k = (uint8_t *)key;
        for (int i = 7; i >= 0; i--) { k[i] = (uint8_t)ms; k[8 + i] = (uint8_t)seq;
                                       ms >>= 8; seq >>= 8; }
    #endif
    }
    """
    void __builtin_prefetch(const void* addr) nogil
    void sluice_id_key(uint64_t ms, uint64_t seq, uint64_t* key) nogil


cdef inline void _prefetch_node(StreamNode* n) noexcept nogil:
    """Asks for all of a small node's cache lines at once (reading its header brings
    the first): a lookup's binary search and short scan then touch its lines in an
    order that depends on what they hold, one cache miss after the other in a cold
    stream otherwise."""
    cdef size_t size = sizeof(StreamNode) + n.cap
    cdef uintptr_t line = (<uintptr_t>n | 63) + 1, end = <uintptr_t>n + size
    if size > 4096:
        return
    while line < end:
        __builtin_prefetch(<const void*>line)
        line += 64


cdef inline uint32_t _guess_entry(StreamNode* n, const StreamID* id,
                                  const StreamID* hi) noexcept nogil:
    """The number of the entry of node n (counting tombstones) that holds id, guessed
    as if the node's IDs were spread evenly from its first one to hi (the next node's
    first ID, or the stream's last ID): by the seqs when those two share their ms, by
    the ms otherwise. Exact for IDs made at a steady rate; a lookup only starts from it
    (see _cp_seek)."""
    cdef uint64_t entries = <uint64_t>n.live + n.deleted
    cdef double at, span
    if hi.ms == n.master.ms:
        at = <double>(id.seq - n.master.seq)
        span = <double>(hi.seq - n.master.seq) + 1.0
    else:
        at = <double>(id.ms - n.master.ms)
        span = <double>(hi.ms - n.master.ms) + 1.0
    at = at * <double>entries / span
    return <uint32_t>at if at < <double>entries else <uint32_t>(entries - 1)


cdef inline void _prefetch_near(StreamNode* n, uint32_t guess) noexcept nogil:
    """Asks for the lines a lookup starting from entry `guess` reads: the checkpoint
    words around it and the entries from the checkpoint before it to the one after
    (placed as if the node's entries were all the same size), one line more on each
    side. A small node is asked for whole. Reading the header brought its first line."""
    cdef uint64_t entries = <uint64_t>n.live + n.deleted
    cdef uint64_t data = n.used - n.entries_off
    cdef uint64_t first = (guess // CP_EVERY) * CP_EVERY
    cdef uint64_t last = first + CP_EVERY if first + CP_EVERY < entries else entries
    cdef const uint8_t* base = _data(n) + n.entries_off
    cdef uintptr_t line, end
    if sizeof(StreamNode) + n.cap <= NEAR_BYTES or entries == 0:
        _prefetch_node(n)
        return
    __builtin_prefetch(_cp_end(n) - _cp_width(n.used) * (guess // CP_EVERY + 1))
    line = ((<uintptr_t>base + data * first // entries) & ~(<uintptr_t>63)) - 64
    end = <uintptr_t>base + data * last // entries + 64
    if line < <uintptr_t>base:
        line = <uintptr_t>base
    while line < end:
        __builtin_prefetch(<const void*>line)
        line += 64


cdef bint _find_in(StreamNode* n, const StreamID* id, Entry* e, uint32_t guess) noexcept:
    """1 and *e set if node n holds an entry (live or not) with this ID, else 0.
    guess: see _cp_seek."""
    cdef uint32_t stop
    cdef uint32_t off = _cp_seek(n, id, &stop, guess)
    cdef int c
    while off < stop:
        _entry_head(n, off, e)
        c = id_cmp(&e.id, id)
        if c == 0:
            return 1
        if c > 0:
            return 0
        _entry_skip(n, e)
        off = e.end
    return 0


cdef int _find(Stream s, const StreamID* id, StreamNode** node, Entry* e) except -1:
    """1 and (*node, *e) set if an entry (live or not) has this ID, else 0."""
    cdef uint64_t key[2]
    cdef StreamID lo, hi
    cdef bint bounded
    cdef StreamNode* n
    sluice_id_key(id.ms, id.seq, key)
    n = _node_for(s, key, &lo, &hi, &bounded, NULL)
    if n == NULL:
        return 0
    node[0] = n
    cdef uint32_t guess = _guess_entry(n, id, &hi if bounded else &s.last_id)
    _prefetch_near(n, guess)
    return _find_in(n, id, e, guess)


cdef int _first_live(Stream s, StreamID* out) except -1:
    """Sets *out to the first live entry's ID (0-0 when there is none)."""
    cdef RadixIter ri
    cdef StreamNode* n
    cdef Entry e
    cdef uint32_t off
    cdef int found
    out.ms = 0
    out.seq = 0
    radix_iter_init(&ri, s.nodes)
    found = radix_seek(&ri, RADIX_FIRST, NULL)
    while found:
        n = _node_at(&ri)
        if n.live:
            off = n.entries_off
            while off < n.used:
                _entry_head(n, off, &e)
                if not (e.flags & FLAG_DELETED):
                    out[0] = e.id
                    return 0
                _entry_skip(n, &e)
                off = e.end
        found = radix_next(&ri)
    return 0


# ---------------------------------------------------------------------------------

cdef class Stream:
    """One stream value: the node index plus the metadata XINFO/XSETID expose."""

    def __cinit__(self):
        self.nodes = radix_new(16, sizeof(StreamNode*))
        self.length = 0
        self.last_id.ms = self.last_id.seq = 0
        self.first_id.ms = self.first_id.seq = 0
        self.max_deleted_id.ms = self.max_deleted_id.seq = 0
        self.entries_added = 0
        self.groups = {}
        self.tail = NULL
        self.node_bytes = 0

    def __dealloc__(self):
        cdef RadixIter ri
        cdef int found
        if self.nodes == NULL:
            return
        radix_iter_init(&ri, self.nodes)
        found = radix_seek(&ri, RADIX_FIRST, NULL)
        while found > 0:
            mem_free(_node_at(&ri))
            found = radix_next(&ri)
        radix_free(self.nodes)
        self.nodes = NULL

    cdef Stream copy_entries(self):
        cdef Stream out = Stream()
        cdef RadixIter ri
        cdef StreamNode* node
        cdef StreamNode* copy
        cdef size_t size
        cdef int found
        radix_free(out.nodes)
        out.nodes = NULL
        out.nodes = radix_clone(self.nodes)
        # The clone's values still point at this stream's nodes: each is replaced
        # by a copy (on MemoryError the rest are cleared, so that neither stream
        # frees the other's nodes).
        radix_iter_init(&ri, out.nodes)
        found = radix_seek(&ri, RADIX_FIRST, NULL)
        while found > 0:
            node = _node_at(&ri)
            size = malloc_usable_size(node)
            try:
                copy = <StreamNode*>mem_alloc(size)
            except MemoryError:
                while found > 0:
                    (<StreamNode**>ri.value)[0] = NULL
                    found = radix_next(&ri)
                raise
            memcpy(copy, node, size)
            if malloc_usable_size(copy) != size:
                # malloc gave more: the checkpoints go to the end, as cap says
                copy.cap = malloc_usable_size(copy) - sizeof(StreamNode)
                memmove(_cp_end(copy) - _cp_bytes(node), <uint8_t*>copy + size - _cp_bytes(node),
                        _cp_bytes(node))
            (<StreamNode**>ri.value)[0] = copy
            out.node_bytes += malloc_usable_size(copy)
            found = radix_next(&ri)
        out.length = self.length
        out.last_id = self.last_id
        out.first_id = self.first_id
        out.max_deleted_id = self.max_deleted_id
        out.entries_added = self.entries_added
        return out

    cdef int append(self, const StreamID* id, list fields, Py_ssize_t first,
                    Py_ssize_t npairs, uint64_t node_max_bytes,
                    uint64_t node_max_entries) except -1:
        """Counts the entry in `length`; last_id, entries_added and first_id are
        XADD's to set (it checks the ID and owns the stream's metadata)."""
        cdef Py_ssize_t i, nitems = 2 * npairs, slen
        cdef object item
        cdef const uint8_t* s
        cdef uint64_t totelelen = 0, lp_fields = 0, lp_values = 0
        cdef uint64_t enc_fields = 0, enc_values = 0, max_bytes, msd, seqz, body, elen
        cdef uint64_t lp_count, entries
        cdef size_t cap, need
        cdef uint32_t cps = 0, width = 2
        cdef StreamNode* n
        cdef bint same, checkpoint = 0
        cdef uint8_t* base
        cdef uint8_t* p
        cdef uint8_t* start
        if npairs < 0 or first < 0 or first + nitems > len(fields):
            raise IndexError("fields out of range")
        for i in range(nitems):
            item = fields[first + i]
            if type(item) is not bytes:
                raise TypeError("stream fields and values must be bytes")
            slen = PyBytes_GET_SIZE(item)
            s = <const uint8_t*>PyBytes_AS_STRING(item)
            totelelen += slen
            if i & 1:
                lp_values += _lp_str_size(s, slen)
                enc_values += _varint_len(slen) + slen
            else:
                lp_fields += _lp_str_size(s, slen)
                enc_fields += _varint_len(slen) + slen
        if totelelen > LP_MAX_SIZE:
            raise ValueError("Elements are too large to be stored")

        n = self.tail
        if n == NULL:
            n = self.tail = _last_node(self)
        if n != NULL:
            max_bytes = node_max_bytes
            if max_bytes == 0 or max_bytes > LP_MAX_SIZE:
                max_bytes = LP_MAX_SIZE
            # Redis's rule, plus our own 32-bit offsets' limit (never hit in practice)
            if (_lp_bytes(n) + totelelen >= max_bytes
                    or (node_max_entries != 0
                        and <uint64_t>n.live + n.deleted >= node_max_entries)
                    or <uint64_t>n.used + 40 + enc_fields + enc_values > U32_MAX):
                _shrink_to_fit(self, n)     # the node is closed
                n = NULL
        same = n == NULL or _same_fields(n, fields, first, npairs)

        # Entry layout and sizes (ours, and the listpack's)
        if n == NULL:
            msd = 0
            seqz = 0
        else:
            msd = id.ms - n.master.ms
            seqz = _zigzag(id.seq - n.master.seq)
        body = enc_values if same else _varint_len(<uint64_t>npairs) + enc_fields + enc_values
        elen = 1 + _varint_len(msd) + _varint_len(seqz) + body
        if n == NULL:
            n = _new_node(self, id, fields, first, npairs, lp_fields, enc_fields,
                          elen + _varint_len(elen))
        else:
            # Room for the entry and the checkpoints after it (one more when it is
            # entry CP_EVERY, 2*CP_EVERY...), growing geometrically (only the tail
            # grows). Crossing CP_NARROW_MAX widens the checkpoints already there.
            entries = <uint64_t>n.live + n.deleted     # >= 1
            cps = <uint32_t>((entries - 1) // CP_EVERY)
            checkpoint = entries % CP_EVERY == 0
            need = n.used + elen + _varint_len(elen)
            width = _cp_width(need)
            need += <size_t>width * (cps + checkpoint)
            cap = _cap(n)
            if need > cap:
                n = _resize(self, n, _grow_to(n, need, cap, node_max_entries))
                cap = _cap(n)
            if width != _cp_width(n.used) and cps:
                _cp_widen(_data(n) + cap, cps)
            if checkpoint:  # the entry goes at n.used
                _cp_put(_data(n) + cap, width, cps, n.used)
        lp_count = <uint64_t>npairs + 3
        if not same:
            lp_count += <uint64_t>npairs + 1
        n.lp_rest += (2 + _lp_int_size(<int64_t>msd)
                      + _lp_int_size(<int64_t>(id.seq - n.master.seq))
                      + (lp_values if same else _lp_int_size(npairs) + lp_fields + lp_values)
                      + _lp_int_size(<int64_t>lp_count))

        base = _data(n)
        start = p = base + n.used
        p[0] = FLAG_SAMEFIELDS if same else 0
        p = _varint_put(p + 1, msd)
        p = _varint_put(p, seqz)
        if not same:
            p = _varint_put(p, <uint64_t>npairs)
        for i in range(nitems):
            if same and not (i & 1):
                continue
            item = fields[first + i]
            slen = PyBytes_GET_SIZE(item)
            p = _varint_put(p, <uint64_t>slen)
            memcpy(p, PyBytes_AS_STRING(item), slen)
            p += slen
        p = _backlen_put(p, <uint64_t>(p - start))
        n.used = <uint32_t>(p - base)
        n.live += 1
        self.length += 1
        return 0

    cdef bint contains(self, const StreamID* id) except -1:
        cdef EntryPos where
        return self.locate(id, &where)

    cdef bint locate(self, const StreamID* id, EntryPos* out) except -1:
        cdef Entry e
        if _find(self, id, &out.node, &e) and not (e.flags & FLAG_DELETED):
            out.off = e.off
            return 1
        out.node = NULL
        return 0

    cdef object fields_of(self, const StreamID* id):
        cdef StreamNode* n
        cdef Entry e
        if _find(self, id, &n, &e) and not (e.flags & FLAG_DELETED):
            return _entry_fields(n, e.off, None)
        return None

    cdef int locate_many(self, const StreamID* ids, Py_ssize_t n, EntryPos* out) except -1:
        """Finds a batch of entries, as a pipeline: while ID i is looked up in its node,
        the lines that the lookup of ID i + LOOKAHEAD will read are prefetched (guessed
        from its node's header, prefetched when that node was found), the node of ID
        i + 2 * LOOKAHEAD is found, and the node index's lines for ID i + 3 * LOOKAHEAD
        are asked for (radix_floor_prefetch; IDs in ascending order). In a cold stream
        the lines then arrive while other IDs are served instead of being waited for.
        An ID inside the node found for the one before it skips the node index (IDs in
        order often share a node)."""
        cdef uint64_t key[2]
        cdef StreamID lo, hi            # `node` holds the IDs in [lo, hi) (`bounded`)
        cdef bint bounded = 0           # or in [lo, ...)
        cdef StreamID bound[BOUNDS_RING]    # ID i's node's hi (or last_id) at i % ring
        cdef RadixHint cursor           # the node index's bucket found last
        cdef StreamNode* node = NULL
        cdef const StreamID* id
        cdef Entry e
        cdef Py_ssize_t i, k
        cursor.finger.bucket = NULL
        for k in range(-3 * LOOKAHEAD, n):
            i = k + 3 * LOOKAHEAD
            if i < n:
                sluice_id_key(ids[i].ms, ids[i].seq, key)
                radix_floor_prefetch(self.nodes, <const uint8_t*>key, &cursor)
            i = k + 2 * LOOKAHEAD       # find the node of ID i
            if 0 <= i < n:
                id = &ids[i]
                if not (node != NULL and bounded and id_cmp(&lo, id) <= 0
                        and id_cmp(id, &hi) < 0):
                    sluice_id_key(id.ms, id.seq, key)
                    node = _node_for(self, key, &lo, &hi, &bounded, &cursor)
                    if node != NULL:
                        __builtin_prefetch(node)
                out[i].node = node
                bound[i % BOUNDS_RING] = hi if bounded else self.last_id
            i = k + LOOKAHEAD           # guess where ID i is; prefetch those lines
            if 0 <= i < n and out[i].node != NULL:
                out[i].off = _guess_entry(out[i].node, &ids[i], &bound[i % BOUNDS_RING])
                _prefetch_near(out[i].node, out[i].off)
            if k < 0:
                continue
            if (out[k].node == NULL or not _find_in(out[k].node, &ids[k], &e, out[k].off)
                    or e.flags & FLAG_DELETED):
                out[k].node = NULL
            else:
                out[k].off = e.off
        return 0

    cdef bint delete(self, const StreamID* id) except -1:
        """Like Redis: a tombstone, or the whole node when it was its last live entry."""
        cdef StreamNode* n
        cdef Entry e
        if not _find(self, id, &n, &e) or e.flags & FLAG_DELETED:
            return 0
        if n.live == 1:
            _drop_node(self, n)
        else:
            _data(n)[e.off] |= FLAG_DELETED
            n.live -= 1
            n.deleted += 1
        self.length -= 1
        return 1

    cdef int append_tombstone(self, const StreamID* id) except -1:
        cdef StreamNode* n
        cdef Entry e
        self.append(id, [b"", b""], 0, 1, 0, 1)
        if not _find(self, id, &n, &e):
            raise ValueError("a tombstone that was appended is not found")
        _data(n)[e.off] |= FLAG_DELETED
        n.live -= 1
        n.deleted += 1
        self.length -= 1
        return 0

    cdef int64_t trim(self, TrimStrategy strategy, uint64_t maxlen,
                      const StreamID* minid, bint approx, int64_t limit) except -1:
        """Redis's streamTrim, step for step (see stream.pxd)."""
        cdef RadixIter ri
        cdef StreamNode* n
        cdef StreamID last
        cdef Entry e
        cdef uint32_t off
        cdef uint64_t entries
        cdef int64_t deleted = 0
        cdef int found
        cdef bint remove, stop
        if strategy == TRIM_NONE:
            return 0
        radix_iter_init(&ri, self.nodes)
        found = radix_seek(&ri, RADIX_FIRST, NULL)
        while found:
            if strategy == TRIM_MAXLEN and self.length <= maxlen:
                break
            n = _node_at(&ri)
            entries = n.live
            if limit and deleted + <int64_t>entries > limit:
                break
            if strategy == TRIM_MAXLEN:
                remove = self.length - entries >= maxlen
            else:
                _node_last_id(n, &last)
                remove = id_cmp(&last, minid) < 0
            if remove:
                self.length -= entries
                deleted += entries
                _drop_node(self, n)
                found = radix_next(&ri)
                continue
            if approx:
                break
            # Tombstone entries from the node's start until the target is met. With
            # MINID this may leave the node without live entries: Redis keeps it.
            off = n.entries_off
            while off < n.used:
                _entry_head(n, off, &e)
                _entry_skip(n, &e)
                if strategy == TRIM_MAXLEN:
                    stop = self.length <= maxlen
                else:
                    stop = id_cmp(&e.id, minid) >= 0
                if stop:
                    break
                if not (e.flags & FLAG_DELETED):
                    _data(n)[e.off] |= FLAG_DELETED
                    n.live -= 1
                    n.deleted += 1
                    self.length -= 1
                    deleted += 1
                off = e.end
            break
        _first_live(self, &self.first_id)
        return deleted

    cdef list trim_candidates(self, TrimStrategy strategy, uint64_t maxlen,
                              const StreamID* minid, bint approx, int64_t limit,
                              object keep, const StreamID* kept_after):
        """Like trim(): a node the strategy takes whole has all its entries checked;
        with `approx` the walk ends at the first node it cannot take whole, otherwise
        that node is checked entry by entry up to the target, and the walk ends."""
        cdef RadixIter ri
        cdef StreamNode* n
        cdef StreamID last
        cdef Entry e
        cdef uint32_t off
        cdef uint64_t length = self.length
        cdef int64_t deleted = 0
        cdef int found
        cdef bint whole
        cdef list out = []
        if strategy == TRIM_NONE:
            return out
        radix_iter_init(&ri, self.nodes)
        found = radix_seek(&ri, RADIX_FIRST, NULL)
        while found:
            if strategy == TRIM_MAXLEN and length <= maxlen:
                break
            n = _node_at(&ri)
            if id_cmp(&n.master, kept_after) > 0:
                break                   # nothing from here on may go
            if limit and deleted + <int64_t>n.live > limit:
                break
            if strategy == TRIM_MAXLEN:
                whole = length - n.live >= maxlen
            else:
                _node_last_id(n, &last)
                whole = id_cmp(&last, minid) < 0
            if not whole and approx:
                break
            off = n.entries_off
            while off < n.used:
                _entry_head(n, off, &e)
                _entry_skip(n, &e)
                off = e.end
                if not whole and (length <= maxlen if strategy == TRIM_MAXLEN
                                  else id_cmp(&e.id, minid) >= 0):
                    break
                if (e.flags & FLAG_DELETED or id_cmp(&e.id, kept_after) > 0
                        or keep(e.id.ms, e.id.seq)):
                    continue
                out.append((e.id.ms, e.id.seq))
                length -= 1
                deleted += 1
            if not whole:
                break
            found = radix_next(&ri)
        return out

    cdef uint64_t node_count(self) noexcept:
        return radix_count(self.nodes)

    cdef uint64_t memory_bytes(self) noexcept:
        return self.node_bytes + radix_bytes(self.nodes)


# ---------------------------------------------------------------------------------
# Iteration for C callers

cdef void stream_iter_start(StreamIter* it, Stream s, const StreamID* start,
                            const StreamID* end, bint rev) noexcept:
    cdef uint8_t key[16]
    cdef uint32_t after
    cdef int found
    it.start = start[0]
    it.end = end[0]
    it.rev = rev
    it.node = NULL
    it.pos = 0
    it.cur = 0
    it.done = id_cmp(start, end) > 0
    if it.done:
        return
    radix_iter_init(&it.ri, s.nodes)
    id_encode(end if rev else start, key)
    found = radix_seek(&it.ri, RADIX_LE, key)
    if not found and not rev:
        found = radix_seek(&it.ri, RADIX_FIRST, NULL)
    if found <= 0:
        it.done = 1
        return
    it.node = _node_at(&it.ri)
    # Start at the checkpoint nearest to the range's near end: forward, the last one
    # with ID <= start (entries before it are < start); backward, the first one with
    # ID > end (it and all after it are > end)
    it.pos = _cp_seek(it.node, end if rev else start, &after, NO_GUESS)
    if rev:
        it.pos = after


cdef bint stream_iter_next(StreamIter* it, StreamID* id) except -1:
    cdef StreamNode* n
    cdef Entry e
    while not it.done:
        n = it.node
        if n == NULL:
            if not (radix_prev(&it.ri) if it.rev else radix_next(&it.ri)):
                it.done = 1
                break
            n = _node_at(&it.ri)
            if not it.rev and id_cmp(&n.master, &it.end) > 0:
                it.done = 1
                break
            if n.live == 0:
                continue
            it.node = n
            it.pos = n.used if it.rev else n.entries_off
        if it.rev:
            if it.pos <= n.entries_off:
                it.node = NULL
                continue
            _entry_before(n, it.pos, &e)
            it.pos = e.off
            if id_cmp(&e.id, &it.end) > 0:
                continue
            if id_cmp(&e.id, &it.start) < 0:
                it.done = 1
                break
        else:
            if it.pos >= n.used:
                it.node = NULL
                continue
            _entry_head(n, it.pos, &e)
            _entry_skip(n, &e)
            it.pos = e.end
            if id_cmp(&e.id, &it.start) < 0:
                continue
            if id_cmp(&e.id, &it.end) > 0:
                it.done = 1
                break
        if e.flags & FLAG_DELETED:
            continue
        it.cur = e.off
        id[0] = e.id
        return 1
    return 0


cdef list stream_iter_fields(StreamIter* it):
    return _entry_fields(it.node, it.cur, None)


cdef void stream_iter_stop(StreamIter* it) noexcept:
    """Iterators hold no resources; ending one only makes it return nothing more."""
    it.done = 1
    it.node = NULL


# ---------------------------------------------------------------------------------
# Raw access for serializers (the snapshot and the RESP AOF base)

cdef void stream_node_last_id(StreamNode* n, StreamID* out) noexcept:
    _node_last_id(n, out)


cdef uint64_t stream_entry_raw(StreamNode* n, uint32_t off, const uint8_t** names,
                              const uint8_t** values, const uint8_t** values_end) noexcept:
    cdef const uint8_t* base = _data(n)
    cdef const uint8_t* p
    cdef uint64_t npairs, strings, slen
    cdef Entry e
    _entry_head(n, off, &e)
    p = base + e.body
    if e.flags & FLAG_SAMEFIELDS:
        names[0] = varint_get(base, &npairs)
        strings = npairs
    else:
        names[0] = NULL
        p = varint_get(p, &npairs)
        strings = 2 * npairs
    values[0] = p
    while strings:
        p = varint_get(p, &slen)
        p += slen
        strings -= 1
    values_end[0] = p
    return npairs

"""The C hash table of byte strings (see hashtable.pxd for the contract).

Growth doubles the bucket count when the elements reach it (load factor 1); a table
shrinks to the next power of two above its elements when they fall under an eighth
of its buckets. Either starts an incremental rehash: entries then live in two bucket
arrays, lookups look in both, new entries go to the second, and every add or delete
moves one bucket of the first (stepping over at most REHASH_EMPTY_VISITS empty ones),
so no single command pays for a whole big table.
"""
from libc.stdint cimport uint8_t, uint32_t, uint64_t
from libc.string cimport memcmp, memcpy, memset

from os import urandom

from engine.core.memory cimport mem_alloc, mem_realloc, mem_free

cdef extern from "<malloc.h>":
    size_t malloc_usable_size(void* ptr) nogil

cdef enum:
    MIN_BUCKETS = 4
    REHASH_EMPTY_VISITS = 10
    SHRINK_RATIO = 8
    FAIR_CHAIN = 4             # chains up to this long give each entry an equal chance

cdef uint64_t _k0, _k1, _rng


cdef void _seed() noexcept:
    global _k0, _k1, _rng
    cdef bytes b = urandom(24)
    memcpy(&_k0, <const char*>b, 8)
    memcpy(&_k1, (<const char*>b) + 8, 8)
    memcpy(&_rng, (<const char*>b) + 16, 8)
    _rng |= 1

_seed()


cdef inline uint64_t _rotl(uint64_t x, int b) noexcept:
    return (x << b) | (x >> (64 - b))


cdef inline void _sipround(uint64_t* v) noexcept:
    v[0] += v[1]; v[1] = _rotl(v[1], 13); v[1] ^= v[0]; v[0] = _rotl(v[0], 32)
    v[2] += v[3]; v[3] = _rotl(v[3], 16); v[3] ^= v[2]
    v[0] += v[3]; v[3] = _rotl(v[3], 21); v[3] ^= v[0]
    v[2] += v[1]; v[1] = _rotl(v[1], 17); v[1] ^= v[2]; v[2] = _rotl(v[2], 32)


cdef inline void _absorb(uint64_t* v, uint64_t m) noexcept:
    """One compression round (SipHash-1-3) over the 8-byte word m."""
    v[3] ^= m
    _sipround(v)
    v[0] ^= m


cdef uint64_t ht_hash(const unsigned char* s, size_t n) noexcept:
    """SipHash-1-3 of s under the process's random key."""
    cdef uint64_t v[4]
    cdef uint64_t b = (<uint64_t>n) << 56, m
    cdef size_t i = 0, full = n & ~(<size_t>7)
    cdef int r
    v[0] = _k0 ^ 0x736f6d6570736575ULL
    v[1] = _k1 ^ 0x646f72616e646f6dULL
    v[2] = _k0 ^ 0x6c7967656e657261ULL
    v[3] = _k1 ^ 0x7465646279746573ULL
    while i < full:
        m = 0
        for r in range(8):
            m |= (<uint64_t>s[i + r]) << (8 * r)
        _absorb(v, m)
        i += 8
    for r in range(<int>(n - full)):
        b |= (<uint64_t>s[full + r]) << (8 * r)
    _absorb(v, b)
    v[2] ^= 0xff
    for r in range(3):
        _sipround(v)
    return v[0] ^ v[1] ^ v[2] ^ v[3]


cdef uint64_t ht_random_u64() noexcept:
    """xorshift64*: fast, process-seeded; for picking random entries, not secrets."""
    global _rng
    _rng ^= _rng >> 12
    _rng ^= _rng << 25
    _rng ^= _rng >> 27
    return _rng * 0x2545F4914F6CDD1DULL


cdef HTable* ht_new(bint values) except NULL:
    cdef HTable* t = <HTable*>mem_alloc(sizeof(HTable))
    memset(t, 0, sizeof(HTable))
    t.rehash_index = -1
    t.values = values
    t.header = sizeof(HEntry) if values else sizeof(HEntry) - sizeof(uint32_t)
    return t


cdef void ht_free(HTable* t) noexcept:
    ht_clear(t)
    mem_free(t)


cdef void ht_clear(HTable* t) noexcept:
    """Frees every entry and bucket: the table is empty, as made by ht_new."""
    cdef int i
    cdef uint64_t b
    cdef HEntry* e
    cdef HEntry* nxt
    for i in range(2):
        for b in range(t.size[i]):
            e = t.buckets[i][b]
            while e != NULL:
                nxt = e.next
                mem_free(e)
                e = nxt
        mem_free(t.buckets[i])
        t.buckets[i] = NULL
        t.size[i] = 0
        t.used[i] = 0
    t.rehash_index = -1
    t.entry_bytes = 0


cdef uint64_t ht_count(const HTable* t) noexcept:
    return t.used[0] + t.used[1]


cdef size_t ht_bytes(const HTable* t) noexcept:
    return sizeof(HTable) + (t.size[0] + t.size[1]) * sizeof(HEntry*) + t.entry_bytes


cdef const unsigned char* ht_key(const HTable* t, const HEntry* e) noexcept:
    return (<const unsigned char*>e) + t.header


cdef const unsigned char* ht_value(const HTable* t, const HEntry* e) noexcept:
    return (<const unsigned char*>e) + t.header + e.klen


cdef inline bint _rehashing(const HTable* t) noexcept:
    return t.rehash_index >= 0


cdef HEntry* ht_find(const HTable* t, const unsigned char* k, size_t klen) noexcept:
    cdef uint64_t h
    cdef int i
    cdef HEntry* e
    if ht_count(t) == 0:
        return NULL
    h = ht_hash(k, klen)
    for i in range(2):
        if t.size[i] == 0:
            break
        e = t.buckets[i][h & (t.size[i] - 1)]
        while e != NULL:
            if e.klen == klen and memcmp((<const unsigned char*>e) + t.header, k, klen) == 0:
                return e
            e = e.next
        if not _rehashing(t):
            break
    return NULL


cdef void _rehash_step(HTable* t) noexcept:
    """Moves one non-empty bucket of [0] into [1]; ends the rehash when [0] is empty."""
    cdef int visits = REHASH_EMPTY_VISITS
    cdef HEntry* e
    cdef HEntry* nxt
    cdef uint64_t h
    while t.used[0] > 0 and t.buckets[0][t.rehash_index] == NULL:
        t.rehash_index += 1
        visits -= 1
        if visits == 0:
            return
    if t.used[0] > 0:
        e = t.buckets[0][t.rehash_index]
        while e != NULL:
            nxt = e.next
            h = ht_hash((<const unsigned char*>e) + t.header, e.klen) & (t.size[1] - 1)
            e.next = t.buckets[1][h]
            t.buckets[1][h] = e
            t.used[0] -= 1
            t.used[1] += 1
            e = nxt
        t.buckets[0][t.rehash_index] = NULL
        t.rehash_index += 1
    if t.used[0] == 0:
        mem_free(t.buckets[0])
        t.buckets[0] = t.buckets[1]
        t.size[0] = t.size[1]
        t.used[0] = t.used[1]
        t.buckets[1] = NULL
        t.size[1] = 0
        t.used[1] = 0
        t.rehash_index = -1


cdef int _resize(HTable* t, uint64_t size) except -1:
    """Starts moving into a table of `size` buckets (the first table is made whole)."""
    cdef HEntry** b = <HEntry**>mem_alloc(size * sizeof(HEntry*))
    memset(b, 0, size * sizeof(HEntry*))
    if t.size[0] == 0:
        t.buckets[0] = b
        t.size[0] = size
        return 0
    t.buckets[1] = b
    t.size[1] = size
    t.rehash_index = 0
    return 0


cdef inline uint64_t _fit(uint64_t n) noexcept:
    cdef uint64_t size = MIN_BUCKETS
    while size < n:
        size <<= 1
    return size


cdef int _maybe_grow(HTable* t) except -1:
    if _rehashing(t):
        _rehash_step(t)
        return 0
    if t.size[0] == 0:
        _resize(t, MIN_BUCKETS)
    elif t.used[0] >= t.size[0]:
        _resize(t, t.size[0] * 2)
    return 0


cdef int _maybe_shrink(HTable* t) except -1:
    if t.used[0] + t.used[1] == 0:
        # Emptied (perhaps mid-rehash): no delete will come to finish a shrink, and an
        # empty table holds no buckets (the next add makes the first ones).
        mem_free(t.buckets[0])
        mem_free(t.buckets[1])
        t.buckets[0] = t.buckets[1] = NULL
        t.size[0] = t.size[1] = 0
        t.used[0] = t.used[1] = 0
        t.rehash_index = -1
    elif _rehashing(t):
        _rehash_step(t)
    elif t.size[0] > MIN_BUCKETS and t.used[0] * SHRINK_RATIO < t.size[0]:
        _resize(t, _fit(t.used[0] + 1))
    return 0


cdef HEntry** _link_of(HTable* t, const unsigned char* k, size_t klen, uint64_t h, int* table) noexcept:
    """The link pointing at k's entry (NULL when absent); table gets its array."""
    cdef int i
    cdef HEntry** link
    for i in range(2):
        if t.size[i] == 0:
            break
        link = &t.buckets[i][h & (t.size[i] - 1)]
        while link[0] != NULL:
            if link[0].klen == klen and memcmp((<const unsigned char*>link[0]) + t.header, k, klen) == 0:
                table[0] = i
                return link
            link = &link[0].next
        if not _rehashing(t):
            break
    return NULL


cdef HEntry* _make_entry(HTable* t, const unsigned char* k, size_t klen,
                         const unsigned char* v, size_t vlen) except NULL:
    cdef HEntry* e
    if klen > 0xFFFFFFFF or vlen > 0xFFFFFFFF:
        raise MemoryError("hash table entry too large")
    e = <HEntry*>mem_alloc(t.header + klen + (vlen if t.values else 0))
    e.klen = <uint32_t>klen
    memcpy((<unsigned char*>e) + t.header, k, klen)
    if t.values:
        e.vlen = <uint32_t>vlen
        memcpy((<unsigned char*>e) + t.header + klen, v, vlen)
    t.entry_bytes += malloc_usable_size(e)
    return e


cdef int ht_set(HTable* t, const unsigned char* k, size_t klen,
                const unsigned char* v, size_t vlen) except -1:
    """Adds k (with value v in a table with values), or replaces its value; 1 when k is
    new, 0 when it was there."""
    cdef uint64_t h = ht_hash(k, klen)
    cdef int i = 0
    cdef HEntry** link = _link_of(t, k, klen, h, &i)
    cdef HEntry* old
    cdef HEntry* e
    if link != NULL:
        if t.values:
            old = link[0]
            e = _make_entry(t, k, klen, v, vlen)
            e.next = old.next
            link[0] = e
            t.entry_bytes -= malloc_usable_size(old)
            mem_free(old)
        return 0
    _maybe_grow(t)
    e = _make_entry(t, k, klen, v, vlen)
    i = 1 if _rehashing(t) else 0
    link = &t.buckets[i][h & (t.size[i] - 1)]
    e.next = link[0]
    link[0] = e
    t.used[i] += 1
    return 1


cdef bint ht_delete(HTable* t, const unsigned char* k, size_t klen) except -1:
    cdef int i = 0
    cdef HEntry** link
    cdef HEntry* e
    if ht_count(t) == 0:
        return False
    link = _link_of(t, k, klen, ht_hash(k, klen), &i)
    if link == NULL:
        return False
    e = link[0]
    link[0] = e.next
    t.used[i] -= 1
    t.entry_bytes -= malloc_usable_size(e)
    mem_free(e)
    _maybe_shrink(t)
    return True


cdef HEntry* ht_random(const HTable* t) noexcept:
    """A random entry (NULL when empty): a random bucket and a random place among
    FAIR_CHAIN in it, again until that place holds an entry, so that every entry of a
    chain no longer than FAIR_CHAIN is equally likely (a plain pick in the chain would
    favour entries alone in their bucket)."""
    cdef uint64_t span, h, n, pick
    cdef long start
    cdef HEntry* head
    cdef HEntry* e
    if ht_count(t) == 0:
        return NULL
    start = t.rehash_index if _rehashing(t) else 0
    span = t.size[0] + t.size[1] - <uint64_t>start
    while True:
        h = <uint64_t>start + ht_random_u64() % span
        head = t.buckets[0][h] if h < t.size[0] else t.buckets[1][h - t.size[0]]
        if head == NULL:
            continue
        n = 0
        e = head
        while e != NULL:
            n += 1
            e = e.next
        pick = ht_random_u64() % (n if n > FAIR_CHAIN else FAIR_CHAIN)
        if pick < n:
            break
    e = head
    while pick > 0:
        e = e.next
        pick -= 1
    return e


cdef inline uint64_t _reverse(uint64_t v) noexcept:
    v = ((v >> 1) & 0x5555555555555555ULL) | ((v & 0x5555555555555555ULL) << 1)
    v = ((v >> 2) & 0x3333333333333333ULL) | ((v & 0x3333333333333333ULL) << 2)
    v = ((v >> 4) & 0x0F0F0F0F0F0F0F0FULL) | ((v & 0x0F0F0F0F0F0F0F0FULL) << 4)
    v = ((v >> 8) & 0x00FF00FF00FF00FFULL) | ((v & 0x00FF00FF00FF00FFULL) << 8)
    v = ((v >> 16) & 0x0000FFFF0000FFFFULL) | ((v & 0x0000FFFF0000FFFFULL) << 16)
    return (v >> 32) | (v << 32)


cdef inline uint64_t _advance(uint64_t v, uint64_t mask) noexcept:
    """The next cursor: the bits above the mask set, then +1 counted from the top bit."""
    v |= ~mask
    return _reverse(_reverse(v) + 1)


cdef int _emit(const HTable* t, HEntry* e, HScanFn fn, void* ctx) except -1:
    while e != NULL:
        fn(ctx, <HTable*>t, e)
        e = e.next
    return 0


cdef uint64_t ht_scan(const HTable* t, uint64_t cursor, HScanFn fn, void* ctx) except? 0:
    """Calls fn on the entries of the buckets at cursor (in the smaller array, and every
    bucket of the larger that it splits into while rehashing); the next cursor, 0 when
    the scan is over."""
    cdef int small, large
    cdef uint64_t m0, m1
    if ht_count(t) == 0:
        return 0
    if not _rehashing(t):
        m0 = t.size[0] - 1
        _emit(t, t.buckets[0][cursor & m0], fn, ctx)
        return _advance(cursor, m0)
    small, large = (0, 1) if t.size[0] <= t.size[1] else (1, 0)
    m0 = t.size[small] - 1
    m1 = t.size[large] - 1
    _emit(t, t.buckets[small][cursor & m0], fn, ctx)
    while True:
        _emit(t, t.buckets[large][cursor & m1], fn, ctx)
        cursor = _advance(cursor, m1)
        if not (cursor & (m0 ^ m1)):
            break
    return cursor


cdef void ht_iter_init(const HTable* t, HIter* it) noexcept:
    it.table = 0
    it.index = 0
    it.entry = NULL


cdef HEntry* ht_iter_next(const HTable* t, HIter* it) noexcept:
    if it.entry != NULL:
        it.entry = it.entry.next
    while it.entry == NULL:
        if it.index >= t.size[it.table]:
            if it.table == 1 or t.size[1] == 0:
                return NULL
            it.table = 1
            it.index = 0
            continue
        it.entry = t.buckets[it.table][it.index]
        it.index += 1
    return it.entry


cdef HTable* ht_copy(const HTable* t) except NULL:
    """An independent copy (a single bucket array sized for the elements)."""
    cdef HTable* out = ht_new(t.values)
    cdef HIter it
    cdef HEntry* e
    cdef HEntry* c
    cdef uint64_t h
    cdef size_t n
    if ht_count(t) == 0:
        return out
    _resize(out, _fit(ht_count(t)))
    ht_iter_init(t, &it)
    while True:
        e = ht_iter_next(t, &it)
        if e == NULL:
            break
        n = t.header + e.klen + (e.vlen if t.values else 0)
        h = ht_hash(ht_key(t, e), e.klen) & (out.size[0] - 1)
        try:
            c = <HEntry*>mem_alloc(n)
        except MemoryError:
            ht_free(out)
            raise
        memcpy(c, e, n)
        c.next = out.buckets[0][h]
        out.buckets[0][h] = c
        out.used[0] += 1
        out.entry_bytes += malloc_usable_size(c)
    return out

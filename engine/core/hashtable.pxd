# A hash table of byte strings (keys only, or key -> value) in C memory: chained
# buckets in a power-of-two array, hashed with SipHash-1-3 under a per-process random
# key, rehashed incrementally (each add or delete moves a bucket), and scanned with a
# reverse-binary cursor so that an element present for a whole scan is returned at
# least once even when the table grows or shrinks between calls.
#
# Contract:
# - Each entry is one counted allocation: its header, the key, then the value (a table
#   made with values=False stores none and its entries are 4 bytes shorter).
# - ht_find, ht_random, ht_scan and iteration never move entries; only ht_set,
#   ht_delete and ht_pop do (they may rehash). An HIter stays valid while the table
#   is not changed.
# - Keys and values are at most 4 GiB - 1 bytes (ht_set raises otherwise).

from libc.stdint cimport uint32_t, uint64_t

cdef struct HEntry:
    HEntry* next
    uint32_t klen
    uint32_t vlen                    # only in tables with values

cdef struct HTable:
    HEntry** buckets[2]              # [1] is the table being rehashed into
    uint64_t size[2]                 # bucket counts (0: no table)
    uint64_t used[2]
    long rehash_index                # next bucket of [0] to move; -1: not rehashing
    uint32_t header                  # bytes before an entry's key
    bint values
    size_t entry_bytes               # allocated bytes of all entries

cdef struct HIter:
    int table
    uint64_t index
    HEntry* entry

ctypedef int (*HScanFn)(void* ctx, HTable* t, HEntry* e) except -1

cdef uint64_t ht_hash(const unsigned char* s, size_t n) noexcept
cdef uint64_t ht_random_u64() noexcept
cdef HTable* ht_new(bint values) except NULL
cdef void ht_free(HTable* t) noexcept
cdef void ht_clear(HTable* t) noexcept
cdef HTable* ht_copy(const HTable* t) except NULL
cdef uint64_t ht_count(const HTable* t) noexcept
cdef size_t ht_bytes(const HTable* t) noexcept
cdef const unsigned char* ht_key(const HTable* t, const HEntry* e) noexcept
cdef const unsigned char* ht_value(const HTable* t, const HEntry* e) noexcept
cdef HEntry* ht_find(const HTable* t, const unsigned char* k, size_t klen) noexcept
cdef int ht_set(HTable* t, const unsigned char* k, size_t klen,
                const unsigned char* v, size_t vlen) except -1
cdef bint ht_delete(HTable* t, const unsigned char* k, size_t klen) except -1
cdef HEntry* ht_random(const HTable* t) noexcept
cdef uint64_t ht_scan(const HTable* t, uint64_t cursor, HScanFn fn, void* ctx) except? 0
cdef void ht_iter_init(const HTable* t, HIter* it) noexcept
cdef HEntry* ht_iter_next(const HTable* t, HIter* it) noexcept

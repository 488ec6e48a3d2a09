# Ordered radix tree over fixed-length big-endian byte keys, with fixed-size values
# stored inline. It is the one index structure of the engine: the stream's node
# index, each group's PEL, each consumer's PEL and pel_by_time all use it.
#
# Contract (callers rely on exactly this):
# - Keys are `key_len` bytes (1..32), compared with memcmp (big-endian integers sort
#   numerically). Values are `value_len` bytes (0..64) copied in and out; a tree with
#   value_len 0 is a set. Inserting with value NULL stores zeros. Stored values are
#   8-byte aligned when key_len and value_len are multiples of 8.
# - Pointers to keys/values returned by find or an iterator are valid only until the
#   next insert/remove on that tree. Values may be modified in place through them.
# - An iterator stays usable across inserts/removes on its tree (including removing
#   the element it is positioned on): its next step continues from the last key it
#   returned, in its direction.
# - All memory goes through engine.core.memory (mem_alloc & co.), so radix_bytes() and the
#   engine's used_memory are exact.

from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t

cdef enum:
    RADIX_MAX_KEY = 32
    RADIX_MAX_VALUE = 64

# Seek operators for radix_seek.
cdef enum RadixSeekOp:
    RADIX_FIRST      # smallest key
    RADIX_LAST       # largest key
    RADIX_GE         # smallest key >= given key
    RADIX_GT         # smallest key >  given key
    RADIX_LE         # largest key <= given key
    RADIX_LT         # largest key <  given key
    RADIX_EQ         # exactly the given key

# Layout (see the header of radix.pyx). Callers only use RadixIter.key / .value and
# treat everything else as private.

# Leaf bucket header; room for `cap` entries of key_len + value_len bytes follows
# (8-aligned), of which entries [head, head + count) are in use.
cdef struct RadixBucket:
    uint32_t count
    uint16_t cap            # <= bucket_max <= 4080
    uint16_t head           # unused entries before the first one (front removals)

# One child of an inner node: covers key[depth] in [lo, next child's lo - 1].
cdef struct RadixChild:
    void* ptr
    uint8_t lo
    uint8_t is_inner        # ptr is a RadixInner (else a RadixBucket)

# Inner node header (8 bytes with padding); then prefix[depth] padded to 8, then
# `cap` RadixChild slots of which `n` are used.
cdef struct RadixInner:
    uint16_t n
    uint16_t cap
    uint8_t depth

# A bucket remembered from an earlier operation so the next one near it can skip the
# descent (see "Fingers" in radix.pyx). Cleared by any node allocation, realloc or free.
cdef struct RadixFinger:
    RadixBucket* bucket     # NULL when unset
    RadixInner* parent      # NULL when the bucket is the root
    uint16_t idx            # the bucket's child index in parent
    uint8_t rightmost       # the bucket holds the tree's largest key

cdef struct RadixTree:
    void* root              # NULL when empty
    uint64_t count
    uint64_t bytes          # malloc_usable_size of everything owned, header included
    uint64_t version        # bumped by every insert/remove that moves entries
    uint32_t key_len
    uint32_t value_len
    uint32_t entry_len      # key_len + value_len
    uint32_t bucket_max     # entries per full bucket
    uint8_t root_is_inner
    RadixFinger finger[2]   # [0]: where the last insert went, [1]: the last remove
    RadixBucket* spare      # the root bucket of the tree when it last emptied, kept
                            # (at most SPARE_BYTES) for its next first insert
    uint64_t shape          # bumped by every change of shape (node allocated, moved, freed)

# Reading the layout: inline, shared by radix.pyx and the structural checks of the
# test probe (tests/native/radix_probe.pyx).
cdef enum:
    HDR = 8                # bytes of a RadixBucket / RadixInner header
    MAX_CHILDREN = 256
    SPARE_BYTES = 1016     # the most an emptied tree keeps (its spare root bucket)

cdef inline uint8_t* _entry(const RadixTree* t, RadixBucket* b, uint32_t i) noexcept:
    """Entry i of a bucket (counted from the first one in use)."""
    return <uint8_t*>b + HDR + (<size_t>b.head + i) * t.entry_len

cdef inline size_t _bucket_size(const RadixTree* t, uint32_t n) noexcept:
    """Bytes of a bucket with room for n entries."""
    return HDR + <size_t>n * t.entry_len

cdef inline uint8_t* _prefix(RadixInner* n) noexcept:
    return <uint8_t*>n + HDR

cdef inline size_t _children_offset(uint32_t depth) noexcept:
    return HDR + (((<size_t>depth + 7) >> 3) << 3)

cdef inline RadixChild* _children(RadixInner* n) noexcept:
    return <RadixChild*>(<uint8_t*>n + _children_offset(n.depth))

cdef struct RadixFrame:
    RadixInner* node
    uint32_t idx

cdef struct RadixIter:
    uint8_t key[RADIX_MAX_KEY]  # copy of the current key (stays valid across changes)
    void* value                 # current value inside the tree
    RadixTree* tree
    RadixBucket* bucket
    uint64_t version            # tree.version when positioned; stale => re-seek
    uint32_t idx
    uint32_t height
    bint positioned
    RadixFrame path[RADIX_MAX_KEY]  # inner nodes from the root down to the bucket

cdef RadixTree* radix_new(uint32_t key_len, uint32_t value_len) except NULL
# A tree whose full buckets take bucket_bytes (header included; radix_new: 4088, one
# 4 KiB malloc chunk; at most that). A removal moves up to half a bucket, so trees
# whose removals are scattered (consumer PELs) are cheaper with smaller ones.
cdef RadixTree* radix_new_sized(uint32_t key_len, uint32_t value_len,
                                uint32_t bucket_bytes) except NULL
cdef void radix_free(RadixTree* tree) noexcept
# A copy of the tree (same keys, values and shape), node by node: one allocation and
# one memcpy per node, no key comparisons (COPY of a stream, its PELs).
cdef RadixTree* radix_clone(const RadixTree* tree) except NULL
cdef uint64_t radix_count(const RadixTree* tree) noexcept
# Inner nodes plus buckets (a walk: O(nodes); for statistics such as XINFO).
cdef uint64_t radix_node_count(const RadixTree* tree) noexcept
# Bytes allocated by this tree (nodes, buckets, the tree header).
cdef uint64_t radix_bytes(const RadixTree* tree) noexcept

# Returns 1 if inserted, 0 if the key was present (then the stored value is replaced).
cdef int radix_insert(RadixTree* tree, const uint8_t* key, const void* value) except -1
# Returns 1 if inserted, 0 if the key was present (stored value left unchanged).
cdef int radix_try_insert(RadixTree* tree, const uint8_t* key, const void* value) except -1
# Pointer to the stored value, or NULL if absent (for value_len 0: a non-NULL pointer).
cdef void* radix_find(const RadixTree* tree, const uint8_t* key) noexcept
# Returns 1 if removed (value copied to value_out unless NULL), 0 if absent.
cdef int radix_remove(RadixTree* tree, const uint8_t* key, void* value_out) except -1
# Removes the n smallest keys (all when fewer): whole buckets at a time, for queues
# consumed from the front. Returns how many were removed.
cdef uint64_t radix_remove_first(RadixTree* tree, uint64_t n) except? 0

# Batched lookups (see "Batched lookups" in radix.pyx). A hint remembers where a key
# lies: its bucket, as a finger, and the tree's shape counter when it was taken; it is
# used only while the tree's shape is unchanged (entries may come and go meanwhile).
cdef struct RadixHint:
    RadixFinger finger
    uint64_t shape
    uint32_t pos            # radix_floor's cursor: the entry it returned last

# Sets hints[j] to where key j (of n, packed back to back) lies in tree, with the
# descents side by side so that their cache misses overlap in a tree too big for the
# CPU caches (whose lines it starts loading for finding each key). Changes nothing.
cdef void radix_locate_many(const RadixTree* tree, const uint8_t* keys, uint32_t n,
                            RadixHint* hints) noexcept

# radix_find for a key located by radix_locate_many into `hint`: skips the descent
# while the hint is valid.
cdef void* radix_find_at(const RadixTree* tree, const uint8_t* key,
                         const RadixHint* hint) noexcept
# The entry (key, then value) with the largest key <= key, or NULL when there is none.
# If next is not NULL, *next is the entry after it when that one is in the same bucket,
# else NULL. Valid until the next insert/remove. (A cheaper radix_seek(RADIX_LE).)
# cursor (or NULL) carries the bucket from one call to the next: a series of floors of
# nearby keys searches that bucket without descending (set its finger.bucket to NULL
# before the first call).
cdef const uint8_t* radix_floor(const RadixTree* tree, const uint8_t* key,
                                const uint8_t** next, RadixHint* cursor) noexcept
# For a series of radix_floor calls with one cursor on keys in ascending order: starts
# loading the lines where the floor of key will be found, when key lies in the
# cursor's bucket past its entry; called a few keys ahead, it lets those misses
# overlap the floors in between.
cdef void radix_floor_prefetch(const RadixTree* tree, const uint8_t* key,
                               const RadixHint* cursor) noexcept

# Iteration: seek positions the iterator ON an element and returns 1, or 0 if there
# is none. next/prev move to the following/preceding element and return 1, or 0 at
# the end. While positioned, it.key / it.value point at the current element. Once
# a seek or step has returned 0 the iterator is unpositioned: next/prev return 0
# until the next seek. `key` may be NULL for RADIX_FIRST / RADIX_LAST.
cdef void radix_iter_init(RadixIter* it, RadixTree* tree) noexcept
cdef int radix_seek(RadixIter* it, RadixSeekOp op, const uint8_t* key) except -1
cdef int radix_next(RadixIter* it) except -1
cdef int radix_prev(RadixIter* it) except -1

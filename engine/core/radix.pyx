# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
#
# Sluice's ordered index: a radix tree whose leaves are sorted buckets (a burst trie).
#
# Keys are fixed-length byte strings ordered by memcmp; values are fixed-size blobs
# stored inline right after their key. There are two kinds of nodes:
#
#   inner node  {n, cap, depth} + prefix[depth] + children[cap]. It splits its keys on
#               byte `depth`; prefix holds bytes [0:depth) that every key below shares
#               (path compression: depth may jump several bytes past the parent's).
#               Child i = (lo, ptr, is_inner) takes the keys whose byte `depth` is in
#               [lo_i, lo_{i+1} - 1]; the first lo is 0 and the last child runs to 255,
#               so the children tile 0..255 in order. Depths strictly increase going
#               down, hence at most key_len inner nodes on a path.
#   bucket      {count, cap} + cap entries of [key | value], sorted, full keys. It
#               takes every key of its child range, whatever their lower bytes are.
#
#   e.g. 16-byte stream IDs 0-0 .. 0-300:      [depth 14, prefix 00*14]
#                                                |0                   |1..255
#                             [depth 15, prefix 00*15]        bucket 0-256..0-300
#                              |0..126   |127..253  |254..255
#                              bucket    bucket     bucket
#
# Why buckets: one allocation per trie node (Redis's rax) costs tens of bytes per key.
# A full bucket is one ~4 KiB block carrying 100+ keys for 8 bytes of header and one
# 16-byte child slot, so a tree costs barely more than its raw key + value bytes.
#
# Growth. A bucket is allocated at the size it needs and grows, up to bucket_max, to
# 1.5x its entries when it is the rightmost one (appends) and by 1/8 otherwise. A full
# bucket (or one at bucket_max whose only room for an append is a small gap at its
# head, see _room) bursts into two:
#   - if its keys (with the new one) differ at the parent's byte, the parent's child
#     range is split at a byte boundary: near the middle, or, when the new key is the
#     bucket's largest (appends), so the left bucket keeps all it can; the left bucket
#     is trimmed to fit since appends will not come back to it, and at the tree's end
#     the right one starts at half the full size, as the appends go on there;
#   - otherwise (or for a root bucket) it becomes a new inner node at the first byte
#     where its keys differ, split the same way.
# A key that disagrees with an inner node's prefix gets a new bucket: beside the node in
# the parent when they differ at the parent's byte, else under a new inner node at the
# first differing byte. When that key lies after the node (appends), the node's last
# bucket is trimmed: it will not grow any more.
#
# Shrinking. A bucket is trimmed when 1/4 of it is unused (the rightmost one, where
# appends land, only beyond the 1/3 a grow leaves): well beyond what its last grow left
# unused, so that a bucket taking scattered inserts and removals in turn (entries
# moving between consumers) does not realloc at every one of them. It is freed when
# empty (a neighbour takes its range), merged with an adjacent sibling bucket when both
# fit in 3/4 of a full one, and an inner node left with a single child is replaced by
# that child. Removing a bucket's first entries (acks in order) moves nothing: the
# bucket keeps a gap at its head, given back when it is trimmed or filled when the tail
# runs out of room. A tree of one bucket (a consumer's PEL, read into and acked in full
# over and over) keeps that bucket's room while it drains, and when it empties keeps
# the bucket itself, cut to SPARE_BYTES, as its `spare` for the next insert: a queue
# refilled after draining then does not shrink and regrow its bucket every time.
#
# Exact lookups descend by key bytes alone and search the bucket: buckets hold full
# keys, so a key outside some prefix is simply not found. Inserts, removes and finds
# first try the buckets the last insert and remove used ("fingers", below): a consumer
# appending IDs and acking them in order then never descends. Keys compare 8 bytes at a
# time as big-endian words (the same order as memcmp). Seeks compare prefixes to tell
# whether a whole subtree lies before or after the key. Iterators keep a copy of the
# current key, their path and the tree's version: a step after any change re-seeks
# from the copied key.
#
# Cache misses. In a tree much larger than the CPU caches a random lookup is bounded by
# memory latency, not by compares, so each step reads as few lines as it can and asks
# for the next ones early:
#   - a bucket is searched by interpolation (_bucket_interior; in trees of 64 KiB or
#     more, see _interpolates): keys are big-endian integers, usually spread evenly
#     within a bucket (sequential IDs, times), so the position guessed from the first
#     and last keys is close and a short gallop from it settles the key: 2-3 lines per
#     bucket instead of the ~7 of a binary search over 4 KiB, and still O(log n)
#     compares when the keys are uneven;
#   - a child is picked without a search where possible (_slot): a full node is
#     indexed by the byte, a small one counted through branch-free, a big one
#     binary-searched with conditional moves;
#   - descents in trees of 1 MiB or more prefetch (_prefetch_child, _prefetch_bucket):
#     an inner node's second line together with its first, and, as soon as a bucket's
#     address is known, the lines its search will read (the last key of a full bucket,
#     the entries where the key falls if the bucket's keys fill its child range evenly)
#     and, for a remove or insert, the entries it will move. These lines then load in
#     parallel with the bucket's header instead of one after another; a wrong guess
#     costs only bandwidth;
#   - what remains is about one miss per level below the top of the tree and one per
#     bucket, per lookup. radix_locate_many lets a caller with a batch of lookups
#     overlap those of different keys (see "Batched lookups").

from libc.string cimport memcmp, memcpy, memmove, memset

from engine.core.memory cimport mem_alloc, mem_realloc, mem_free, mem_used

cdef extern from "<malloc.h>":
    size_t malloc_usable_size(void* ptr) nogil

cdef extern from *:
    """
    /* The 8 bytes at p as a big-endian integer: these compare like memcmp. */
    static inline uint64_t radix_be64(const uint8_t* p) {
        uint64_t v;
        memcpy(&v, p, 8);
    #if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        v = __builtin_bswap64(v);
    #elif __BYTE_ORDER__ != __ORDER_BIG_ENDIAN__
    #error "radix: unknown byte order"
    #endif
        return v;
    }
    static inline uint32_t radix_clz64(uint64_t x) { return (uint32_t)__builtin_clzll(x); }

    /* Interpolation inside a bucket. Keys are compared through a 16-byte "window"
       [s, s + 16) holding the first byte where the bucket's first and last keys differ
       (the bytes before s are the same in every key between them), read as two
       big-endian words hi:lo. Stream IDs (ms:seq) and times are mixed-radix numbers:
       seq restarts near 0 every ms, so hi:lo as one 128-bit integer would bunch the
       keys of each ms together; instead lo is taken to run from 0 to the larger lo of
       the first and last keys within each hi, i.e. v = (hi - hi_first) * r + lo with
       r = max(lo_first, lo_last) + 1. When lo is large (random keys) r is about 2^64
       and v is the plain 128-bit number again. Keys shorter than 16 bytes are one
       number, padded with zeros on the right. Only a guess: the search around it makes
       the result exact whatever the keys. (Without a 128-bit type the window is the 8
       bytes at s: coarser guesses, the same results.) */
    #ifdef __SIZEOF_INT128__
    typedef unsigned __int128 radix_u128;
    #define RADIX_WINDOW 16
    #else
    typedef uint64_t radix_u128;
    #define RADIX_WINDOW 8
    #endif

    static inline radix_u128 radix_window(const uint8_t* p, uint32_t key_len) {
        radix_u128 v = 0;
        uint32_t i;
        for (i = 0; i < RADIX_WINDOW; i++)
            v = (v << 8) | (i < key_len ? p[i] : 0);
        return v;
    }

    /* Where key would be among n keys spread evenly from first to last (first < key
       < last): a position in [0, n - 1]. */
    static inline uint32_t radix_guess(const uint8_t* first, const uint8_t* last,
                                       const uint8_t* key, uint32_t s, uint32_t key_len,
                                       uint32_t n) {
        radix_u128 vf, vl, vk, range, off;
        uint32_t r, o, bits;
        if (key_len >= RADIX_WINDOW) {
    #if RADIX_WINDOW == 16
            uint64_t hf = radix_be64(first + s), lf = radix_be64(first + s + 8);
            uint64_t hl = radix_be64(last + s), ll = radix_be64(last + s + 8);
            uint64_t hk = radix_be64(key + s), lk = radix_be64(key + s + 8);
            radix_u128 radix = (radix_u128)(lf > ll ? lf : ll) + 1;
            vf = lf;
            vl = (radix_u128)(hl - hf) * radix + ll;
            vk = (radix_u128)(hk - hf) * radix + lk;
    #else
            vf = radix_be64(first + s);
            vl = radix_be64(last + s);
            vk = radix_be64(key + s);
    #endif
        } else {
            vf = radix_window(first, key_len);
            vl = radix_window(last, key_len);
            vk = radix_window(key, key_len);
        }
        if (vl <= vf)
            return 0;
        range = vl - vf;
        off = vk > vf ? vk - vf : 0;
        if (off > range)
            off = range;
    #if RADIX_WINDOW == 16
        bits = (uint64_t)(range >> 64) ? 128 - (uint32_t)__builtin_clzll((uint64_t)(range >> 64))
                                       : 64 - (uint32_t)__builtin_clzll((uint64_t)range | 1);
    #else
        bits = 64 - (uint32_t)__builtin_clzll(range | 1);
    #endif
        if (bits > 20) {        /* 20 bits: off * (n - 1) fits 32 (n <= 4080) */
            range >>= bits - 20;
            off >>= bits - 20;
        }
        r = (uint32_t)range;
        o = (uint32_t)off;
        return (o * (n - 1) + (r >> 1)) / r;
    }

    /* The empty asm keeps GCC from deeming a function that only prefetches free of
       side effects, and so dropping the calls to it. */
    static inline void radix_prefetch(const void* p) {
        __builtin_prefetch(p, 0, 3);
        __asm__ __volatile__("" : : "r"(p));
    }
    """
    uint64_t radix_be64(const uint8_t* p) nogil
    uint32_t radix_clz64(uint64_t x) nogil     # x != 0
    uint32_t radix_guess(const uint8_t* first, const uint8_t* last, const uint8_t* key,
                         uint32_t s, uint32_t key_len, uint32_t n) nogil
    enum: RADIX_WINDOW          # bytes of a key's window (16, or 8)
    void radix_prefetch(const void* p) nogil

cdef enum:                 # (HDR, MAX_CHILDREN, SPARE_BYTES: radix.pxd)
    BUCKET_BYTES = 4088    # a full bucket; glibc serves it from a 4096-byte chunk
    TRIM_MIN = 32          # smallest tail malloc can reuse (glibc's MINSIZE)


# ---- allocation, counted per tree ----

# engine.core.memory counts malloc_usable_size of every block; the tree's share is the change
# in that count (cheaper than asking malloc again). Every change of the tree's shape
# allocates, moves or frees a node, so these three also forget the fingers and count
# the change in t.shape (see "Fingers" and "Batched lookups" below).

cdef inline void _forget_fingers(RadixTree* t) noexcept:
    t.finger[0].bucket = NULL
    t.finger[1].bucket = NULL
    t.shape += 1


cdef void* _alloc(RadixTree* t, size_t size) except NULL:
    cdef size_t before = mem_used()
    cdef void* p = mem_alloc(size)
    t.bytes += mem_used() - before
    _forget_fingers(t)
    return p


cdef void* _realloc(RadixTree* t, void* p, size_t size) except NULL:
    cdef size_t before = mem_used()
    p = mem_realloc(p, size)
    t.bytes += mem_used() - before      # modulo 2**64 when it shrank: still exact
    _forget_fingers(t)
    return p


cdef void* _try_realloc(RadixTree* t, void* p, size_t size) noexcept:
    """For optional reallocs (trims, merges): NULL on failure, p left intact."""
    try:
        return _realloc(t, p, size)
    except MemoryError:
        return NULL


cdef void _free(RadixTree* t, void* p) noexcept:
    cdef size_t before = mem_used()
    mem_free(p)
    t.bytes -= before - mem_used()
    _forget_fingers(t)


# ---- keys ----

cdef inline int _cmp(const uint8_t* a, const uint8_t* b, uint32_t n) noexcept:
    """The sign of memcmp(a, b, n), 8 bytes at a time (no call for 16/24-byte keys)."""
    cdef uint32_t i = 0
    cdef uint64_t x, y
    while i + 8 <= n:
        x = radix_be64(a + i)
        y = radix_be64(b + i)
        if x != y:
            return -1 if x < y else 1
        i += 8
    while i < n:
        if a[i] != b[i]:
            return -1 if a[i] < b[i] else 1
        i += 1
    return 0


cdef inline int _kcmp(const RadixTree* t, const uint8_t* a, const uint8_t* b) noexcept:
    return _cmp(a, b, t.key_len)


cdef inline uint32_t _kdiff(const RadixTree* t, const uint8_t* a, const uint8_t* b,
                            int* sign) noexcept:
    """Index of the first byte where keys a and b differ (key_len if none), with the
    sign of memcmp(a, b) in sign."""
    cdef uint32_t i = 0, n = t.key_len
    cdef uint64_t x, y
    while i + 8 <= n:
        x = radix_be64(a + i)
        y = radix_be64(b + i)
        if x != y:
            sign[0] = -1 if x < y else 1
            return i + (radix_clz64(x ^ y) >> 3)
        i += 8
    while i < n:
        if a[i] != b[i]:
            sign[0] = -1 if a[i] < b[i] else 1
            return i
        i += 1
    sign[0] = 0
    return n


# ---- buckets ----

# (_entry and _bucket_size, which read the layout, are in radix.pxd)

cdef inline void _bucket_fit_cap(const RadixTree* t, RadixBucket* b) noexcept:
    """cap = what the block really holds (malloc rounds up), at most bucket_max."""
    cdef size_t c = (malloc_usable_size(b) - HDR) // t.entry_len
    b.cap = <uint16_t>(c if c < t.bucket_max else t.bucket_max)


cdef RadixBucket* _bucket_new(RadixTree* t, uint32_t n) except NULL:
    cdef RadixBucket* b = <RadixBucket*>_alloc(t, _bucket_size(t, n))
    b.count = 0
    b.head = 0
    _bucket_fit_cap(t, b)
    return b


cdef inline void _bucket_compact(const RadixTree* t, RadixBucket* b) noexcept:
    """Moves the entries to the start of the block (head 0)."""
    if b.head:
        memmove(<uint8_t*>b + HDR, _entry(t, b, 0), <size_t>b.count * t.entry_len)
        b.head = 0


cdef RadixBucket* _bucket_grow(RadixTree* t, RadixBucket* b, bint rightmost) except NULL:
    """Room for more entries (compacted): 1.5x for the rightmost bucket, 1/8 more for
    others; both less than _wants_trim lets the bucket keep unused, so that inserts and
    removals in turn do not alternate grows and trims."""
    cdef uint32_t n = b.count + ((b.count >> 1) if rightmost else (b.count >> 3))
    if n == b.count:
        n += 1
    if n > t.bucket_max:
        n = t.bucket_max
    _bucket_compact(t, b)
    b = <RadixBucket*>_realloc(t, b, _bucket_size(t, n))
    _bucket_fit_cap(t, b)
    return b


cdef RadixBucket* _bucket_trim(RadixTree* t, RadixBucket* b) noexcept:
    """Gives back the unused part of b's block (compacting it) if malloc can reuse it."""
    cdef RadixBucket* nb
    if ((<size_t>b.cap - b.count) * t.entry_len < TRIM_MIN    # else surely worth it
            and malloc_usable_size(b) < _bucket_size(t, b.count) + TRIM_MIN):
        return b
    _bucket_compact(t, b)
    nb = <RadixBucket*>_try_realloc(t, b, _bucket_size(t, b.count))
    if nb == NULL:
        return b
    _bucket_fit_cap(t, nb)
    return nb


cdef inline void _copy(void* dst, const void* src, uint32_t n) noexcept:
    """memcpy for a key or value: inline 8-byte moves when n is a multiple of 8 (the
    common lengths), instead of a library call for a few bytes."""
    cdef uint32_t i = 0
    if n & 7:
        memcpy(dst, src, n)
        return
    while i < n:
        memcpy(<uint8_t*>dst + i, <const uint8_t*>src + i, 8)
        i += 8


cdef inline void _write(const RadixTree* t, uint8_t* e, const uint8_t* key,
                        const void* value) noexcept:
    _copy(e, key, t.key_len)
    if value != NULL:
        _copy(e + t.key_len, value, t.value_len)
    elif t.value_len:
        memset(e + t.key_len, 0, t.value_len)


cdef inline void _bucket_put(const RadixTree* t, RadixBucket* b, uint32_t pos,
                             const uint8_t* key, const void* value) noexcept:
    """Inserts at pos; the caller ensured count < cap. The entries before pos move down
    into the head gap when they are the fewer, or when there is no room at the tail
    and pos is not the end; an append with no room at the tail compacts the bucket
    first (one move of everything pays for `head` appends)."""
    cdef size_t el = t.entry_len
    cdef uint8_t* e
    if b.head and (pos * 2 < b.count or (b.head + b.count == b.cap and pos < b.count)):
        e = _entry(t, b, 0)
        memmove(e - el, e, pos * el)
        b.head -= 1
    else:
        if b.head + b.count == b.cap:
            _bucket_compact(t, b)
        if pos < b.count:       # not an append
            e = _entry(t, b, pos)
            memmove(e + el, e, (b.count - pos) * el)
    _write(t, _entry(t, b, pos), key, value)
    b.count += 1


cdef enum:
    ROOM_PUT, ROOM_GROW, ROOM_BURST


cdef inline int _room(const RadixTree* t, RadixBucket* b, uint32_t pos) noexcept:
    """How to make room for an entry at pos: ROOM_PUT (_bucket_put finds it), else
    ROOM_GROW or, at the size limit, ROOM_BURST. A head gap under 1/8 of the bucket does
    not count as room for an append when using it means compacting: in a queue that
    fills its bucket (acks free a slot at the head, appends need one at the tail) that
    would move the whole bucket every few steps. An insert before the end uses the gap
    (it moves the entries before it, which a burst would move as well)."""
    if b.count == b.cap or (b.head + b.count == b.cap and pos == b.count
                            and b.head * 8 < b.cap):
        return ROOM_BURST if b.cap == t.bucket_max else ROOM_GROW
    return ROOM_PUT


cdef inline void _bucket_del(const RadixTree* t, RadixBucket* b, uint32_t pos) noexcept:
    """Removes entry pos, closing the hole from the shorter side: removing the first
    entry (acks in order) moves nothing, it just widens the head gap."""
    cdef size_t el = t.entry_len
    cdef uint8_t* e
    if pos * 2 < b.count:
        if pos:
            e = _entry(t, b, 0)
            memmove(e + el, e, pos * el)
        b.head += 1
    else:
        e = _entry(t, b, pos)
        memmove(e, e + el, (b.count - pos - 1) * el)
    b.count -= 1


cdef inline uint32_t _bucket_search(const RadixTree* t, RadixBucket* b, const uint8_t* key,
                                    uint32_t lo, uint32_t hi, bint* found) noexcept:
    """Index of key, or where it would be inserted, knowing it is in [lo, hi]."""
    cdef uint32_t mid
    cdef int c
    while lo < hi:
        mid = (lo + hi) >> 1
        c = _kcmp(t, _entry(t, b, mid), key)
        if c < 0:
            lo = mid + 1
        elif c > 0:
            hi = mid
        else:
            found[0] = 1
            return mid
    found[0] = 0
    return lo


# Interpolation and prefetching pay where a bucket search costs cache misses or
# mispredicted branches. In a tiny tree the branch predictor learns a binary search's
# few paths (a scan seeking one ID after another repeats them) and it beats the
# arithmetic of a guess; prefetching a tree that fits in the CPU caches is overhead.
cdef enum:
    INTERP_MIN = 8                  # buckets of more entries are searched by interpolation
    INTERP_MIN_BYTES = 1 << 16      # ... in trees of this size or more
    PREFETCH_MIN_BYTES = 1 << 20    # smaller trees are taken to be in the CPU caches

cdef bint _all_big = 0              # tests: every tree interpolates and prefetches


cdef inline bint _interpolates(const RadixTree* t, uint32_t n) noexcept:
    """Whether a bucket of n entries in t is searched by interpolation."""
    return n > INTERP_MIN and (t.bytes >= INTERP_MIN_BYTES or _all_big)


cdef inline bint _big(const RadixTree* t) noexcept:
    """Whether prefetching pays."""
    return t.bytes >= PREFETCH_MIN_BYTES or _all_big

# What a bucket search is for: a remove or insert then moves the entries between the
# key's position and one end of the bucket, whose lines the search starts loading.
cdef enum:
    FOR_FIND, FOR_REMOVE, FOR_INSERT


cdef inline void _prefetch_moved(const RadixTree* t, RadixBucket* b, uint32_t g,
                                 int purpose) noexcept:
    """For a remove or insert at about position g: starts loading the entries that
    _bucket_del / _bucket_put will move (the first and last lines are loaded already)."""
    cdef uint8_t* p
    cdef uint8_t* end
    if purpose == FOR_FIND or not _big(t):
        return
    if g * 2 < b.count and (purpose == FOR_REMOVE or b.head):
        p = _entry(t, b, 0) + 64
        end = _entry(t, b, g)
    else:
        p = _entry(t, b, g)
        end = _entry(t, b, b.count - 1)
    while p < end:
        radix_prefetch(p)
        p += 64


cdef inline uint32_t _guess(const RadixTree* t, RadixBucket* b, uint32_t lo, uint32_t hi,
                            const uint8_t* key) noexcept:
    """Where key would be among entries lo..hi of b (lo < hi) if they were spread
    evenly from entry lo's key to entry hi's (radix_guess): a position in [lo, hi]."""
    cdef uint32_t s = 0
    cdef int c
    cdef const uint8_t* first = _entry(t, b, lo)
    cdef const uint8_t* last = _entry(t, b, hi)
    if t.key_len > RADIX_WINDOW:
        # The window must hold the first byte where first and last differ (the bytes
        # before it are the same in every key of the bucket, and in key); it starts on
        # an 8-byte boundary so that its words are the key's fields (time, ms, seq).
        s = _kdiff(t, first, last, &c) & ~7u
        if s > t.key_len - RADIX_WINDOW:
            s = t.key_len - RADIX_WINDOW
    return lo + radix_guess(first, last, key, s, t.key_len, hi - lo + 1)


cdef inline uint32_t _bucket_interior(const RadixTree* t, RadixBucket* b,
                                      const uint8_t* key, bint* found,
                                      int purpose) noexcept:
    """Index of key, or where it would be inserted, knowing that it lies strictly
    between the bucket's first and last keys (so the answer is in [1, count - 1]).

    Interpolation: keys are big-endian integers and a bucket's keys are usually spread
    evenly (sequential IDs, times), so the guess from the first and last keys is close,
    and a gallop from it (steps 1, 2, 4, ...) then a binary search settle it. That reads
    the lines near the guess instead of the ~log2(count) lines of a binary search; an
    uneven bucket costs at most about twice the compares of a binary search."""
    cdef uint32_t n = b.count, g, a, z, step
    cdef int c
    if not _interpolates(t, n):
        return _bucket_search(t, b, key, 1, n - 1, found)
    g = _guess(t, b, 0, n - 1, key)
    if g < 1:
        g = 1
    elif g > n - 2:
        g = n - 2
    _prefetch_moved(t, b, g, purpose)
    c = _kcmp(t, _entry(t, b, g), key)
    if c == 0:
        found[0] = 1
        return g
    if c < 0:
        # key in (g, n - 1]: gallop right from a = g (entry a < key < entry z).
        a = g
        z = n - 1
        step = 1
        while a + step < z:
            c = _kcmp(t, _entry(t, b, a + step), key)
            if c == 0:
                found[0] = 1
                return a + step
            if c > 0:
                z = a + step
                break
            a += step
            step <<= 1
        return _bucket_search(t, b, key, a + 1, z, found)
    # key in [1, g): gallop left from z = g (entry a < key < entry z).
    a = 0
    z = g
    step = 1
    while z > a + step:
        c = _kcmp(t, _entry(t, b, z - step), key)
        if c == 0:
            found[0] = 1
            return z - step
        if c < 0:
            a = z - step
            break
        z -= step
        step <<= 1
    return _bucket_search(t, b, key, a + 1, z, found)


cdef inline uint32_t _bucket_find(const RadixTree* t, RadixBucket* b, const uint8_t* key,
                                  bint* found, int purpose=FOR_FIND) noexcept:
    """Index of key, or where it would be inserted."""
    cdef uint32_t n = b.count
    cdef int c
    if not _interpolates(t, n):
        return _bucket_search(t, b, key, 0, n, found)
    c = _kcmp(t, key, _entry(t, b, n - 1))
    if c >= 0:
        found[0] = c == 0
        return n - 1 if c == 0 else n
    c = _kcmp(t, key, _entry(t, b, 0))
    if c <= 0:
        found[0] = c == 0
        return 0
    return _bucket_interior(t, b, key, found, purpose)


# ---- inner nodes ----

# (_prefix, _children_offset and _children, which read the layout, are in radix.pxd)

cdef inline void _inner_fit_cap(RadixInner* n) noexcept:
    cdef size_t c = (malloc_usable_size(n) - _children_offset(n.depth)) // sizeof(RadixChild)
    n.cap = <uint16_t>(c if c < MAX_CHILDREN else MAX_CHILDREN)


cdef RadixInner* _inner_new(RadixTree* t, const uint8_t* prefix, uint32_t depth) except NULL:
    """An empty node with room for two children."""
    cdef RadixInner* n = <RadixInner*>_alloc(
        t, _children_offset(depth) + 2 * sizeof(RadixChild))
    n.n = 0
    n.depth = <uint8_t>depth
    memcpy(_prefix(n), prefix, depth)
    _inner_fit_cap(n)
    return n


cdef inline uint32_t _slot(RadixInner* n, uint8_t byte) noexcept:
    """Index of the child whose range holds byte. A full node is indexed directly (its
    ranges are single bytes); in a small one the children whose range starts at or
    below byte are counted without branches (a few lines, read in parallel rather than
    one after the other as a binary search does); a big one is binary-searched without
    branches too (conditional moves: random keys would mispredict half of its steps)."""
    cdef RadixChild* ch = _children(n)
    cdef uint32_t cnt = n.n, lo = 0, half, j
    if cnt == MAX_CHILDREN:
        return byte
    if cnt <= 16:
        for j in range(1, cnt):
            lo += ch[j].lo <= byte
        return lo
    while cnt > 1:              # the last child whose range starts at or below byte
        half = cnt >> 1
        lo = lo + half if ch[lo + half].lo <= byte else lo
        cnt -= half
    return lo


cdef inline void _prefetch_child(const RadixTree* t, RadixChild* c) noexcept:
    """Starts loading the second line of the inner node c points to, alongside the
    first (which the next step reads at once): a small node's children start in its
    first line and mostly end in the second, as malloc aligns blocks to 16 bytes."""
    if c.is_inner and _big(t):
        radix_prefetch(<uint8_t*>c.ptr + 64)


cdef inline void _set_child(RadixChild* c, void* ptr, bint is_inner, uint8_t lo) noexcept:
    c.ptr = ptr
    c.is_inner = is_inner
    c.lo = lo


cdef inline void _inner_insert(RadixInner* n, uint32_t i, void* ptr, bint is_inner,
                               uint8_t lo) noexcept:
    """Inserts child i; the caller ensured n < cap."""
    cdef RadixChild* ch = _children(n)
    memmove(&ch[i + 1], &ch[i], (n.n - i) * sizeof(RadixChild))
    _set_child(&ch[i], ptr, is_inner, lo)
    n.n += 1


cdef inline void _inner_delete(RadixInner* n, uint32_t i) noexcept:
    """Removes child i; its range goes to the left neighbour (right one for i == 0)."""
    cdef RadixChild* ch = _children(n)
    n.n -= 1
    memmove(&ch[i], &ch[i + 1], (n.n - i) * sizeof(RadixChild))
    ch[0].lo = 0


cdef inline void _link(RadixTree* t, RadixFrame* path, uint32_t h, void* ptr,
                       bint is_inner) noexcept:
    """Makes ptr the node at level h of path (level 0 is the root)."""
    cdef RadixChild* c
    if h == 0:
        t.root = ptr
        t.root_is_inner = is_inner
    else:
        c = &_children(path[h - 1].node)[path[h - 1].idx]
        c.ptr = ptr
        c.is_inner = is_inner


cdef int _reserve_child(RadixTree* t, RadixFrame* path, uint32_t h) except -1:
    """Makes room for one more child in path[h].node, moving it if needed.

    Callers only split ranges covering 2+ bytes, so a node never needs a 257th child."""
    cdef RadixInner* n = path[h].node
    cdef size_t want
    if n.n < n.cap:
        return 0
    want = n.cap + (n.cap >> 1) + 1
    if want > MAX_CHILDREN:
        want = MAX_CHILDREN
    n = <RadixInner*>_realloc(t, n, _children_offset(n.depth) + want * sizeof(RadixChild))
    _inner_fit_cap(n)
    path[h].node = n
    _link(t, path, h, n, 1)
    return 0


cdef void _inner_trim(RadixTree* t, RadixFrame* path, uint32_t h) noexcept:
    """Shrinks path[h].node's child array once at most half of it is used."""
    cdef RadixInner* n = path[h].node
    if n.n * 2 > n.cap:
        return
    n = <RadixInner*>_try_realloc(
        t, n, _children_offset(n.depth) + n.n * sizeof(RadixChild))
    if n == NULL:
        return
    _inner_fit_cap(n)
    path[h].node = n
    _link(t, path, h, n, 1)


cdef inline uint32_t _common(const uint8_t* a, const uint8_t* b, uint32_t n) noexcept:
    """Length of the common prefix of a[:n] and b[:n]."""
    cdef uint32_t i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


cdef inline void _prefetch_bucket(const RadixTree* t, void* b, RadixInner* par,
                                  uint32_t i, const uint8_t* key, int purpose) noexcept:
    """Starts loading the lines of bucket b (child i of par) that a search for key will
    read, while its header is being read: the search needs the last key, the lines
    near key's position and, for a remove or insert, those of the entries it moves.
    Both are guessed assuming that the bucket is full (most are, or nearly) and that
    its keys are spread evenly over its child range (true of sequential IDs); a wrong
    guess only costs the bandwidth of a few lines."""
    cdef RadixChild* ch
    cdef uint32_t lo, hi
    cdef size_t span = <size_t>t.bucket_max * t.entry_len, at
    cdef uint8_t* e = <uint8_t*>b + HDR
    cdef uint8_t* p
    cdef uint8_t* end
    if not _big(t):
        return
    radix_prefetch(e + span - t.entry_len)
    if par == NULL:
        return
    ch = _children(par)
    lo = ch[i].lo
    hi = ch[i + 1].lo if i + 1 < par.n else 256
    at = <uint32_t>span * <uint32_t>(key[par.depth] - lo) // (hi - lo)     # < 2^20
    radix_prefetch(e + at)
    if purpose == FOR_FIND:
        return
    if purpose == FOR_REMOVE and at * 2 < span:
        p = e + 64
        end = e + at
    else:
        p = e + at + 64
        end = e + span - t.entry_len
    while p < end:
        radix_prefetch(p)
        p += 64


cdef inline void _prefetch_bucket_read(const RadixTree* t, RadixBucket* b, RadixInner* par,
                                       uint32_t i, const uint8_t* key) noexcept:
    """_prefetch_bucket for a batch of finds, whose descents have already asked for the
    header of b: reads it (by then it has arrived, or is about to) and so places the
    lines by the bucket's real entry count instead of assuming a full bucket."""
    cdef RadixChild* ch
    cdef uint32_t lo, hi, n = b.count
    radix_prefetch(_entry(t, b, n - 1))
    if par == NULL:
        return
    ch = _children(par)
    lo = ch[i].lo
    hi = ch[i + 1].lo if i + 1 < par.n else 256
    radix_prefetch(_entry(t, b, n * (key[par.depth] - lo) // (hi - lo)))   # < n


cdef RadixBucket* _descend(const RadixTree* t, const uint8_t* key, RadixFrame* path,
                           uint32_t* height, int purpose=FOR_FIND) noexcept:
    """The bucket whose range holds key, found by key bytes alone (the bucket's binary
    search settles membership). Records the inner nodes passed when path is not NULL."""
    cdef void* node = t.root
    cdef bint is_inner = t.root_is_inner
    cdef RadixInner* n = NULL
    cdef RadixChild* c
    cdef uint32_t i = 0, h = 0
    while is_inner:
        n = <RadixInner*>node
        i = _slot(n, key[n.depth])
        if path != NULL:
            path[h].node = n
            path[h].idx = i
        h += 1
        c = &_children(n)[i]
        _prefetch_child(t, c)
        node = c.ptr
        is_inner = c.is_inner
    if height != NULL:
        height[0] = h
    _prefetch_bucket(t, node, n, i, key, purpose)
    return <RadixBucket*>node


# ---- fingers ----
#
# A finger remembers a bucket together with its slot (parent node and child index) and
# whether it is the rightmost bucket. Consumer loops append keys past the end of a PEL
# and ack them back in order, so nearly every operation lands in the bucket the previous
# one used: checking the key against that bucket's first and last keys replaces the
# descent and most of the binary search. The tree keeps two, one for inserts and one
# for removes, since those work at opposite ends.
#
# Validity: a finger describes the tree as it was when it was taken. Changes of entries
# within buckets do not affect it (it reads the bucket's bounds live); any change of
# shape allocates, reallocates or frees a node, and those clear both fingers
# (_forget_fingers). The one exception is made knowingly: a bucket reallocated in place
# of itself (_rebind) keeps its slot, so the fingers only need its new address.
#
# Why a hit is exact: buckets hold disjoint, ordered runs of keys, so a key between a
# bucket's first and last keys belongs to it (shares every prefix on its path and falls
# in each child range there). A key past the rightmost bucket's last key is in no bucket
# (finds and removes stop there), and it would be inserted there iff it shares the
# prefix of the bucket's parent (the deepest inner node on the path; beyond its depth
# any larger byte falls in the last child range). A miss just means a normal descent.

cdef inline bint _finger_hit(const RadixTree* t, const RadixFinger* f, const uint8_t* key,
                             int purpose, uint32_t* pos, bint* found) noexcept:
    """Whether key is (or, for an insert, would go) in f's bucket; then pos and found
    are what _bucket_find would return."""
    cdef RadixBucket* b = f.bucket
    cdef uint32_t last, d
    cdef int c
    if b == NULL:
        return 0
    last = b.count - 1
    d = _kdiff(t, key, _entry(t, b, last), &c)
    if c >= 0:
        if c == 0:
            pos[0] = last
            found[0] = 1
            return 1
        if not f.rightmost:
            return 0
        if purpose == FOR_INSERT and f.parent != NULL and d < f.parent.depth:
            return 0
        pos[0] = b.count
        found[0] = 0
        return 1
    c = _kcmp(t, key, _entry(t, b, 0))
    if c <= 0:
        if c < 0:
            return 0
        pos[0] = 0
        found[0] = 1
        return 1
    pos[0] = _bucket_interior(t, b, key, found, purpose)
    return 1


cdef inline bint _rightmost(RadixFrame* path, uint32_t h) noexcept:
    """Whether the node path leads to (at level h) is the tree's rightmost."""
    cdef uint32_t k
    for k in range(h):
        if path[k].idx + 1 != path[k].node.n:
            return 0
    return 1


cdef inline void _finger_to(RadixFinger* f, RadixBucket* b, RadixFrame* path,
                            uint32_t h) noexcept:
    """f := bucket b, reached at level h through path."""
    f.bucket = b
    f.parent = path[h - 1].node if h > 0 else NULL
    f.idx = <uint16_t>(path[h - 1].idx if h > 0 else 0)
    f.rightmost = _rightmost(path, h)


cdef inline void _finger_set(RadixTree* t, uint32_t i, RadixBucket* b, RadixFrame* path,
                             uint32_t h) noexcept:
    """Finger i := bucket b, reached at level h through path."""
    _finger_to(&t.finger[i], b, path, h)


cdef void _rebind(RadixTree* t, RadixFinger* saved, uint32_t i, RadixBucket* old,
                  RadixBucket* b) noexcept:
    """The bucket of finger saved[i] was reallocated from old to b: links b into its slot
    and restores the fingers as saved (they were cleared), with old's address updated.
    Nothing else moved, so every finger is still exact."""
    cdef RadixFinger* f = &saved[i]
    cdef uint32_t k
    if f.parent == NULL:
        t.root = b
    else:
        _children(f.parent)[f.idx].ptr = b
    for k in range(2):
        t.finger[k] = saved[k]
        if saved[k].bucket == old:
            t.finger[k].bucket = b


cdef RadixBucket* _finger_grow(RadixTree* t, uint32_t i, RadixBucket* b) except NULL:
    """_bucket_grow for the bucket of finger i, keeping the fingers."""
    cdef RadixFinger saved[2]
    saved[0] = t.finger[0]
    saved[1] = t.finger[1]
    cdef RadixBucket* nb = _bucket_grow(t, b, t.finger[i].rightmost)
    _rebind(t, saved, i, b, nb)
    return nb


cdef RadixBucket* _finger_trim(RadixTree* t, uint32_t i, RadixBucket* b) noexcept:
    """_bucket_trim for the bucket of finger i, keeping the fingers."""
    cdef RadixFinger saved[2]
    saved[0] = t.finger[0]
    saved[1] = t.finger[1]
    cdef RadixBucket* nb = _bucket_trim(t, b)
    _rebind(t, saved, i, b, nb)
    return nb


# ---- tree ----

cdef RadixTree* radix_new(uint32_t key_len, uint32_t value_len) except NULL:
    return radix_new_sized(key_len, value_len, BUCKET_BYTES)


cdef RadixTree* radix_new_sized(uint32_t key_len, uint32_t value_len,
                                uint32_t bucket_bytes) except NULL:
    if key_len < 1 or key_len > RADIX_MAX_KEY or value_len > RADIX_MAX_VALUE:
        raise ValueError(f"radix: bad key/value length {key_len}/{value_len}")
    if (bucket_bytes > BUCKET_BYTES or bucket_bytes < HDR
            or (bucket_bytes - HDR) // (key_len + value_len) < 4):
        raise ValueError(f"radix: bad bucket size {bucket_bytes}")
    cdef RadixTree* t = <RadixTree*>mem_alloc(sizeof(RadixTree))
    t.root = NULL
    t.root_is_inner = 0
    t.count = 0
    t.version = 0
    t.shape = 0
    t.key_len = key_len
    t.value_len = value_len
    t.entry_len = key_len + value_len
    t.bucket_max = (bucket_bytes - HDR) // t.entry_len
    memset(t.finger, 0, sizeof(t.finger))
    t.spare = NULL
    t.bytes = malloc_usable_size(t)
    return t


cdef void _free_subtree(RadixTree* t, void* node, bint is_inner) noexcept:
    cdef RadixInner* n
    cdef RadixChild* ch
    cdef uint32_t i
    if is_inner:
        n = <RadixInner*>node
        ch = _children(n)
        for i in range(n.n):
            _free_subtree(t, ch[i].ptr, ch[i].is_inner)
    _free(t, node)


cdef void radix_free(RadixTree* tree) noexcept:
    if tree == NULL:
        return
    if tree.root != NULL:
        _free_subtree(tree, tree.root, tree.root_is_inner)
    mem_free(tree.spare)
    mem_free(tree)


cdef void* _clone_subtree(RadixTree* t, void* node, bint is_inner) except NULL:
    """A copy of node and everything below it, counted in t. On MemoryError the
    copies made so far are freed (never the originals)."""
    cdef size_t size = malloc_usable_size(node)
    cdef void* copy = _alloc(t, size)
    memcpy(copy, node, size)
    if not is_inner:
        return copy
    cdef RadixInner* n = <RadixInner*>copy
    cdef RadixChild* ch = _children(n)
    cdef uint32_t i, count = n.n
    for i in range(count):
        try:
            ch[i].ptr = _clone_subtree(t, ch[i].ptr, ch[i].is_inner)
        except MemoryError:
            n.n = i            # only the children copied so far are this copy's
            _free_subtree(t, copy, True)
            raise
    return copy


cdef RadixTree* radix_clone(const RadixTree* tree) except NULL:
    cdef RadixTree* t = radix_new(tree.key_len, tree.value_len)
    t.bucket_max = tree.bucket_max
    if tree.root != NULL:
        try:
            t.root = _clone_subtree(t, tree.root, tree.root_is_inner)
        except MemoryError:
            radix_free(t)
            raise
        t.root_is_inner = tree.root_is_inner
        t.count = tree.count
    return t


cdef uint64_t radix_count(const RadixTree* tree) noexcept:
    return tree.count


cdef uint64_t _subtree_nodes(void* node, bint is_inner) noexcept:
    cdef RadixInner* n
    cdef RadixChild* ch
    cdef uint32_t i
    cdef uint64_t total = 1
    if is_inner:
        n = <RadixInner*>node
        ch = _children(n)
        for i in range(n.n):
            total += _subtree_nodes(ch[i].ptr, ch[i].is_inner)
    return total


cdef uint64_t radix_node_count(const RadixTree* tree) noexcept:
    if tree.root == NULL:
        return 0
    return _subtree_nodes(tree.root, tree.root_is_inner)


cdef uint64_t radix_bytes(const RadixTree* tree) noexcept:
    return tree.bytes


cdef void* radix_find(const RadixTree* tree, const uint8_t* key) noexcept:
    cdef bint found
    cdef RadixBucket* b
    cdef uint32_t pos
    if tree.root == NULL:
        return NULL
    if _finger_hit(tree, &tree.finger[1], key, FOR_FIND, &pos, &found):
        b = tree.finger[1].bucket
    elif _finger_hit(tree, &tree.finger[0], key, FOR_FIND, &pos, &found):
        b = tree.finger[0].bucket
    else:
        b = _descend(tree, key, NULL, NULL)
        pos = _bucket_find(tree, b, key, &found)
    if not found:
        return NULL
    return _entry(tree, b, pos) + tree.key_len


# ---- insertion ----

cdef void _trim_last_bucket(RadixTree* t, RadixInner* n) noexcept:
    """An append went past this subtree: its last bucket will not grow any more."""
    cdef RadixChild* c
    while True:
        c = &_children(n)[n.n - 1]
        if not c.is_inner:
            break
        n = <RadixInner*>c.ptr
    c.ptr = _bucket_trim(t, <RadixBucket*>c.ptr)


cdef int _insert_beside(RadixTree* t, RadixFrame* path, uint32_t h, RadixInner* node,
                        uint32_t c, const uint8_t* key, const void* value) except -1:
    """Adds key, which differs from the prefix of node (at level h) first at byte c,
    in a new bucket next to node."""
    cdef uint8_t nb = _prefix(node)[c], kb = key[c]
    cdef bint in_parent = h > 0 and path[h - 1].node.depth == c
    cdef RadixInner* m = NULL
    cdef RadixInner* par
    cdef RadixChild* ch
    cdef RadixBucket* b
    cdef uint32_t s
    # Allocate everything first so a failure leaves the tree as it was.
    if in_parent:
        _reserve_child(t, path, h - 1)
    else:
        m = _inner_new(t, key, c)
    try:
        b = _bucket_new(t, 1)
    except BaseException:
        if m != NULL:
            _free(t, m)
        raise
    _bucket_put(t, b, 0, key, value)
    if in_parent:
        # Split node's range in the parent; node keeps the side holding its own byte.
        par = path[h - 1].node
        s = path[h - 1].idx
        if kb < nb:
            _inner_insert(par, s, b, 0, _children(par)[s].lo)
            _children(par)[s + 1].lo = nb
        else:
            _inner_insert(par, s + 1, b, 0, nb + 1)
    else:
        ch = _children(m)
        if kb < nb:
            _set_child(&ch[0], b, 0, 0)
            _set_child(&ch[1], node, 1, nb)
        else:
            _set_child(&ch[0], node, 1, 0)
            _set_child(&ch[1], b, 0, nb + 1)
        m.n = 2
        _link(t, path, h, m, 1)
    if kb > nb:
        _trim_last_bucket(t, node)
    return 0


cdef inline const uint8_t* _vkey(const RadixTree* t, RadixBucket* b, uint32_t pos,
                                 const uint8_t* key, uint32_t i) noexcept:
    """Key i of bucket b as if key were inserted at pos."""
    if i < pos:
        return _entry(t, b, i)
    if i == pos:
        return key
    return _entry(t, b, i - 1)


cdef uint32_t _vbound(const RadixTree* t, RadixBucket* b, uint32_t pos, const uint8_t* key,
                      uint32_t n, uint32_t d, uint32_t v) noexcept:
    """First virtual index whose byte d is >= v (byte d is sorted across the keys)."""
    cdef uint32_t lo = 0, hi = n, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if _vkey(t, b, pos, key, mid)[d] < v:
            lo = mid + 1
        else:
            hi = mid
    return lo


cdef int _burst(RadixTree* t, RadixFrame* path, uint32_t h, RadixBucket* b, uint32_t pos,
                const uint8_t* key, const void* value) except -1:
    """Inserts key at pos of bucket b (at level h, _room says ROOM_BURST) by splitting it
    in two."""
    cdef uint32_t n = b.count + 1, d, m, m2, half, s
    cdef size_t el = t.entry_len
    cdef const uint8_t* first = _vkey(t, b, pos, key, 0)
    cdef const uint8_t* last = _vkey(t, b, pos, key, n - 1)
    cdef bint in_parent = (h > 0 and first[path[h - 1].node.depth]
                           != last[path[h - 1].node.depth])
    cdef RadixInner* mid_node = NULL
    cdef RadixInner* par
    cdef RadixChild* ch
    cdef RadixBucket* r
    cdef uint8_t bound
    # Split on the parent's byte if the keys differ there, else under a new inner node
    # at their first differing byte. Keys [0, m) stay in b, [m, n) go to r.
    d = path[h - 1].node.depth if in_parent else _common(first, last, t.key_len)
    if pos == n - 1:
        m = _vbound(t, b, pos, key, n, d, last[d])
    elif pos == 0:
        m = _vbound(t, b, pos, key, n, d, first[d] + 1u)
    else:
        half = n >> 1
        m = _vbound(t, b, pos, key, n, d, _vkey(t, b, pos, key, half)[d])
        m2 = _vbound(t, b, pos, key, n, d, _vkey(t, b, pos, key, half)[d] + 1u)
        if m == 0 or (m2 < n and m2 - half < half - m):
            m = m2
    if in_parent:
        _reserve_child(t, path, h - 1)
    else:
        mid_node = _inner_new(t, first, d)
    try:
        # Appends past the tree's end keep coming to r: give it room for them now
        # rather than a grow by half at every few.
        r = _bucket_new(t, n - m if pos != n - 1 or not _rightmost(path, h)
                        else max(n - m, t.bucket_max >> 1))
    except BaseException:
        if mid_node != NULL:
            _free(t, mid_node)
        raise
    if pos >= m:
        memcpy(_entry(t, r, 0), _entry(t, b, m), (pos - m) * el)
        _write(t, _entry(t, r, pos - m), key, value)
        memcpy(_entry(t, r, pos - m + 1), _entry(t, b, pos), (b.count - pos) * el)
        b.count = m
    else:
        memcpy(_entry(t, r, 0), _entry(t, b, m - 1), (b.count - m + 1) * el)
        b.count = m - 1
        _bucket_put(t, b, pos, key, value)
    r.count = n - m
    bound = _entry(t, r, 0)[d]
    b = _bucket_trim(t, b)
    if in_parent:
        par = path[h - 1].node
        s = path[h - 1].idx
        _children(par)[s].ptr = b
        _inner_insert(par, s + 1, r, 0, bound)
    else:
        ch = _children(mid_node)
        _set_child(&ch[0], b, 0, 0)
        _set_child(&ch[1], r, 0, bound)
        mid_node.n = 2
        _link(t, path, h, mid_node, 1)
    return 0


cdef int _insert_slow(RadixTree* t, const uint8_t* key, const void* value,
                      bint replace) except -1:
    """_insert by a descent from the root; sets the insert finger on the bucket reached."""
    cdef RadixFrame path[RADIX_MAX_KEY]
    cdef uint32_t h = 0, c, pos
    cdef int room
    cdef void* node = t.root
    cdef bint is_inner = t.root_is_inner, found
    cdef RadixInner* n
    cdef RadixChild* ch
    cdef RadixBucket* b
    if node == NULL:
        if t.spare != NULL:
            b = t.spare
            t.spare = NULL
        else:
            b = _bucket_new(t, 1)
        _bucket_put(t, b, 0, key, value)
        _link(t, path, 0, b, 0)
        _finger_set(t, 0, b, path, 0)
    else:
        while is_inner:
            n = <RadixInner*>node
            c = _common(key, _prefix(n), n.depth)
            if c < n.depth:
                _insert_beside(t, path, h, n, c, key, value)
                break
            path[h].node = n
            path[h].idx = _slot(n, key[n.depth])
            ch = &_children(n)[path[h].idx]
            _prefetch_child(t, ch)
            h += 1
            node = ch.ptr
            is_inner = ch.is_inner
        else:
            b = <RadixBucket*>node
            _prefetch_bucket(t, b, path[h - 1].node if h else NULL,
                             path[h - 1].idx if h else 0, key, FOR_INSERT)
            _finger_set(t, 0, b, path, h)
            pos = _bucket_find(t, b, key, &found, FOR_INSERT)
            if found:
                if replace:
                    _write(t, _entry(t, b, pos), key, value)
                return 0
            room = _room(t, b, pos)
            if room == ROOM_BURST:
                _burst(t, path, h, b, pos, key, value)
            else:
                if room == ROOM_GROW:
                    b = _finger_grow(t, 0, b)
                _bucket_put(t, b, pos, key, value)
    t.count += 1
    t.version += 1
    return 1


cdef int _insert(RadixTree* t, const uint8_t* key, const void* value, bint replace) except -1:
    """Inserts through a finger when one covers key and its bucket has room or can grow;
    otherwise (a miss, a full bucket to burst, an empty tree) by _insert_slow."""
    cdef uint32_t pos
    cdef int room
    cdef bint found
    cdef RadixBucket* b
    if t.root == NULL:
        return _insert_slow(t, key, value, replace)
    if not _finger_hit(t, &t.finger[0], key, FOR_INSERT, &pos, &found):
        if not _finger_hit(t, &t.finger[1], key, FOR_INSERT, &pos, &found):
            return _insert_slow(t, key, value, replace)
        t.finger[0] = t.finger[1]       # the insert finger follows the inserts
    b = t.finger[0].bucket
    if found:
        if replace:
            _write(t, _entry(t, b, pos), key, value)
        return 0
    room = _room(t, b, pos)
    if room == ROOM_BURST:
        return _insert_slow(t, key, value, replace)     # a burst needs the path
    if room == ROOM_GROW:
        b = _finger_grow(t, 0, b)
    _bucket_put(t, b, pos, key, value)
    t.count += 1
    t.version += 1
    return 1


cdef int radix_insert(RadixTree* tree, const uint8_t* key, const void* value) except -1:
    return _insert(tree, key, value, 1)


cdef int radix_try_insert(RadixTree* tree, const uint8_t* key, const void* value) except -1:
    return _insert(tree, key, value, 0)


# ---- removal ----

cdef inline bint _wants_trim(RadixBucket* b, bint rightmost) noexcept:
    """1/4 unused, or for the rightmost bucket more than a grow leaves (1/3, plus the
    entry just removed): appends keep arriving there, and trimming it sooner would
    shrink and regrow it on every step of a queue that fits in one bucket."""
    if rightmost:
        return (b.cap - b.count) * 3 > b.cap + 3
    return (b.cap - b.count) * 4 >= b.cap


cdef inline int _merge_with(const RadixTree* t, RadixInner* par, uint32_t s,
                            RadixBucket* b) noexcept:
    """For b, child s of par: j such that children j and j + 1 (b and a sibling bucket)
    fit together in 3/4 of a full bucket, else -1."""
    cdef uint32_t limit = t.bucket_max * 3 // 4
    cdef RadixChild* ch
    if b.count >= limit:
        return -1       # a sibling bucket holds 1+ entries: no need to fetch one
    ch = _children(par)
    if (s > 0 and not ch[s - 1].is_inner
            and (<RadixBucket*>ch[s - 1].ptr).count + b.count <= limit):
        return s - 1
    if (s + 1 < par.n and not ch[s + 1].is_inner
            and (<RadixBucket*>ch[s + 1].ptr).count + b.count <= limit):
        return s
    return -1


cdef void _settle(RadixTree* t, RadixFrame* path, uint32_t h, RadixBucket* b) noexcept:
    """After b (at level h) lost entries or moved up: trims it and merges it into an
    adjacent sibling bucket while both fit in 3/4 of a full bucket, collapsing a parent
    left with a single child."""
    cdef uint32_t j
    cdef int m
    cdef RadixInner* par
    cdef RadixChild* ch
    cdef RadixBucket* left
    cdef RadixBucket* right
    while True:
        if h == 0:
            return          # a root bucket keeps its room (see _drop)
        if _wants_trim(b, _rightmost(path, h)):
            b = _bucket_trim(t, b)
            _link(t, path, h, b, 0)
        par = path[h - 1].node
        m = _merge_with(t, par, path[h - 1].idx, b)
        if m < 0:
            return
        j = <uint32_t>m
        ch = _children(par)
        left = <RadixBucket*>ch[j].ptr
        right = <RadixBucket*>ch[j + 1].ptr
        _bucket_compact(t, left)
        if left.cap < left.count + right.count:
            left = <RadixBucket*>_try_realloc(t, left, _bucket_size(t, left.count + right.count))
            if left == NULL:
                return
            _bucket_fit_cap(t, left)
            ch[j].ptr = left
        memcpy(_entry(t, left, left.count), _entry(t, right, 0),
               <size_t>right.count * t.entry_len)
        left.count += right.count
        _free(t, right)
        _inner_delete(par, j + 1)
        if par.n == 1:
            _free(t, par)
            h -= 1
            _link(t, path, h, left, 0)
        else:
            path[h - 1].idx = j
            _inner_trim(t, path, h - 1)
        b = left


cdef void _drop(RadixTree* t, RadixFrame* path, uint32_t h, RadixBucket* b) noexcept:
    """Frees the empty bucket b (at level h); the root bucket is kept as the tree's
    spare instead."""
    cdef RadixInner* par
    cdef RadixChild only
    if h == 0:
        _link(t, path, 0, NULL, 0)
        _keep_spare(t, b)
        return
    _free(t, b)
    par = path[h - 1].node
    _inner_delete(par, path[h - 1].idx)
    if par.n > 1:
        _inner_trim(t, path, h - 1)
        return
    only = _children(par)[0]
    _free(t, par)
    _link(t, path, h - 1, only.ptr, only.is_inner)
    if not only.is_inner:
        _settle(t, path, h - 1, <RadixBucket*>only.ptr)


cdef void _keep_spare(RadixTree* t, RadixBucket* b) noexcept:
    """A queue that a consumer drains and refills (a PEL acked in full, then read into
    again) would otherwise free its last bucket and grow a new one from one entry, a
    realloc every few inserts. Kept up to SPARE_BYTES, so an emptied tree holds little."""
    cdef RadixBucket* small
    b.count = 0
    b.head = 0
    if malloc_usable_size(b) > SPARE_BYTES:
        small = <RadixBucket*>_try_realloc(t, b, SPARE_BYTES)
        if small == NULL:
            _free(t, b)
            return
        b = small
        _bucket_fit_cap(t, b)
    _forget_fingers(t)      # b is no longer in the tree
    t.spare = b


cdef RadixBucket* _finger_seek(RadixTree* t, uint32_t i, const uint8_t* key) noexcept:
    """The bucket whose range holds key, by a descent for a remove; finger i is set on
    it."""
    cdef RadixFrame path[RADIX_MAX_KEY]
    cdef uint32_t h
    cdef RadixBucket* b = _descend(t, key, path, &h, FOR_REMOVE)
    _finger_set(t, i, b, path, h)
    return b


cdef void _reshape(RadixTree* t, const uint8_t* key, RadixBucket* b) noexcept:
    """_drop or _settle for b, the bucket key was just removed from, with the path to it
    from a new descent (b is still linked where key leads)."""
    cdef RadixFrame path[RADIX_MAX_KEY]
    cdef uint32_t h
    _descend(t, key, path, &h)
    if b.count == 0:
        _drop(t, path, h, b)
    else:
        _settle(t, path, h, b)


cdef int radix_remove(RadixTree* tree, const uint8_t* key, void* value_out) except -1:
    cdef uint32_t pos
    cdef bint found
    cdef RadixBucket* b
    cdef RadixFinger* f = &tree.finger[1]
    if tree.root == NULL:
        return 0
    if not _finger_hit(tree, f, key, FOR_REMOVE, &pos, &found):
        if _finger_hit(tree, &tree.finger[0], key, FOR_REMOVE, &pos, &found):
            f[0] = tree.finger[0]       # the remove finger follows the removes
        else:
            b = _finger_seek(tree, 1, key)
            pos = _bucket_find(tree, b, key, &found, FOR_REMOVE)
    if not found:
        return 0
    b = f.bucket
    if value_out != NULL:
        _copy(value_out, _entry(tree, b, pos) + tree.key_len, tree.value_len)
    _bucket_del(tree, b, pos)
    tree.count -= 1
    tree.version += 1
    # What _settle / _drop do, done through the finger's slot while only b changes.
    if b.count == 0:
        if f.parent == NULL:
            _drop(tree, NULL, 0, b)     # the root bucket: no path needed
        else:
            _reshape(tree, key, b)
        return 1
    if f.parent != NULL and _wants_trim(b, f.rightmost):    # a root keeps its room
        b = _finger_trim(tree, 1, b)
    if f.parent != NULL and _merge_with(tree, f.parent, f.idx, b) >= 0:
        _reshape(tree, key, b)
    return 1


cdef uint64_t radix_remove_first(RadixTree* tree, uint64_t n) except? 0:
    cdef RadixFrame path[RADIX_MAX_KEY]
    cdef uint8_t smallest[RADIX_MAX_KEY]
    cdef uint32_t h
    cdef uint64_t done = 0, take
    cdef RadixBucket* b
    memset(smallest, 0, RADIX_MAX_KEY)
    while done < n and tree.root != NULL:
        # Key bytes of zero pick the first child at every level: the leftmost bucket.
        b = _descend(tree, smallest, path, &h, FOR_REMOVE)
        take = b.count if b.count < n - done else n - done
        b.head += <uint16_t>take        # the bucket's first entries: a wider head gap
        b.count -= <uint32_t>take
        tree.count -= take
        tree.version += 1
        done += take
        if b.count == 0:
            _drop(tree, path, h, b)
        else:
            _settle(tree, path, h, b)
    return done


# ---- batched lookups ----
#
# A caller with many lookups to make (a claim of 1,000 entries) first locates them in a
# batch with radix_locate_many: the descents advance one level at a time side by side,
# each level's nodes prefetched for every key before any is read, so that in a tree
# bigger than the CPU caches their misses overlap instead of following one another.
# Each key's bucket is remembered as a RadixHint: a finger (see "Fingers") stamped with
# the tree's shape counter. radix_find_at then starts from the hint instead of
# descending again, as long as the shape has not changed since; otherwise it descends.

cdef enum:
    LOCATE_GROUP = 32               # descents advanced side by side


cdef inline bint _worth_prefetching(const RadixTree* t) noexcept:
    """For a batch: a tree of a few dozen KiB may have left the caches by the time a
    batch comes (the program ran in between), and issuing the prefetches costs little
    next to the descents themselves."""
    return t.bytes >= INTERP_MIN_BYTES or _all_big


cdef void radix_locate_many(const RadixTree* t, const uint8_t* keys, uint32_t n,
                            RadixHint* hints) noexcept:
    """Level by level for up to LOCATE_GROUP keys at a time (see "Batched lookups");
    at the buckets, the lines to prefetch are placed by each bucket's header, which
    the last level asked for."""
    cdef void* node[LOCATE_GROUP]
    cdef bint inner[LOCATE_GROUP]
    cdef bint rightmost[LOCATE_GROUP]
    cdef RadixInner* par[LOCATE_GROUP]
    cdef uint32_t idx[LOCATE_GROUP]
    cdef uint32_t base = 0, m, j, i
    cdef bint more
    cdef RadixInner* nd
    cdef RadixChild* c
    cdef const uint8_t* key
    cdef RadixHint* h
    cdef bint prefetching = _worth_prefetching(t)
    while base < n:
        m = n - base if n - base < LOCATE_GROUP else LOCATE_GROUP
        for j in range(m):
            node[j] = t.root
            inner[j] = t.root_is_inner
            rightmost[j] = 1
            par[j] = NULL
            idx[j] = 0
        more = 1
        while more:
            more = 0
            for j in range(m):
                if not inner[j]:
                    continue
                key = keys + <size_t>(base + j) * t.key_len
                nd = <RadixInner*>node[j]
                i = _slot(nd, key[nd.depth])
                c = &_children(nd)[i]
                if prefetching:
                    radix_prefetch(c.ptr)
                    if c.is_inner:
                        radix_prefetch(<uint8_t*>c.ptr + 64)    # see _prefetch_child
                rightmost[j] = rightmost[j] and i + 1 == nd.n
                par[j] = nd
                idx[j] = i
                node[j] = c.ptr
                inner[j] = c.is_inner
                more = 1
        for j in range(m):
            h = &hints[base + j]
            h.finger.bucket = <RadixBucket*>node[j]
            h.finger.parent = par[j]
            h.finger.idx = <uint16_t>idx[j]
            h.finger.rightmost = rightmost[j]
            h.shape = t.shape
            if node[j] != NULL and prefetching:
                _prefetch_bucket_read(t, <RadixBucket*>node[j], par[j], idx[j],
                                      keys + <size_t>(base + j) * t.key_len)
        base += m


cdef inline bint _hint_valid(const RadixTree* tree, const RadixHint* hint) noexcept:
    return hint.finger.bucket != NULL and hint.shape == tree.shape


cdef void* radix_find_at(const RadixTree* tree, const uint8_t* key,
                         const RadixHint* hint) noexcept:
    cdef uint32_t pos
    cdef bint found
    if _hint_valid(tree, hint) and _finger_hit(tree, &hint.finger, key, FOR_FIND, &pos,
                                               &found):
        if not found:
            return NULL
        return _entry(tree, hint.finger.bucket, pos) + tree.key_len
    return radix_find(tree, key)


cdef inline uint32_t _gallop_floor(const RadixTree* t, RadixBucket* b, uint32_t lo,
                                   const uint8_t* key) noexcept:
    """The last entry <= key of b, knowing that entry lo is: steps 1, 2, 4, ... from lo,
    then a binary search (cheap when the key is near, as in a series of keys in order)."""
    cdef uint32_t n = b.count, step = 1, hi = lo + 1, mid
    while hi < n and _kcmp(t, _entry(t, b, hi), key) <= 0:
        lo = hi
        step <<= 1
        hi = lo + step if n - lo > step else n
    while hi - lo > 1:
        mid = (lo + hi) >> 1
        if _kcmp(t, _entry(t, b, mid), key) <= 0:
            lo = mid
        else:
            hi = mid
    return lo


cdef inline bint _cursor_guesses(const RadixTree* t, RadixBucket* b, uint32_t pos) noexcept:
    """Whether a floor from entry pos of cursor bucket b starts from a guess."""
    return pos + 2 < b.count and _interpolates(t, b.count)


cdef inline uint32_t _floor_from(const RadixTree* t, RadixBucket* b, uint32_t pos,
                                 const uint8_t* key) noexcept:
    """The last entry <= key of b, knowing that entry pos is: a gallop from the entry
    guessed between pos and the last one (_guess, where radix_floor_prefetch asked for
    the lines), or from pos itself in a bucket not searched by interpolation."""
    cdef uint32_t g
    cdef bint found
    if _cursor_guesses(t, b, pos):
        g = _guess(t, b, pos, b.count - 1, key)
        if g > pos and _kcmp(t, _entry(t, b, g), key) > 0:
            g = _bucket_search(t, b, key, pos + 1, g, &found)
            return g if found else g - 1
        pos = g
    return _gallop_floor(t, b, pos, key)


cdef inline RadixBucket* _cursor_bucket(const RadixTree* tree, const RadixHint* cursor,
                                        const uint8_t* key) noexcept:
    """The cursor's bucket if key's floor is in it at or after the cursor's entry (key
    lies between that entry and the bucket's last, or past it in the last bucket), else
    NULL."""
    cdef RadixBucket* b
    if cursor == NULL or not _hint_valid(tree, cursor):
        return NULL
    b = cursor.finger.bucket
    if (cursor.pos < b.count and _kcmp(tree, _entry(tree, b, cursor.pos), key) <= 0
            and (cursor.finger.rightmost
                 or _kcmp(tree, key, _entry(tree, b, b.count - 1)) <= 0)):
        return b
    return NULL


cdef void radix_floor_prefetch(const RadixTree* tree, const uint8_t* key,
                               const RadixHint* cursor) noexcept:
    cdef RadixBucket* b = _cursor_bucket(tree, cursor, key)
    cdef uint8_t* e
    if b == NULL or not _cursor_guesses(tree, b, cursor.pos):
        return
    e = _entry(tree, b, _guess(tree, b, cursor.pos, b.count - 1, key))
    radix_prefetch(e)
    radix_prefetch(e + tree.entry_len)      # the next entry: the floor's upper bound


cdef const uint8_t* radix_floor(const RadixTree* tree, const uint8_t* key,
                                const uint8_t** next, RadixHint* cursor) noexcept:
    """From the cursor's entry when key lies in its bucket at or after it (_floor_from),
    else a descent by key bytes and a bucket search. Either answer is exact
    when key lies within the bucket's keys (buckets hold disjoint, ordered runs);
    otherwise (the floor may be in another bucket, and a descent by bytes alone ignores
    prefixes) the iterator's seek settles it."""
    cdef RadixFrame path[RADIX_MAX_KEY]
    cdef uint32_t h, pos
    cdef RadixBucket* b
    cdef RadixIter it
    cdef bint found
    if tree.root == NULL:
        return NULL
    b = _cursor_bucket(tree, cursor, key)
    if b != NULL:
        pos = _floor_from(tree, b, cursor.pos, key)
    else:
        b = _descend(tree, key, NULL if cursor == NULL else path, &h)
        pos = _bucket_find(tree, b, key, &found)
        if cursor != NULL:
            _finger_to(&cursor.finger, b, path, h)
            cursor.shape = tree.shape
        if not found:
            if pos == 0 or (pos == b.count and not (cursor != NULL
                                                     and cursor.finger.rightmost)):
                radix_iter_init(&it, <RadixTree*>tree)
                if not _seek(&it, RADIX_LE, key):
                    return NULL
                b = it.bucket
                pos = it.idx
                if cursor != NULL:
                    cursor.finger.bucket = NULL     # not where the descent went
            else:
                pos -= 1
    if cursor != NULL:
        cursor.pos = pos
    if next != NULL:
        next[0] = _entry(tree, b, pos + 1) if pos + 1 < b.count else NULL
    return _entry(tree, b, pos)


# ---- iteration ----

cdef inline int _iter_at(RadixIter* it, RadixBucket* b, uint32_t idx) noexcept:
    cdef const RadixTree* t = it.tree
    cdef uint8_t* e = _entry(t, b, idx)
    it.bucket = b
    it.idx = idx
    memcpy(it.key, e, t.key_len)
    it.value = e + t.key_len
    it.version = t.version
    it.positioned = 1
    return 1


cdef int _iter_edge(RadixIter* it, void* node, bint is_inner, bint forward) noexcept:
    """Positions on the first (forward) or last entry of a subtree, extending the path."""
    cdef RadixInner* n
    cdef RadixChild* c
    cdef RadixBucket* b
    cdef uint32_t i
    while is_inner:
        n = <RadixInner*>node
        i = 0 if forward else n.n - 1u
        it.path[it.height].node = n
        it.path[it.height].idx = i
        it.height += 1
        c = &_children(n)[i]
        node = c.ptr
        is_inner = c.is_inner
    b = <RadixBucket*>node
    return _iter_at(it, b, 0 if forward else b.count - 1u)


cdef int _iter_leave(RadixIter* it, bint forward) noexcept:
    """Positions on the entry after (forward) / before the subtree the path ends in."""
    cdef RadixFrame* f
    cdef RadixChild* c
    while it.height > 0:
        f = &it.path[it.height - 1]
        if forward and f.idx + 1 < f.node.n:
            f.idx += 1
        elif not forward and f.idx > 0:
            f.idx -= 1
        else:
            it.height -= 1
            continue
        c = &_children(f.node)[f.idx]
        return _iter_edge(it, c.ptr, c.is_inner, forward)
    it.positioned = 0
    return 0


cdef int _seek(RadixIter* it, RadixSeekOp op, const uint8_t* key) noexcept:
    cdef const RadixTree* t = it.tree
    cdef bint forward = (op == RADIX_FIRST or op == RADIX_GE or op == RADIX_GT
                         or op == RADIX_EQ)
    cdef bint strict = op == RADIX_GT or op == RADIX_LT, found
    cdef void* node = t.root
    cdef bint is_inner = t.root_is_inner
    cdef RadixInner* n
    cdef RadixChild* ch
    cdef RadixBucket* b
    cdef uint32_t pos
    cdef int c
    it.height = 0
    it.positioned = 0
    if node == NULL:
        return 0
    if op == RADIX_FIRST or op == RADIX_LAST:
        return _iter_edge(it, node, is_inner, forward)
    while is_inner:
        n = <RadixInner*>node
        c = memcmp(key, _prefix(n), n.depth)
        if c != 0:
            # The whole subtree lies after (c < 0) or before (c > 0) the key.
            if op == RADIX_EQ:
                return 0
            if (c < 0) == forward:
                return _iter_edge(it, n, 1, forward)
            return _iter_leave(it, forward)
        it.path[it.height].node = n
        it.path[it.height].idx = _slot(n, key[n.depth])
        ch = &_children(n)[it.path[it.height].idx]
        _prefetch_child(t, ch)
        it.height += 1
        node = ch.ptr
        is_inner = ch.is_inner
    b = <RadixBucket*>node
    _prefetch_bucket(t, b, it.path[it.height - 1].node if it.height else NULL,
                     it.path[it.height - 1].idx if it.height else 0, key, FOR_FIND)
    pos = _bucket_find(t, b, key, &found)
    if found and not strict:
        return _iter_at(it, b, pos)
    if op == RADIX_EQ:
        return 0
    if forward:
        pos += found
        if pos < b.count:
            return _iter_at(it, b, pos)
    elif pos > 0:
        return _iter_at(it, b, pos - 1)
    return _iter_leave(it, forward)


cdef int _step(RadixIter* it, bint forward) noexcept:
    cdef uint8_t last[RADIX_MAX_KEY]
    if not it.positioned:
        return 0
    if it.version != it.tree.version:
        memcpy(last, it.key, it.tree.key_len)
        return _seek(it, RADIX_GT if forward else RADIX_LT, last)
    if forward:
        if it.idx + 1 < it.bucket.count:
            return _iter_at(it, it.bucket, it.idx + 1)
    elif it.idx > 0:
        return _iter_at(it, it.bucket, it.idx - 1)
    return _iter_leave(it, forward)


cdef void radix_iter_init(RadixIter* it, RadixTree* tree) noexcept:
    it.tree = tree
    it.value = NULL
    it.bucket = NULL
    it.height = 0
    it.positioned = 0


cdef int radix_seek(RadixIter* it, RadixSeekOp op, const uint8_t* key) except -1:
    return _seek(it, op, key)


cdef int radix_next(RadixIter* it) except -1:
    return _step(it, 1)


cdef int radix_prev(RadixIter* it) except -1:
    return _step(it, 0)


# ---- for tests ----

def treat_all_trees_as_big(bint on):
    """For tests: search every bucket by interpolation and prefetch in every tree (not
    only in big ones), so that small trees exercise those paths. Returns the old
    setting."""
    global _all_big
    cdef bint old = _all_big
    _all_big = on
    return old

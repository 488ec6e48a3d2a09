"""The sorted-set value in C memory (see sorted_set.pxd for the contract).

A small set is one listpack of member, score pairs kept in (score, member) order; it
becomes a skiplist plus a hash table (member -> node) when it would grow past
zset-max-listpack-entries or take a member longer than zset-max-listpack-value, and
stays one. The skiplist is Redis's design (levels drawn with probability 1/4, up to
32, each forward link counting the nodes it steps over), so a rank, the node at a rank
and the bounds of a score or lex range cost O(log n).

-0: a listpack writes a score as text and 0 packs as the integer 0, so a listpack set
never holds -0; a skiplist keeps the double as given, and a score equal to the old one
(0 and -0 alike) leaves the old one in place. OBJECT ENCODING and replies follow.
"""
from cpython.bytes cimport PyBytes_FromStringAndSize
from libc.stdint cimport int64_t, uint32_t, uint64_t
from libc.stdio cimport snprintf
from libc.stdlib cimport strtod
from libc.string cimport memcmp, memcpy, memset
from libc.math cimport isnan

from engine.core.encoding_limits cimport EncodingLimits, DEFAULT_LIMITS
from engine.core.hashtable cimport (
    ht_bytes, ht_delete, ht_find, ht_free, ht_new, ht_random_u64, ht_set)
from engine.core.listpack cimport (
    LpEntry, lp_bytes, lp_copy, lp_count, lp_delete, lp_end, lp_find, lp_first, lp_free,
    lp_get, lp_insert, lp_last, lp_new, lp_next, lp_prev, lp_seek, lp_string, lp_text_bytes)
from engine.core.members cimport MemberFn
from engine.core.memory cimport mem_alloc, mem_free

cdef extern from "<malloc.h>":
    size_t malloc_usable_size(void* ptr) nogil

OBJECT_OVERHEAD = 48          # the value object itself (its C data is counted apart)
# A listpack never grows past 1 GiB whatever the limits say (a skiplist takes over),
# as Redis's lpSafeToAdd; a pair costs its member plus at most this much.
cdef size_t LISTPACK_SAFE_BYTES = 1 << 30
cdef size_t PAIR_OVERHEAD = 48


cdef bytes score_text(double score):
    """A score as %.17g text (`inf`/`-inf`): Redis 7.0's RESP2 double and ZSCAN reply."""
    cdef char buf[32]
    cdef int n = snprintf(buf, sizeof(buf), "%.17g", score)
    return buf[:n]


def format_score(double score) -> bytes:
    """A score as the shortest text that parses back to the same double (what ZADD
    needs to recreate it exactly): `inf`/`-inf` for the infinities."""
    return repr(score).encode()


cdef inline int _cmp(const unsigned char* a, size_t an, const unsigned char* b,
                     size_t bn) noexcept:
    """Byte-wise order of two strings (memcmp, then the shorter first)."""
    cdef int c = memcmp(a, b, an if an < bn else bn)
    if c:
        return c
    return (an > bn) - (an < bn)


cdef inline bint _above_min(const unsigned char* s, size_t n, const ZLexBound* b) noexcept:
    """s is at or above the lower end b (zslLexValueGteMin)."""
    if b.kind:
        return b.kind < 0
    cdef int c = _cmp(s, n, b.s, b.n)
    return c > 0 if b.exclusive else c >= 0


cdef inline bint _below_max(const unsigned char* s, size_t n, const ZLexBound* b) noexcept:
    """s is at or below the upper end b (zslLexValueLteMax)."""
    if b.kind:
        return b.kind > 0
    cdef int c = _cmp(s, n, b.s, b.n)
    return c < 0 if b.exclusive else c <= 0


# -- listpack pairs ------------------------------------------------------------------------

cdef inline int _write_score(double score, char* buf) noexcept:
    """score's text for a listpack (an integral one packs as an integer there)."""
    return snprintf(buf, 32, "%.17g", score)


cdef double _lp_score(const unsigned char* lp, size_t off) noexcept:
    cdef LpEntry e
    cdef char buf[40]
    cdef size_t n
    lp_get(lp, off, &e)
    if e.s == NULL:
        return <double>e.ival
    n = e.slen if e.slen < 39 else 39
    memcpy(buf, e.s, n)
    buf[n] = 0
    return strtod(buf, NULL)


cdef inline const unsigned char* _lp_member(const unsigned char* lp, size_t off, LpEntry* e,
                                            uint32_t* n) noexcept:
    lp_get(lp, off, e)
    return lp_string(e, n)


cdef inline bint _lp_after(const unsigned char* lp, size_t off, double score,
                           const unsigned char* s, size_t n) noexcept:
    """The pair at off (its member) sorts after (score, s)."""
    cdef double have = _lp_score(lp, lp_next(lp, off))
    cdef LpEntry e
    cdef uint32_t mn
    cdef const unsigned char* m
    if have != score:
        return have > score
    m = _lp_member(lp, off, &e, &mn)
    return _cmp(m, mn, s, n) > 0


cdef int _lp_insert_pair(unsigned char** lpp, const unsigned char* s, size_t n,
                         double score) except -1:
    """Inserts (member, score) in order (the member is not there)."""
    cdef char buf[32]
    cdef int tn = _write_score(score, buf)
    cdef size_t off = lp_first(lpp[0]), nxt
    while off and not _lp_after(lpp[0], off, score, s, n):
        off = lp_next(lpp[0], lp_next(lpp[0], off))
    if off == 0:
        off = lp_end(lpp[0])
    lp_insert(lpp, off, s, n)
    nxt = lp_next(lpp[0], off)
    lp_insert(lpp, nxt if nxt else lp_end(lpp[0]), <const unsigned char*>buf, tn)
    return 0


cdef inline size_t _lp_pair(const unsigned char* lp, int64_t rank) noexcept:
    """The member entry of the pair at rank."""
    return lp_seek(lp, <long>(2 * rank))


# -- the skiplist ----------------------------------------------------------------------------

cdef inline const unsigned char* _key(const HEntry* e) noexcept:
    """A node's member: its entry's key (a table with values: the header, then the key)."""
    return (<const unsigned char*>e) + sizeof(HEntry)


cdef inline bint _node_before(const ZNode* x, double score, const unsigned char* s,
                              size_t n) noexcept:
    """Node x sorts before (score, s)."""
    return x.score < score or (x.score == score and _cmp(_key(x.entry), x.entry.klen, s, n) < 0)


cdef ZNode* _node_new(ZSkiplist* zsl, int level, double score, HEntry* entry) except NULL:
    cdef ZNode* x = <ZNode*>mem_alloc(sizeof(ZNode) + (level - 1) * sizeof(ZLevel))
    x.score = score
    x.entry = entry
    x.backward = NULL
    zsl.node_bytes += malloc_usable_size(x)
    return x


cdef void _node_free(ZSkiplist* zsl, ZNode* x) noexcept:
    zsl.node_bytes -= malloc_usable_size(x)
    mem_free(x)


cdef ZSkiplist* zsl_new() except NULL:
    cdef ZSkiplist* zsl = <ZSkiplist*>mem_alloc(sizeof(ZSkiplist))
    cdef int j
    memset(zsl, 0, sizeof(ZSkiplist))
    zsl.level = 1
    zsl.header = _node_new(zsl, ZSL_MAX_LEVEL, 0, NULL)
    for j in range(ZSL_MAX_LEVEL):
        zsl.header.level[j].forward = NULL
        zsl.header.level[j].span = 0
    return zsl


cdef void zsl_free(ZSkiplist* zsl) noexcept:
    cdef ZNode* x = zsl.header.level[0].forward
    cdef ZNode* nxt
    while x != NULL:
        nxt = x.level[0].forward
        mem_free(x)
        x = nxt
    mem_free(zsl.header)
    mem_free(zsl)


cdef inline int _random_level() noexcept:
    """1 + the number of successes at probability 1/4, capped."""
    cdef int level = 1
    cdef uint64_t r = ht_random_u64()
    while (r & 3) == 0 and level < ZSL_MAX_LEVEL:
        level += 1
        r >>= 2
    return level


cdef ZNode* zsl_insert(ZSkiplist* zsl, double score, HEntry* entry) except NULL:
    """Links a new node for (score, entry's member), which is not in the list."""
    cdef ZNode* update[ZSL_MAX_LEVEL]
    cdef uint64_t rank[ZSL_MAX_LEVEL]
    cdef ZNode* x = zsl.header
    cdef const unsigned char* s = _key(entry)
    cdef size_t n = entry.klen
    cdef int i, level
    for i in range(zsl.level - 1, -1, -1):
        rank[i] = 0 if i == zsl.level - 1 else rank[i + 1]
        while x.level[i].forward != NULL and _node_before(x.level[i].forward, score, s, n):
            rank[i] += x.level[i].span
            x = x.level[i].forward
        update[i] = x
    level = _random_level()
    if level > zsl.level:
        for i in range(zsl.level, level):
            rank[i] = 0
            update[i] = zsl.header
            update[i].level[i].span = zsl.length
        zsl.level = level
    x = _node_new(zsl, level, score, entry)
    for i in range(level):
        x.level[i].forward = update[i].level[i].forward
        update[i].level[i].forward = x
        x.level[i].span = update[i].level[i].span - (rank[0] - rank[i])
        update[i].level[i].span = (rank[0] - rank[i]) + 1
    for i in range(level, zsl.level):
        update[i].level[i].span += 1
    x.backward = NULL if update[0] == zsl.header else update[0]
    if x.level[0].forward != NULL:
        x.level[0].forward.backward = x
    else:
        zsl.tail = x
    zsl.length += 1
    return x


cdef void _unlink(ZSkiplist* zsl, ZNode* x, ZNode** update) noexcept:
    cdef int i
    for i in range(zsl.level):
        if update[i].level[i].forward == x:
            update[i].level[i].span += x.level[i].span - 1
            update[i].level[i].forward = x.level[i].forward
        else:
            update[i].level[i].span -= 1
    if x.level[0].forward != NULL:
        x.level[0].forward.backward = x.backward
    else:
        zsl.tail = x.backward
    while zsl.level > 1 and zsl.header.level[zsl.level - 1].forward == NULL:
        zsl.level -= 1
    zsl.length -= 1


cdef void zsl_delete(ZSkiplist* zsl, ZNode* node) noexcept:
    """Unlinks and frees node (its entry stays: the caller deletes it)."""
    cdef ZNode* update[ZSL_MAX_LEVEL]
    cdef ZNode* x = zsl.header
    cdef const unsigned char* s = _key(node.entry)
    cdef size_t n = node.entry.klen
    cdef int i
    for i in range(zsl.level - 1, -1, -1):
        while x.level[i].forward != NULL and _node_before(x.level[i].forward, node.score, s, n):
            x = x.level[i].forward
        update[i] = x
    _unlink(zsl, node, update)
    _node_free(zsl, node)


cdef uint64_t zsl_rank(ZSkiplist* zsl, const ZNode* node) noexcept:
    """node's 1-based rank."""
    cdef ZNode* x = zsl.header
    cdef uint64_t rank = 0
    cdef int i
    cdef const unsigned char* s = _key(node.entry)
    cdef size_t n = node.entry.klen
    for i in range(zsl.level - 1, -1, -1):
        while x.level[i].forward != NULL and (
                x.level[i].forward == node
                or _node_before(x.level[i].forward, node.score, s, n)):
            rank += x.level[i].span
            x = x.level[i].forward
            if x == node:
                return rank
    return 0


cdef ZNode* zsl_at(ZSkiplist* zsl, uint64_t rank) noexcept:
    """The node of 1-based rank (NULL when out of range)."""
    cdef ZNode* x = zsl.header
    cdef uint64_t traversed = 0
    cdef int i
    for i in range(zsl.level - 1, -1, -1):
        while x.level[i].forward != NULL and traversed + x.level[i].span <= rank:
            traversed += x.level[i].span
            x = x.level[i].forward
        if traversed == rank:
            return x if x != zsl.header else NULL
    return NULL


cdef uint64_t zsl_count_scores(ZSkiplist* zsl, double bound, bint or_equal) noexcept:
    """The nodes whose score is below bound (or equal to it, when or_equal)."""
    cdef ZNode* x = zsl.header
    cdef uint64_t count = 0
    cdef int i
    for i in range(zsl.level - 1, -1, -1):
        while x.level[i].forward != NULL and (
                x.level[i].forward.score < bound
                or (or_equal and x.level[i].forward.score == bound)):
            count += x.level[i].span
            x = x.level[i].forward
    return count


cdef uint64_t zsl_count_lex(ZSkiplist* zsl, const ZLexBound* b, bint low) noexcept:
    """The leading nodes whose member is not above the lower end b (low), or is below
    the upper end b (not low): a bisection, as Redis searches a skiplist."""
    cdef ZNode* x = zsl.header
    cdef ZNode* f
    cdef uint64_t count = 0
    cdef int i
    for i in range(zsl.level - 1, -1, -1):
        while True:
            f = x.level[i].forward
            if f == NULL:
                break
            if low:
                if _above_min(_key(f.entry), f.entry.klen, b):
                    break
            elif not _below_max(_key(f.entry), f.entry.klen, b):
                break
            count += x.level[i].span
            x = f
    return count


# -- the value -----------------------------------------------------------------------------

cdef inline ZNode* _node_of(const HEntry* e) noexcept:
    cdef ZNode* node
    memcpy(&node, (<const unsigned char*>e) + sizeof(HEntry) + e.klen, sizeof(ZNode*))
    return node


cdef inline void _set_node(HEntry* e, ZNode* node) noexcept:
    memcpy((<unsigned char*>e) + sizeof(HEntry) + e.klen, &node, sizeof(ZNode*))


cdef class SortedSetValue:
    """Members with double scores, ordered by (score, member) (see the module docstring).
    `SortedSetValue(size_hint, longest_hint, limits)` is an empty set, created as Redis's
    zsetTypeCreate creates one for that many members about to come."""

    TYPE_NAME = b"zset"

    def __cinit__(self):
        self.lp = lp_new()

    def __init__(self, int64_t size_hint=0, int64_t longest_hint=0, EncodingLimits limits=None):
        if limits is None:
            limits = DEFAULT_LIMITS
        if (limits.zset_max_listpack_entries == 0 or size_hint > limits.zset_max_listpack_entries
                or longest_hint > limits.zset_max_listpack_value):
            self.convert()

    def __dealloc__(self):
        if self.lp != NULL:
            lp_free(self.lp)
        if self.zsl != NULL:
            ht_free(self.zsl.members)
            zsl_free(self.zsl)

    # the C paths

    cdef int64_t size(self) noexcept:
        if self.lp != NULL:
            return lp_count(self.lp) // 2
        return <int64_t>self.zsl.length

    cdef int convert(self) except -1:
        """Moves the pairs of the listpack into a skiplist and its hash table."""
        cdef ZSkiplist* zsl = zsl_new()
        cdef HTable* table
        cdef size_t off
        cdef LpEntry le
        cdef uint32_t n
        cdef const unsigned char* s
        try:
            table = ht_new(True)
        except MemoryError:
            zsl_free(zsl)
            raise
        zsl.members = table
        self.zsl = zsl
        off = lp_first(self.lp)
        while off:
            s = _lp_member(self.lp, off, &le, &n)
            self.index_new(s, n, _lp_score(self.lp, lp_next(self.lp, off)))
            off = lp_next(self.lp, lp_next(self.lp, off))
        lp_free(self.lp)
        self.lp = NULL
        return 0

    cdef int index_new(self, const unsigned char* s, size_t n, double score) except -1:
        """Links a member that is not there into the hash table and the skiplist."""
        cdef ZNode* node = NULL
        cdef HEntry* e
        ht_set(self.zsl.members, s, n, <const unsigned char*>&node, sizeof(ZNode*))
        e = ht_find(self.zsl.members, s, n)
        _set_node(e, zsl_insert(self.zsl, score, e))
        return 0

    cdef bint get_score(self, const unsigned char* s, size_t n, double* out) noexcept:
        cdef size_t off
        cdef HEntry* e
        if self.lp != NULL:
            off = lp_find(self.lp, lp_first(self.lp), s, n, 1)
            if off:
                out[0] = _lp_score(self.lp, lp_next(self.lp, off))
            return off != 0
        e = ht_find(self.zsl.members, s, n)
        if e != NULL:
            out[0] = _node_of(e).score
        return e != NULL

    cdef int set_score(self, const unsigned char* s, size_t n, double score,
                       EncodingLimits limits) except -1:
        """Sets member s's score, adding it when new (1; else 0). A set about to
        outgrow the listpack limits becomes a skiplist first, as in Redis."""
        cdef size_t off
        cdef HEntry* e
        cdef ZNode* x
        if self.lp != NULL:
            off = lp_find(self.lp, lp_first(self.lp), s, n, 1)
            if off:
                if _lp_score(self.lp, lp_next(self.lp, off)) == score:
                    return 0
                lp_delete(&self.lp, off, 2)
                _lp_insert_pair(&self.lp, s, n, score + 0.0)
                return 0
            if (<int64_t>(lp_count(self.lp) // 2) < limits.zset_max_listpack_entries
                    and <int64_t>n <= limits.zset_max_listpack_value
                    and lp_bytes(self.lp) + n + PAIR_OVERHEAD <= LISTPACK_SAFE_BYTES):
                _lp_insert_pair(&self.lp, s, n, score + 0.0)
                self.nbytes += n
                return 1
            self.convert()
        e = ht_find(self.zsl.members, s, n)
        if e != NULL:
            x = _node_of(e)
            if x.score == score:        # (0 and -0 too: the old one stays)
                return 0
            # Still in place between its neighbours: only the score changes.
            if ((x.backward == NULL or _node_before(x.backward, score, s, n))
                    and (x.level[0].forward == NULL
                         or not _node_before(x.level[0].forward, score, s, n))):
                x.score = score
                return 0
            zsl_delete(self.zsl, x)
            _set_node(e, zsl_insert(self.zsl, score, e))
            return 0
        self.index_new(s, n, score)
        self.nbytes += n
        return 1

    cdef bint delete(self, const unsigned char* s, size_t n) except -1:
        cdef size_t off
        cdef HEntry* e
        if self.lp != NULL:
            off = lp_find(self.lp, lp_first(self.lp), s, n, 1)
            if off == 0:
                return False
            lp_delete(&self.lp, off, 2)
        else:
            e = ht_find(self.zsl.members, s, n)
            if e == NULL:
                return False
            zsl_delete(self.zsl, _node_of(e))
            ht_delete(self.zsl.members, s, n)
        self.nbytes -= n
        return True

    cdef int64_t rank_of(self, const unsigned char* s, size_t n) noexcept:
        """s's 0-based rank by ascending score; -1 when absent."""
        cdef size_t off, at
        cdef int64_t rank = 0
        cdef HEntry* e
        if self.lp != NULL:
            at = lp_find(self.lp, lp_first(self.lp), s, n, 1)
            if at == 0:
                return -1
            off = lp_first(self.lp)
            while off != at:
                rank += 1
                off = lp_next(self.lp, lp_next(self.lp, off))
            return rank
        e = ht_find(self.zsl.members, s, n)
        if e == NULL:
            return -1
        return <int64_t>zsl_rank(self.zsl, _node_of(e)) - 1

    cdef double score_at(self, int64_t rank) noexcept:
        if self.lp != NULL:
            return _lp_score(self.lp, lp_next(self.lp, _lp_pair(self.lp, rank)))
        return zsl_at(self.zsl, rank + 1).score

    cdef bytes member_at(self, int64_t rank):
        cdef ZNode* x
        cdef LpEntry e
        cdef uint32_t n
        cdef const unsigned char* s
        if self.lp != NULL:
            s = _lp_member(self.lp, _lp_pair(self.lp, rank), &e, &n)
            return PyBytes_FromStringAndSize(<const char*>s, n)
        x = zsl_at(self.zsl, rank + 1)
        return PyBytes_FromStringAndSize(<const char*>_key(x.entry), x.entry.klen)

    cdef list range_pairs(self, int64_t start, int64_t stop, bint reverse):
        """The (score, member) pairs of ranks [start, stop), reversed on request."""
        cdef list out = []
        cdef int64_t count = stop - start, i
        cdef size_t off
        cdef LpEntry e
        cdef uint32_t n
        cdef const unsigned char* s
        cdef ZNode* x
        if count <= 0:
            return out
        if self.lp != NULL:
            off = _lp_pair(self.lp, stop - 1 if reverse else start)
            for i in range(count):
                s = _lp_member(self.lp, off, &e, &n)
                out.append((_lp_score(self.lp, lp_next(self.lp, off)),
                            PyBytes_FromStringAndSize(<const char*>s, n)))
                if reverse:
                    off = lp_prev(self.lp, off)
                    if off:
                        off = lp_prev(self.lp, off)
                else:
                    off = lp_next(self.lp, lp_next(self.lp, off))
            return out
        x = zsl_at(self.zsl, <uint64_t>(stop if reverse else start + 1))
        for i in range(count):
            out.append((x.score,
                        PyBytes_FromStringAndSize(<const char*>_key(x.entry), x.entry.klen)))
            x = x.backward if reverse else x.level[0].forward
        return out

    cdef void score_range(self, double low, bint low_ex, double high, bint high_ex,
                          int64_t* start, int64_t* stop) noexcept:
        """The ranks [start, stop) whose scores lie in the range."""
        cdef size_t off
        cdef double sc
        cdef int64_t first = 0, last = 0
        if self.lp != NULL:
            off = lp_first(self.lp)
            while off:
                sc = _lp_score(self.lp, lp_next(self.lp, off))
                if sc < low or (low_ex and sc == low):
                    first += 1
                if sc < high or (not high_ex and sc == high):
                    last += 1
                else:
                    break
                off = lp_next(self.lp, lp_next(self.lp, off))
        else:
            first = zsl_count_scores(self.zsl, low, low_ex)
            last = zsl_count_scores(self.zsl, high, not high_ex)
        start[0] = first
        stop[0] = last if last > first else first

    cdef int64_t lex_run(self, int64_t rank, bint back, const ZLexBound* b, bint low,
                         bint want, int64_t limit) noexcept:
        """How many members (up to limit) from rank on (towards the head when back) in
        a row are (want) or are not (not want) within the end b: at or above it when it
        is the lower end (low), at or below it when it is the upper one."""
        cdef int64_t count = 0
        cdef size_t off
        cdef LpEntry e
        cdef uint32_t n
        cdef const unsigned char* s
        cdef ZNode* x
        if self.lp != NULL:
            off = _lp_pair(self.lp, rank)
            while off and count < limit:
                s = _lp_member(self.lp, off, &e, &n)
                if (_above_min(s, n, b) if low else _below_max(s, n, b)) != want:
                    break
                count += 1
                if back:
                    off = lp_prev(self.lp, lp_prev(self.lp, off))
                else:
                    off = lp_next(self.lp, lp_next(self.lp, off))
            return count
        x = zsl_at(self.zsl, <uint64_t>(rank + 1))
        while x != NULL and count < limit:
            if (_above_min(_key(x.entry), x.entry.klen, b) if low
                    else _below_max(_key(x.entry), x.entry.klen, b)) != want:
                break
            count += 1
            x = x.backward if back else x.level[0].forward
        return count

    cdef void lex_range(self, const ZLexBound* low, const ZLexBound* high, bint reverse,
                        int64_t skip, int64_t* start, int64_t* stop) noexcept:
        """The ranks [start, stop) of the lex range from low to high.

        The lex commands expect equal scores; with mixed scores Redis's answer depends
        on how it walks, and this follows it: the near end (the far end when reversed)
        is found by a scan from the head (from the tail) of a listpack, by a search of
        a skiplist, and must lie within the far end; then `skip` members (LIMIT's
        offset) are stepped over unchecked and the range goes on while members stay
        within the far end. skip -1 (ZLEXCOUNT): a skiplist's far end is searched too."""
        cdef int64_t n = self.size(), a, b, pos
        cdef bint search_far = skip < 0 and self.lp == NULL
        start[0] = stop[0] = 0
        if (n == 0 or not self.lex_run(n - 1, True, low, True, True, 1)
                or not self.lex_run(0, False, high, False, True, 1)):
            return
        if skip < 0:
            skip = 0
        if reverse:
            if self.lp != NULL:
                b = n - self.lex_run(n - 1, True, high, False, False, n)
            else:
                b = zsl_count_lex(self.zsl, high, False)
            if b == 0 or not self.lex_run(b - 1, True, low, True, True, 1):
                return
            pos = b - 1 - skip
            start[0] = pos + 1 - (self.lex_run(pos, True, low, True, True, n) if pos >= 0 else 0)
            stop[0] = b
            return
        if self.lp != NULL:
            a = self.lex_run(0, False, low, True, False, n)
        else:
            a = zsl_count_lex(self.zsl, low, True)
        if a == n or not self.lex_run(a, False, high, False, True, 1):
            return
        if search_far:
            b = zsl_count_lex(self.zsl, high, False)
        else:
            pos = a + skip
            b = pos + self.lex_run(pos, False, high, False, True, n) if pos < n else n
        start[0] = a
        stop[0] = b if b > a else a

    cdef int64_t remove_ranks(self, int64_t start, int64_t stop) except -1:
        """Removes the members of ranks [start, stop); how many."""
        cdef int64_t count = stop - start, i
        cdef size_t off
        cdef ZNode* x
        cdef ZNode* nxt
        cdef HEntry* entry
        cdef LpEntry e
        cdef uint32_t n
        if count <= 0:
            return 0
        if self.lp != NULL:
            off = _lp_pair(self.lp, start)
            for i in range(count):
                _lp_member(self.lp, off, &e, &n)
                self.nbytes -= n
                off = lp_next(self.lp, lp_next(self.lp, off))
            lp_delete(&self.lp, _lp_pair(self.lp, start), <uint32_t>(2 * count))
            return count
        x = zsl_at(self.zsl, <uint64_t>(start + 1))
        for i in range(count):
            nxt = x.level[0].forward
            entry = x.entry
            self.nbytes -= entry.klen
            zsl_delete(self.zsl, x)
            ht_delete(self.zsl.members, _key(entry), entry.klen)    # frees the entry last
            x = nxt
        return count

    cdef int visit(self, MemberFn fn, void* ctx) except -1:
        cdef ZNode* x
        cdef const unsigned char* s
        cdef LpEntry e
        cdef uint32_t n
        cdef size_t off
        if self.lp != NULL:
            off = lp_first(self.lp)
            while off:
                s = _lp_member(self.lp, off, &e, &n)
                if fn(ctx, s, n, _lp_score(self.lp, lp_next(self.lp, off))):
                    return 0
                off = lp_next(self.lp, lp_next(self.lp, off))
            return 0
        x = self.zsl.header.level[0].forward
        while x != NULL and not fn(ctx, _key(x.entry), x.entry.klen, x.score):
            x = x.level[0].forward
        return 0

    # Python interface (other modules, tests)

    def __len__(self):
        return self.size()

    @property
    def big(self) -> bool:
        """Encoded as a skiplist."""
        return self.lp == NULL

    def encoding(self) -> bytes:
        return b"listpack" if self.lp != NULL else b"skiplist"

    def make_big(self) -> None:
        """Takes the skiplist encoding whatever its size (SORT does so, as Redis)."""
        if self.lp != NULL:
            self.convert()

    def footprint(self) -> int:
        """The object itself: its pairs live in counted C memory."""
        return OBJECT_OVERHEAD

    def memory_bytes(self) -> int:
        """Its C memory (MEMORY USAGE adds it to the footprint)."""
        if self.lp != NULL:
            return lp_bytes(self.lp)
        return sizeof(ZSkiplist) + self.zsl.node_bytes + ht_bytes(self.zsl.members)

    def add(self, bytes member, double score, EncodingLimits limits=None) -> bool:
        """Sets member's score (adding it when new); True when it is new."""
        if isnan(score):
            raise ValueError("a sorted-set score is never NaN")
        return self.set_score(member, len(member), score,
                              DEFAULT_LIMITS if limits is None else limits) == 1

    def discard(self, bytes member) -> bool:
        """Removes member; False when it was not there."""
        return self.delete(member, len(member))

    def score(self, bytes member):
        """member's score, None when absent."""
        cdef double out
        return out if self.get_score(member, len(member), &out) else None

    def rank(self, bytes member):
        """member's 0-based rank by ascending score, None when absent."""
        cdef int64_t r = self.rank_of(member, len(member))
        return None if r < 0 else r

    def at(self, int64_t rank) -> tuple:
        """The (score, member) pair at rank (0 <= rank < len)."""
        if rank < 0 or rank >= self.size():
            raise IndexError(rank)
        return self.score_at(rank), self.member_at(rank)

    def pairs(self, int64_t start, int64_t stop, bint reverse=False) -> list:
        """The (score, member) pairs of ranks start..stop-1 (clamped), reversed on request."""
        cdef int64_t n = self.size()
        start = max(start, 0)
        stop = min(stop, n)
        return self.range_pairs(start, stop, reverse)

    def pop(self, bint from_max) -> tuple:
        """Removes and returns the lowest (or highest) (member, score)."""
        cdef int64_t n = self.size()
        if n == 0:
            raise IndexError("pop from an empty sorted set")
        score, member = self.range_pairs(n - 1 if from_max else 0, n if from_max else 1,
                                         False)[0]
        self.delete(member, len(<bytes>member))
        return member, score

    def score_bounds(self, double low, bint low_ex, double high, bint high_ex) -> tuple:
        cdef int64_t start, stop
        self.score_range(low, low_ex, high, high_ex, &start, &stop)
        return start, stop

    def __iter__(self):
        return iter(self.range_pairs(0, self.size(), False))

    def copy(self) -> SortedSetValue:
        cdef SortedSetValue out = SortedSetValue.__new__(SortedSetValue)
        cdef ZNode* x
        out.nbytes = self.nbytes
        if self.lp != NULL:
            lp_free(out.lp)
            out.lp = NULL
            out.lp = lp_copy(self.lp)
            return out
        out.convert()
        x = self.zsl.header.level[0].forward
        while x != NULL:
            out.index_new(_key(x.entry), x.entry.klen, x.score)
            x = x.level[0].forward
        return out

    # persistence

    def to_record(self) -> list:
        """[member, score, member, score, ...] in ascending order."""
        out: list = []
        for score, member in self.range_pairs(0, self.size(), False):
            out.append(member)
            out.append(score)
        return out

    @classmethod
    def from_record(cls, list items, EncodingLimits limits=None) -> SortedSetValue:
        if len(items) % 2 or not items:
            raise ValueError("a sorted-set record holds member, score pairs")
        members = items[::2]
        for i in range(0, len(items), 2):
            member, score = items[i], items[i + 1]
            if type(member) is not bytes or type(score) is not float or isnan(score):
                raise ValueError("a sorted-set record pairs bytes members with float scores")
        cdef SortedSetValue value = cls(len(members), max(len(m) for m in members), limits)
        for i in range(0, len(items), 2):
            if not value.add(items[i], items[i + 1], limits):
                raise ValueError(f"member {items[i]!r} appears twice in a sorted-set record")
        return value

    @classmethod
    def from_pairs(cls, list pairs, EncodingLimits limits=None) -> SortedSetValue:
        """A set of the (score, member) pairs (distinct members), sized as Redis sizes a
        stored ZRANGESTORE/ZUNIONSTORE result."""
        cdef SortedSetValue value = cls(len(pairs), 0, limits)
        if limits is None:
            limits = DEFAULT_LIMITS
        for score, member in pairs:
            value.set_score(member, len(<bytes>member), score, limits)
        return value


cdef SortedSetValue new_zset(int64_t size_hint, int64_t longest_hint, EncodingLimits limits):
    return SortedSetValue(size_hint, longest_hint, limits)


cdef SortedSetValue zset_of_listpack(unsigned char* lp):
    cdef SortedSetValue out
    try:
        out = SortedSetValue.__new__(SortedSetValue)
    except MemoryError:
        lp_free(lp)
        raise
    lp_free(out.lp)
    out.lp = lp
    out.nbytes = lp_text_bytes(lp, 2)
    return out

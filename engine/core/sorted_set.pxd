# A sorted-set value in C memory, in the encoding Redis would have for the same history:
# a listpack of member, score pairs ordered by (score, member) while the set is small
# and its members short, then a skiplist with spans (ranks in O(log n)) beside a hash
# table from member to node; never back.
#
# Contract:
# - A skiplist node's member is its hash-table entry's key (stored once); the entry's
#   value is the node's address (8 bytes), rewritten when the node moves.
# - Scores are never NaN (the command layer refuses them). A listpack stores a score as
#   text (an integral one packs as an integer), so it keeps no -0; a skiplist does.
# - Ranks are 0-based; ranges are half-open [start, stop).
from libc.stdint cimport int64_t, uint64_t

from engine.core.encoding_limits cimport EncodingLimits
from engine.core.hashtable cimport HEntry, HTable
from engine.core.members cimport MemberFn

cdef enum:
    ZSL_MAX_LEVEL = 32

cdef struct ZNode

cdef struct ZLevel:
    ZNode* forward
    uint64_t span                    # nodes stepped over by following forward

cdef struct ZNode:
    double score
    HEntry* entry                    # the member (NULL in the header)
    ZNode* backward
    ZLevel level[1]                  # allocated to the node's height

cdef struct ZSkiplist:
    ZNode* header
    ZNode* tail
    uint64_t length
    int level
    size_t node_bytes                # allocated bytes of the nodes (header included)
    HTable* members                  # member -> node, beside the order

# One end of a lex range: kind -1 `-` (below all), 1 `+` (above all), 0 the text s[:n].
cdef struct ZLexBound:
    const unsigned char* s
    size_t n
    int kind
    bint exclusive

cdef class SortedSetValue:
    cdef unsigned char* lp           # small: member, score, ... (NULL when big)
    cdef ZSkiplist* zsl              # big: the order and the member -> node table
    cdef readonly int64_t nbytes     # the members' bytes

    cdef int64_t size(self) noexcept
    cdef int convert(self) except -1
    cdef int index_new(self, const unsigned char* s, size_t n, double score) except -1
    cdef int set_score(self, const unsigned char* s, size_t n, double score,
                       EncodingLimits limits) except -1
    cdef bint get_score(self, const unsigned char* s, size_t n, double* out) noexcept
    cdef bint delete(self, const unsigned char* s, size_t n) except -1
    cdef int64_t rank_of(self, const unsigned char* s, size_t n) noexcept
    cdef double score_at(self, int64_t rank) noexcept
    cdef bytes member_at(self, int64_t rank)
    cdef list range_pairs(self, int64_t start, int64_t stop, bint reverse)
    cdef void score_range(self, double low, bint low_ex, double high, bint high_ex,
                          int64_t* start, int64_t* stop) noexcept
    cdef int64_t lex_run(self, int64_t rank, bint back, const ZLexBound* b, bint low,
                         bint want, int64_t limit) noexcept
    cdef void lex_range(self, const ZLexBound* low, const ZLexBound* high, bint reverse,
                        int64_t skip, int64_t* start, int64_t* stop) noexcept
    cdef int64_t remove_ranks(self, int64_t start, int64_t stop) except -1
    # fn(ctx, member, n, score) for each member in (score, member) order, until it says stop.
    cdef int visit(self, MemberFn fn, void* ctx) except -1

# An empty set for `size_hint` members about to come, the longest `longest_hint` bytes
# (Redis's zsetTypeCreate: a skiplist from the start when they exceed the limits).
cdef SortedSetValue new_zset(int64_t size_hint, int64_t longest_hint, EncodingLimits limits)
cdef bytes score_text(double score)

# A listpack-encoded sorted set owning lp, a listpack of its member, score pairs in
# (score, member) order.
cdef SortedSetValue zset_of_listpack(unsigned char* lp)

# Unions, intersections and differences of sorted sets and sets, computed over the
# values' C memory (Redis's zunionInterDiffGenericCommand): no Python object per member.
#
# Contract:
# - `values` holds SortedSetValue, SetValue (each member scores 1) or None (no key);
#   the caller checked the types. `weights` holds one float per value (ignored by
#   OP_DIFF and intersection_size).
# - The values are only read: the result is a new set, even when a source is also
#   where the caller stores it.
from libc.stdint cimport int64_t

from engine.core.encoding_limits cimport EncodingLimits
from engine.core.sorted_set cimport SortedSetValue

cdef enum:
    OP_UNION = 0
    OP_INTER = 1
    OP_DIFF = 2

cdef enum:
    AGGREGATE_SUM = 0
    AGGREGATE_MIN = 1
    AGGREGATE_MAX = 2

# The combination as a new sorted set: a skiplist when `reply` (Redis answers ZUNION
# & co. from one, -0 scores kept), else encoded as Redis stores ZUNIONSTORE & co.'s
# result under `limits`.
cdef SortedSetValue combine_values(list values, list weights, int op, int how, bint reply,
                                   EncodingLimits limits)
# The size of the intersection, counting stopped at `limit` (0: no limit), ZINTERCARD.
cdef int64_t intersection_size(list values, int64_t limit) except -1
